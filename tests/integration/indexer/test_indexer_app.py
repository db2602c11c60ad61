"""The service's lifecycle: the app's lifespan creates the node client, runs the indexer in the
background, reports both in readiness and stops them; on PostgreSQL one indexer per database."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from indexer_chain import Chain
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.app import create_app
from predmarket.exchange import Outcome
from predmarket.indexer import Indexer
from predmarket.node import NodeClient
from predmarket.settings import IndexerSettings, Settings
from predmarket.store.tables.order import order

pytestmark = pytest.mark.db


async def eventually(condition: Callable[[], object], timeout: float = 20.0) -> None:
    """Wait until ``condition()`` (a value or an awaitable) is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_the_app_runs_the_indexer_and_reports_it(
    chain: Chain, db: AsyncEngine, db_url: str, tmp_path: Path
) -> None:
    m = chain.create_market()
    w = chain.wallet()
    chain.buy(w, m, Outcome.YES, 420, 1)
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=db_url,
        node_url=chain.url,
        demo=False,
        secret_key="test-secret-not-for-production-0123456789",
        indexer=IndexerSettings(poll_interval_seconds=0.02),
    )
    app = create_app(settings)

    async def indexed() -> bool:
        async with db.connect() as conn:
            return await conn.scalar(select(func.count()).select_from(order)) == 1

    async with app.router.lifespan_context(app):
        indexer = app.state.indexer
        assert isinstance(indexer, Indexer) and indexer.running
        assert isinstance(app.state.node, NodeClient)
        await eventually(indexed)
        await eventually(lambda: indexer.last_success is not None)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            r = await client.get("/v1/health/ready")
        assert r.status_code == 200, r.text
        components = r.json()["components"]
        assert components["node"]["status"] == "up"
        assert components["indexer"]["status"] == "up"
        assert components["indexer"]["lagBlocks"] == 0
        assert components["indexer"]["lagSeconds"] < 5
    assert not indexer.running


async def test_without_a_node_url_there_is_no_client_and_no_indexer(
    db_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=db_url,
        demo=False,
        secret_key="test-secret-not-for-production-0123456789",
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        assert app.state.node is None and app.state.indexer is None
        assert set(app.state.health_checks) == {"database"}


async def test_one_indexer_per_postgresql_database(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    if db.dialect.name != "postgresql":
        pytest.skip("PostgreSQL only: with SQLite the indexer runs in the one process")
    first = Indexer(db, node, poll_interval_s=0.02, leader_retry_s=0.05)
    second = Indexer(db, node, poll_interval_s=0.02, leader_retry_s=0.05)
    first.start()
    await eventually(lambda: first.leader)
    second.start()
    try:
        chain.create_market()
        await eventually(lambda: first.events_applied == 1)
        await asyncio.sleep(0.2)
        assert not second.leader and second.events_applied == 0
        health = await second.health()
        assert (health.status, health.detail) == ("up", "indexed by another worker")

        await first.stop()  # the lock is released: the other worker takes over
        await eventually(lambda: second.leader)
        chain.create_market()
        await eventually(lambda: second.events_applied == 1)
    finally:
        await first.stop()
        await second.stop()
    health = await second.health()
    assert (health.status, health.detail) == ("down", "no indexer holds the database lock")


async def test_a_dead_node_makes_the_service_not_ready(client: httpx.AsyncClient) -> None:
    # The suite's app fixture points node_url at a port nothing listens on (indexer disabled).
    r = await client.get("/v1/health/ready")
    assert r.status_code == 503
    components = r.json()["components"]
    assert components["node"] == {"status": "down", "detail": "NodeUnavailable"}
    assert components["indexer"] == {"status": "unchecked"}
