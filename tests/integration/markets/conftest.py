"""The market reads run against a migrated database (SQLite, or PostgreSQL with
``PREDMARKET_TEST_DATABASE_URL``) filled by the helpers of ``tests/helpers/markets.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import clear_read_model
from predmarket.settings import Settings


@pytest.fixture
def app_settings(app_settings: Settings, migrated_url: str) -> Settings:
    """The app on this module's migrated database."""
    return app_settings.model_copy(update={"database_url": migrated_url})


@pytest.fixture
async def seed(migrated_engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    """The migrated database, emptied: ``async with seed.begin() as conn: make_market(conn)``."""
    async with migrated_engine.begin() as conn:
        await clear_read_model(conn)
    yield migrated_engine


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app's in-process client; the in-memory market list is reloaded before each request.

    The helpers write read-model rows directly, without the outbox events the indexer writes
    with them, so the list cannot follow them; reloading it is what a restart would do, and the
    requests are then answered from memory as in production (``test_markets_cache*.py`` test
    the following of the outbox itself).
    """

    async def reload_market_list(request: httpx.Request) -> None:
        cache = app.state.markets_cache
        if cache is not None:
            await cache.reload()

    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://testserver",
            event_hooks={"request": [reload_market_list]},
        ) as c:
            yield c
