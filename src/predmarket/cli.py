"""The ``predmarket`` command."""

from __future__ import annotations

import platform

import typer

from predmarket import __version__

app = typer.Typer(
    help="predmarket: prediction-market trading service over on-chain binary markets.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
def version() -> None:
    """Print the version of predmarket and of the runtime."""
    typer.echo(f"predmarket {__version__} (Python {platform.python_version()})")


@app.callback()
def main() -> None:
    """predmarket command line."""
