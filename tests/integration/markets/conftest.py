"""The market reads run against a migrated database (SQLite, or PostgreSQL with
``PREDMARKET_TEST_DATABASE_URL``) filled by the helpers of ``tests/helpers/markets.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
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
