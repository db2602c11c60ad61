"""Fixtures of the end-to-end tests: ``predmarket serve`` in a child process (helpers in
``service_process.py``), on SQLite by default and on a private PostgreSQL database when
``PREDMARKET_TEST_DATABASE_URL`` is set."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from service_process import TEST_DATABASE_ENV


@pytest.fixture
def database_args(
    empty_database: Callable[[], AbstractContextManager[str]],
) -> Iterator[list[str]]:
    """``--database-url`` of a private empty PostgreSQL database on PostgreSQL runs; nothing on
    SQLite runs, where ``serve`` keeps its default file in the data dir."""
    if not os.environ.get(TEST_DATABASE_ENV):
        yield []
        return
    with empty_database() as url:
        yield ["--database-url", url]


@pytest.fixture
def serve_args(tmp_path: Path, database_args: list[str]) -> list[str]:
    """Free ports for the API and the devnet, a fresh data dir, the test database."""
    return [
        "--port",
        "0",
        "--devnet-port",
        "0",
        "--data-dir",
        str(tmp_path / "data"),
        "--log-level",
        "warning",
        *database_args,
    ]
