"""The ``predmarket`` command."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from predmarket import __version__

if TYPE_CHECKING:
    from predmarket.settings import Settings

app = typer.Typer(
    help="predmarket: prediction-market trading service over on-chain binary markets.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
def version() -> None:
    """Print the version of predmarket and of the runtime."""
    typer.echo(f"predmarket {__version__} (Python {platform.python_version()})")


@app.command()
def devnet(
    port: Annotated[int, typer.Option(help="REST port (the Alephium devnet's is 22973)")] = 22973,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="where the chain lives (default: devnet/ in PREDMARKET_DATA_DIR, itself ./data)"
        ),
    ] = None,
    network_id: Annotated[int, typer.Option(min=0, max=255, help="network id byte")] = 4,
    groups: Annotated[int, typer.Option(min=1, max=4, help="number of address groups")] = 4,
    block_interval: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="seconds between blocks; without it every submitted tx is mined at once",
        ),
    ] = None,
    faucet_cooldown: Annotated[
        float | None,
        typer.Option(min=0, help="seconds between faucet requests per address (default: 60)"),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
) -> None:
    """Run the embedded devnet: an Alephium-compatible node with the protocol's contracts."""
    # Imported here so `predmarket version` does not load the web stack.
    import uvicorn

    from predmarket.devnet.genesis import CONFIG_FILE
    from predmarket.devnet.http import create_devnet_app
    from predmarket.devnet.node import DevnetNode
    from predmarket.devnet.server import ForegroundServer, bind_socket
    from predmarket.settings import Settings

    try:
        directory = data_dir if data_dir is not None else Settings().data_dir / "devnet"
        node = DevnetNode.open(
            directory,
            network_id=network_id,
            groups=groups,
            automine=block_interval is None,
            faucet_cooldown_ms=None if faucet_cooldown is None else round(faucet_cooldown * 1000),
        )
    except ValueError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        try:
            sock = bind_socket(host, port)
        except OSError as e:
            typer.echo(f"error: cannot listen on {host}:{port}: {e}", err=True)
            raise typer.Exit(1) from None
        bound_host, bound_port = sock.getsockname()[:2]
        shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
        config = node.config
        mining = "automine" if block_interval is None else f"a block every {block_interval} s"
        for line in (
            f"predmarket devnet listening on http://{shown_host}:{bound_port}",
            f"  network id {config.network_id}, {config.groups} groups, {mining}",
            f"  collateral token  {config.collateral_token_address}"
            f" (token id {config.collateral_token_id.hex()})",
            f"  market registry   {config.registry_address}",
            f"  operator          {config.operator_address}",
            f"  faucet            {config.faucet_address}"
            f" ({config.faucet_cooldown_ms / 1000:g} s between requests per address)",
            f"  data dir          {directory} (test keys in {directory / CONFIG_FILE})",
        ):
            typer.echo(line)
        server = ForegroundServer(
            uvicorn.Config(
                create_devnet_app(node, mine_interval_s=block_interval),
                log_level=log_level,
                access_log=False,
                # Longer than clients' idle keep-alive (node's fetch: 4 s), so a client never
                # sends on a connection the server is closing.
                timeout_keep_alive=30,
                timeout_graceful_shutdown=5,
            )
        )
        # SIGINT/SIGTERM stop accepting, let in-flight requests finish, then return here so the
        # node is closed below.
        server.run(sockets=[sock])
        sock.close()
    finally:
        node.close()
    typer.echo("predmarket devnet stopped")


def _settings(**overrides: object) -> Settings:
    """Settings from ``PREDMARKET_*`` with the options given on the command line on top."""
    from pydantic import ValidationError

    from predmarket.settings import Settings

    given = {name: value for name, value in overrides.items() if value is not None}
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValidationError as e:
        for error in e.errors():
            where = ".".join(str(part) for part in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            typer.echo(f"error: {where + ': ' if where else ''}{message}", err=True)
        raise typer.Exit(2) from None


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="address the API listens on [env PREDMARKET_HOST; 127.0.0.1]")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(min=0, max=65535, help="API port, 0 for any free one [PREDMARKET_PORT; 8787]"),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="where the SQLite file and the devnet live [PREDMARKET_DATA_DIR; ./data]"
        ),
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            help="sqlite:///FILE or postgresql://… [PREDMARKET_DATABASE_URL; "
            "SQLite in the data dir]"
        ),
    ] = None,
    node_url: Annotated[
        str | None,
        typer.Option(
            help="use this node's REST API instead of starting the embedded devnet "
            "[PREDMARKET_NODE_URL]"
        ),
    ] = None,
    demo: Annotated[
        bool | None,
        typer.Option(
            "--demo/--no-demo", help="seed demo markets on first start [PREDMARKET_DEMO; on]"
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="API worker processes, PostgreSQL only [PREDMARKET_WORKERS; 1]"),
    ] = None,
    devnet_port: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=65535,
            help="port of the embedded devnet [default: 22973, or a free port when it is taken]",
        ),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(
            help="redis://… holding the rate-limit counters, shared by all workers "
            "[PREDMARKET_REDIS_URL; counted in each process]"
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    access_log: Annotated[bool, typer.Option(help="log every request")] = False,
) -> None:
    """Run the service: database, embedded devnet, indexer, demo markets and the API."""
    from predmarket.serve import ServeError
    from predmarket.serve import serve as run
    from predmarket.settings import SettingsError

    settings = _settings(
        host=host,
        port=port,
        data_dir=data_dir,
        database_url=database_url,
        node_url=node_url,
        demo=demo,
        workers=workers,
        redis_url=redis_url,
    )
    try:
        run(
            settings,
            devnet_port=devnet_port,
            log_level=log_level,
            access_log=access_log,
            echo=typer.echo,
        )
    except (ServeError, SettingsError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(getattr(e, "exit_code", 2)) from None


@app.command()
def migrate(
    database_url: Annotated[
        str | None,
        typer.Option(
            help="sqlite:///FILE or postgresql://… [PREDMARKET_DATABASE_URL; "
            "SQLite in the data dir]"
        ),
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="data dir of the default SQLite file [./data]")
    ] = None,
) -> None:
    """Upgrade the database schema to this version's (refuses a schema that is ahead)."""
    from predmarket.serve import ServeError, prepare_database, shown_url

    settings = _settings(database_url=database_url, data_dir=data_dir)
    try:
        message = prepare_database(settings)
    except ServeError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(e.exit_code) from None
    typer.echo(f"{shown_url(settings.resolved_database_url())}: {message}")


@app.command(name="demo")
def demo_command(
    node_url: Annotated[
        str,
        typer.Option(help="the running devnet to seed (the one `predmarket serve` started)"),
    ] = "http://127.0.0.1:22973",
    devnet_dir: Annotated[
        Path | None,
        typer.Option(help="the devnet's data dir, for its operator key [DATA_DIR/devnet]"),
    ] = None,
    force: Annotated[
        bool, typer.Option(help="seed another set even if the demo was seeded before")
    ] = False,
) -> None:
    """Seed the demo markets now, on a running devnet, through real transactions."""
    from predmarket.serve import DEVNET_DIR, seed_demo

    directory = devnet_dir if devnet_dir is not None else _settings().data_dir / DEVNET_DIR
    typer.echo(f"demo: {seed_demo(node_url, directory, embedded=False, force=force)}")


@app.callback()
def main() -> None:
    """predmarket command line."""
