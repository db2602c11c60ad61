"""Fixtures of the indexer tests: a real devnet over loopback HTTP and a private migrated
database (SQLite, or PostgreSQL with PREDMARKET_TEST_DATABASE_URL)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from indexer_chain import Chain, start_devnet
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.devnet.server import DevnetServer
from predmarket.node import NodeClient, RetryPolicy
from predmarket.store import migrate
from predmarket.store.engine import create_engine

pytestmark = pytest.mark.db

#: Quick retries: the tests that stop the node should not wait on the client's defaults.
FAST_RETRY = RetryPolicy(attempts=2, initial_backoff_s=0.01, max_backoff_s=0.02)


@pytest.fixture
def devnet(tmp_path: Path) -> Iterator[DevnetServer]:
    """An automining devnet on a free loopback port; faucet cooldown off."""
    server = start_devnet(tmp_path / "devnet")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def chain(devnet: DevnetServer) -> Chain:
    return Chain(devnet)


@pytest.fixture
async def node(devnet: DevnetServer) -> AsyncIterator[NodeClient]:
    async with NodeClient(devnet.url, retry=FAST_RETRY, timeout_s=10) as client:
        yield client


@pytest.fixture
def db_url(empty_database) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A private database at head."""
    with empty_database() as url:
        migrate.upgrade(url)
        yield url


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(db_url)
    try:
        yield engine
    finally:
        await engine.dispose()
