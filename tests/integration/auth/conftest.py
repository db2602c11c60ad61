"""Fixtures of the authentication tests: the real app on a migrated database (no node).

``auth_client`` is an in-process client of the app; ``make_client()`` opens more clients (own
cookie jars) on the same app. ``auth_settings`` may be overridden per module or test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from helpers.auth import ClientFactory, client_of, settings_for
from predmarket.app import create_app
from predmarket.settings import Settings

pytestmark = pytest.mark.db


@pytest.fixture
def auth_settings(tmp_path: Path, migrated_url: str) -> Settings:
    return settings_for(migrated_url, tmp_path / "data")


@pytest.fixture
async def auth_app(auth_settings: Settings) -> AsyncIterator[FastAPI]:
    app = create_app(auth_settings)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def auth_client(auth_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client_of(auth_app) as c:
        yield c


@pytest.fixture
def make_client(auth_app: FastAPI) -> ClientFactory:
    """Another client of the same app, with a cookie jar of its own."""

    @asynccontextmanager
    async def make() -> AsyncIterator[httpx.AsyncClient]:
        async with client_of(auth_app) as c:
            yield c

    return make
