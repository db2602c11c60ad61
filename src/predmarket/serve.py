"""``predmarket serve``: from nothing to a running API in one process.

Start-up, in order (each step prints what it did):

1. **Database**: the SQLite file ``<data dir>/predmarket.db`` unless ``database_url`` says
   otherwise; migrations are applied (``store.migrate.migrate_command``). A database whose schema
   is ahead of this code is refused with its message and nothing is touched.
2. **Node**: without ``node_url``, the embedded devnet is opened on ``<data dir>/devnet`` and
   served from a thread of this process on ``devnet_port`` (22973, the Alephium devnet's port;
   when the default is taken, a free port instead, and the URL printed says which). The app's
   ``node_url`` points at it. With ``node_url`` the service uses that node and no devnet starts.
3. **Demo** (unless ``demo`` is off): on first start only, demo markets are created and traded
   through real devnet transactions (:mod:`predmarket.demo`). It needs the devnet's keys, so with
   an external node it runs only when ``<data dir>/devnet/devnet.json`` belongs to that node.
4. **API**: uvicorn on ``host:port`` — the app object itself with one worker, or with
   ``workers > 1`` (PostgreSQL only) uvicorn's multiprocess supervisor, each worker building the
   app from ``PREDMARKET_*`` variables this function exports. The indexer runs inside the app
   (its lifespan); the devnet stays in this, the supervising, process, so there is one node
   whatever the worker count.

The devnet is stopped (and its block log closed) after the API has shut down.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import uvicorn
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from predmarket import __version__, ratelimit
from predmarket.demo import seed as demo_seed
from predmarket.devnet.genesis import CONFIG_FILE
from predmarket.devnet.server import (
    DevnetOptions,
    DevnetServer,
    ForegroundServer,
    bind_socket,
    run_devnet_in_thread,
)
from predmarket.settings import Settings
from predmarket.store import migrate

#: The Alephium devnet's REST port; the embedded devnet takes it when it is free.
DEFAULT_DEVNET_PORT: Final = 22973
DEVNET_DIR: Final = "devnet"

Echo = Callable[[str], None]


class ServeError(Exception):
    """Start-up cannot go on; the message says why (the command exits with ``exit_code``)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Backend:
    """What start-up prepared: settings with the node URL filled in, the embedded devnet (when
    there is one), and what the database and demo steps did."""

    settings: Settings
    devnet: DevnetServer | None
    schema: str
    demo: str


def shown_url(url: str) -> str:
    """A database URL without its password, for printing."""
    return make_url(url).render_as_string(hide_password=True)


def prepare_database(settings: Settings) -> str:
    """Create the data dir for SQLite, apply migrations; the line to print."""
    url = settings.resolved_database_url()
    try:
        if make_url(url).get_backend_name() == "sqlite":
            database = make_url(url).database
            if database and database != ":memory:":
                Path(database).parent.mkdir(parents=True, exist_ok=True)
        return migrate.migrate_command(url)
    except migrate.SchemaAheadError as e:
        raise ServeError(f"refusing to start: {e}", exit_code=3) from None
    except (OSError, DBAPIError) as e:  # unreachable server, missing database, unwritable file
        reason = e.orig if isinstance(e, DBAPIError) else e
        raise ServeError(f"cannot open the database {shown_url(url)}: {reason}") from None


def start_devnet(directory: Path, port: int | None, host: str = "127.0.0.1") -> DevnetServer:
    """The embedded devnet on ``port`` (None: 22973, or any free port when that one is taken)."""
    try:
        return run_devnet_in_thread(
            DevnetOptions(directory), DEFAULT_DEVNET_PORT if port is None else port, host=host
        )
    except OSError as e:
        if port is None and e.errno == errno.EADDRINUSE:
            return run_devnet_in_thread(DevnetOptions(directory), 0, host=host)
        raise ServeError(f"cannot start the devnet on {host}:{port}: {e}") from None
    except ValueError as e:  # a data dir of another network id or group count
        raise ServeError(f"cannot open the devnet in {directory}: {e}", exit_code=2) from None


def seed_demo(node_url: str, devnet_dir: Path, *, embedded: bool, force: bool = False) -> str:
    """Run the first-start demo seeding; the line to print (never raises for a demo problem)."""
    if not embedded and not (devnet_dir / CONFIG_FILE).exists():
        return (
            f"skipped: the demo needs the devnet's keys ({devnet_dir / CONFIG_FILE}); "
            "an external node has none"
        )
    try:
        outcome = asyncio.run(demo_seed.seed_once(node_url, devnet_dir, force=force))
    except demo_seed.DemoError as e:
        return f"skipped: {e}"
    except Exception as e:  # a node error half-way: serve anyway, but say so
        return f"FAILED ({type(e).__name__}: {e}); the service runs without the full demo"
    if outcome.result is None:
        return f"not seeded: {outcome.skipped}"
    marker = demo_seed.marker_path(devnet_dir)
    return f"seeded {outcome.result.summary()} (wallet keys in {marker})"


