"""Suite-wide fixtures.

Database tests run against SQLite by default (a fresh file per test session) and against
PostgreSQL when ``PREDMARKET_TEST_DATABASE_URL`` is set: a fresh database is created for the run
and dropped afterwards. An unreachable PostgreSQL is a failure, never a skip.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import httpx
import hypothesis
import pytest
from fastapi import FastAPI
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.app import create_app
from predmarket.settings import IndexerSettings, LimitSettings, Settings
from predmarket.store import migrate
from predmarket.store.engine import create_engine

TEST_DATABASE_ENV = "PREDMARKET_TEST_DATABASE_URL"

EmptyDatabase = Callable[[], AbstractContextManager[str]]

# CI shares two cores with other work: a slow example is not a failure. Tests that need more
# examples or other limits still say so with their own @settings, which inherit this profile.
hypothesis.settings.register_profile(
    "predmarket", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
)
hypothesis.settings.load_profile(os.environ.get("PREDMARKET_HYPOTHESIS_PROFILE", "predmarket"))


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


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of an empty database private to this test session."""
    configured = os.environ.get(TEST_DATABASE_ENV)
    if not configured:
        path: Path = tmp_path_factory.mktemp("db") / "test.db"
        yield f"sqlite:///{path}"
        return
    base = make_url(configured)
    if base.get_backend_name() not in ("postgresql", "postgres"):
        raise pytest.UsageError(f"{TEST_DATABASE_ENV} must be a postgresql:// URL")
    name = f"predmarket_test_{os.getpid()}_{secrets.token_hex(4)}"
    admin = base.set(drivername="postgresql").render_as_string(hide_password=False)
    _pg_admin(admin, f'CREATE DATABASE "{name}"')
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        _pg_admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    eng = create_engine(database_url)
    try:
        yield eng
    finally:
        await eng.dispose()


# -- the API app ---------------------------------------------------------------------------------

TEST_SECRET = "test-secret-not-for-production-0123456789"

#: Budgets no functional test reaches; rate-limit tests set their own (tests/*/ratelimit/).
HIGH_LIMITS = LimitSettings(
    anonymous_reads_per_minute=1_000_000,
    anonymous_writes_per_minute=1_000_000,
    session_reads_per_minute=1_000_000,
    session_writes_per_minute=1_000_000,
    elevated_reads_per_minute=1_000_000,
    elevated_writes_per_minute=1_000_000,
    developer_reads_per_minute=1_000_000,
    developer_writes_per_minute=1_000_000,
    stream_connections_per_minute=1_000_000,
)


@pytest.fixture
def app_settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings of an app on the test database, with a data dir of its own."""
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        node_url="http://127.0.0.1:9",  # nothing listens there: no test reaches a real node
        demo=False,
        indexer=IndexerSettings(enabled=False),  # tests that index start their own
        secret_key=TEST_SECRET,
        limits=HIGH_LIMITS,
    )


@pytest.fixture
def app(app_settings: Settings) -> FastAPI:
    """A fresh app; tests may include extra (test-only) routers before the first request."""
    return create_app(app_settings)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An in-process client of ``app`` with its lifespan run around the test."""
    async with app.router.lifespan_context(app):
        # raise_app_exceptions=False: a 500 is asserted on as a response, like a real client.
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c
