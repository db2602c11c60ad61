"""Fixtures of the store tests: private empty databases and migrated ones.

The suite's ``database_url`` is one database shared by the session; migration tests need
databases of their own (empty, or migrated from empty), so these make them: a SQLite file under
the test's temp dir by default, a fresh PostgreSQL database (dropped afterwards) when
``PREDMARKET_TEST_DATABASE_URL`` is set — the same switch as the suite's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.store import migrate
from predmarket.store.engine import create_engine

TEST_DATABASE_ENV = "PREDMARKET_TEST_DATABASE_URL"

EmptyDatabase = Callable[[], AbstractContextManager[str]]


def _pg_admin(admin_url: str, statement: str) -> None:
    """Run one statement outside a transaction (CREATE/DROP DATABASE), from sync or async
    tests alike: in a thread of its own, so it never meets the test's event loop."""
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(admin_url, timeout=10)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, run()).result()


@contextmanager
def _empty_database(directory: Path) -> Iterator[str]:
    configured = os.environ.get(TEST_DATABASE_ENV)
    if not configured:
        yield f"sqlite:///{directory / f'empty_{secrets.token_hex(4)}.db'}"
        return
    base = make_url(configured)
    admin = base.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"predmarket_store_{os.getpid()}_{secrets.token_hex(4)}"
    _pg_admin(admin, f'CREATE DATABASE "{name}"')
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        _pg_admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def empty_database(tmp_path: Path) -> EmptyDatabase:
    """A factory of private empty databases: ``with empty_database() as url: ...``."""
    return lambda: _empty_database(tmp_path)


@pytest.fixture(scope="module")
def migrated_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private database migrated to head, shared by one test module."""
    with _empty_database(tmp_path_factory.mktemp("migrated")) as url:
        migrate.upgrade(url)
        yield url


@pytest.fixture
async def migrated_engine(migrated_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(migrated_url)
    try:
        yield engine
    finally:
        await engine.dispose()
