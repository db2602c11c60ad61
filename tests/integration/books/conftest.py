"""The books, orders, transactions and protocol reads run against a migrated database (SQLite,
or PostgreSQL with ``PREDMARKET_TEST_DATABASE_URL``) filled by ``tests/helpers/books.py`` the
way the indexer fills it: read-model rows and outbox rows in one transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import clear_read_model
from predmarket.settings import BookSettings, Settings


@pytest.fixture
def app_settings(app_settings: Settings, migrated_url: str) -> Settings:
    """The app on this module's migrated database, its books polling every 10 ms."""
    return app_settings.model_copy(
        update={"database_url": migrated_url, "books": BookSettings(poll_interval_ms=10)}
    )


@pytest.fixture
async def seed(migrated_engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    """The migrated database, emptied (outbox included)."""
    async with migrated_engine.begin() as conn:
        await clear_read_model(conn)
    yield migrated_engine
