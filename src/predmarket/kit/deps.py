"""Typed dependency aliases over the app's process resources (set up in ``app.py``'s lifespan).

Handlers declare what they need by type: ``async def handler(db: DbDep, settings: SettingsDep)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from starlette.requests import Request

from predmarket.settings import Settings


def get_settings(request: Request) -> Settings:
    settings = request.app.state.settings
    assert isinstance(settings, Settings)
    return settings


def get_engine(request: Request) -> AsyncEngine:
    engine = request.app.state.engine
    assert isinstance(engine, AsyncEngine)
    return engine


async def get_db(request: Request) -> AsyncIterator[AsyncConnection]:
    """The request's unit of work: one transaction, committed when the handler returns normally
    and rolled back when it raises. Services never commit."""
    async with get_engine(request).begin() as conn:
        yield conn


SettingsDep = Annotated[Settings, Depends(get_settings)]
EngineDep = Annotated[AsyncEngine, Depends(get_engine)]
# scope="function": the commit happens before the response is sent, so a failed commit is a 500
# the client sees rather than a success that did not stick.
DbDep = Annotated[AsyncConnection, Depends(get_db, scope="function")]