@contextmanager
def backend(settings: Settings, *, devnet_port: int | None = None) -> Iterator[Backend]:
    """Steps 1-3 of start-up; the devnet (if any) runs until the block exits."""
    schema = prepare_database(settings)
    data_dir = settings.data_dir.resolve()
    devnet_dir = data_dir / DEVNET_DIR
    devnet: DevnetServer | None = None
    if settings.node_url is None:
        devnet = start_devnet(devnet_dir, devnet_port)
        settings = settings.model_copy(update={"node_url": devnet.url})
    assert settings.node_url is not None
    try:
        if settings.demo:
            demo = seed_demo(settings.node_url, devnet_dir, embedded=devnet is not None)
        else:
            demo = "off (--no-demo)"
        yield Backend(settings, devnet, schema, demo)
    finally:
        if devnet is not None:
            devnet.stop()


def export_environment(settings: Settings) -> None:
    """Put the top-level settings into ``PREDMARKET_*`` for worker processes to read."""
    values = {
        "DATA_DIR": str(settings.data_dir.resolve()),
        "DATABASE_URL": settings.resolved_database_url(),
        "NODE_URL": settings.node_url or "",
        "DEMO": "false",  # the supervisor seeded already
        "WORKERS": str(settings.workers),
        "PROFILE": settings.profile,
    }
    if settings.redis_url:
        values["REDIS_URL"] = settings.redis_url
    for name, value in values.items():
        os.environ[f"PREDMARKET_{name}"] = value


def banner(settings: Settings, api_url: str, prepared: Backend) -> list[str]:
    data_dir = settings.data_dir.resolve()
    if prepared.devnet is not None:
        devnet = (
            f"{prepared.devnet.url}  (embedded; devnet-only test keys in "
            f"{data_dir / DEVNET_DIR / CONFIG_FILE})"
        )
    else:
        devnet = f"{prepared.settings.node_url}  (external node)"
    workers = f", {settings.workers} workers" if settings.workers > 1 else ""
    return [
        f"predmarket {__version__} serving{workers}",
        f"  API        {api_url}  (OpenAPI: {api_url}/openapi.json, health: {api_url}/v1/health)",
        f"  node       {devnet}",
        f"  database   {shown_url(settings.resolved_database_url())}  ({prepared.schema})",
        f"  data dir   {data_dir}",
        f"  limits     {_limits_line(settings)}",
        f"  demo       {prepared.demo}",
    ]


def _limits_line(settings: Settings) -> str:
    limits = settings.limits
    where = (
        f"counted in Redis {shown_url(settings.redis_url)}"
        if settings.redis_url
        else "counted in each process"
    )
    return (
        f"{limits.anonymous_reads_per_minute}/{limits.anonymous_writes_per_minute} reads/writes "
        f"per {limits.window_seconds} s anonymous, {limits.session_reads_per_minute}/"
        f"{limits.session_writes_per_minute} signed in; {where}"
    )


def _api_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def serve(
    settings: Settings,
    *,
    devnet_port: int | None = None,
    log_level: str = "info",
    access_log: bool = False,
    echo: Echo = print,
) -> None:
    """Run the service in the foreground until SIGINT/SIGTERM; raises :class:`ServeError`."""
    try:
        ratelimit.check_redis(settings)
    except ratelimit.RateLimitStoreError as e:
        raise ServeError(str(e)) from None
    with backend(settings, devnet_port=devnet_port) as prepared:
        app_settings = prepared.settings
        try:
            sock = bind_socket(settings.host, settings.port)
        except OSError as e:
            raise ServeError(f"cannot listen on {settings.host}:{settings.port}: {e}") from None
        try:
            host, port = sock.getsockname()[:2]
            for line in banner(settings, _api_url(host, port), prepared):
                echo(line)
            if settings.workers > 1:
                export_environment(app_settings)
                config = uvicorn.Config(
                    "predmarket.app:create_app",
                    factory=True,
                    workers=settings.workers,
                    log_level=log_level,
                    access_log=access_log,
                    timeout_graceful_shutdown=10,
                    # X-Forwarded-For/-Proto are believed from the rate limiter's trusted proxies
                    # only (uvicorn's own default trusts loopback).
                    proxy_headers=bool(settings.limits.trusted_proxies),
                    forwarded_allow_ips=settings.limits.trusted_proxies or None,
                )
                from uvicorn.supervisors import Multiprocess

                Multiprocess(config, sockets=[sock]).run()
            else:
                from predmarket.app import create_app

                config = uvicorn.Config(
                    create_app(app_settings),
                    log_level=log_level,
                    access_log=access_log,
                    timeout_graceful_shutdown=10,
                    # X-Forwarded-For/-Proto are believed from the rate limiter's trusted proxies
                    # only (uvicorn's own default trusts loopback).
                    proxy_headers=bool(settings.limits.trusted_proxies),
                    forwarded_allow_ips=settings.limits.trusted_proxies or None,
                )
                server = ForegroundServer(config)
                server.run(sockets=[sock])
                if not server.started:
                    raise ServeError("the API did not start (see the log above)")
        finally:
            sock.close()
    echo("predmarket stopped")
