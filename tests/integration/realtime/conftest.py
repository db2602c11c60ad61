"""Realtime tests: the app on a migrated database (SQLite, or PostgreSQL with
``PREDMARKET_TEST_DATABASE_URL``), served by uvicorn on a loopback port, read by real SSE clients.
Events are appended to the outbox with ``store.uow.append_outbox``, as the indexer does."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from realtime_sse import OPERATOR_TOKEN, TEST_REALTIME, live_server
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import clear_read_model
from predmarket.settings import Settings


@pytest.fixture
def app_settings(app_settings: Settings, migrated_url: str) -> Settings:
    """Short realtime timings; no webhook worker (its retention hold would keep events that
    the retention tests expect pruned)."""
    return app_settings.model_copy(
        update={
            "database_url": migrated_url,
            "realtime": TEST_REALTIME,
            "operator_token": SecretStr(OPERATOR_TOKEN),
            "webhooks": app_settings.webhooks.model_copy(update={"enabled": False}),
        }
    )


@pytest.fixture
async def db(migrated_engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    """The migrated database, emptied (outbox included)."""
    async with migrated_engine.begin() as conn:
        await clear_read_model(conn)
    yield migrated_engine


@pytest.fixture
async def base_url(app: FastAPI, db: AsyncEngine) -> AsyncIterator[str]:
    del db
    async with live_server(app) as url:
        yield url


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as c:
        yield c
