"""Fixtures of the webhook tests: the real app on a migrated database with fast retries, a
developer key made through the real routes, and a real HTTP receiver on a loopback port
(helpers in ``tests/helpers/webhooks.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from helpers.webhooks import Developer, Receiver, client_of, make_developer, serving, settings_for
from predmarket.app import create_app
from predmarket.settings import Settings

pytestmark = pytest.mark.db


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving(Receiver()) as box:
        yield box


@pytest.fixture
def webhook_settings(tmp_path: Path, migrated_url: str) -> Settings:
    return settings_for(migrated_url, tmp_path / "data")


@pytest.fixture
async def wh_app(webhook_settings: Settings) -> AsyncIterator[FastAPI]:
    app = create_app(webhook_settings)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def client(wh_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client_of(wh_app) as c:
        yield c


@pytest.fixture
async def developer(client: httpx.AsyncClient) -> Developer:
    return await make_developer(client)
