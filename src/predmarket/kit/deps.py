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
from predmarket.store import uow


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
    and rolled back when it raises. Services never commit. When the unit appended outbox events,
    this process's outbox followers (realtime broker, webhooks, caches) are woken after the
    commit; other processes learn of them through PostgreSQL's notification or their poll."""
    async with get_engine(request).connect() as conn:
        uow.take_outbox_written(conn)  # a flag left by an earlier, rolled-back unit
        async with conn.begin():
            yield conn
        if uow.take_outbox_written(conn):
            notify = getattr(request.app.state, "notify_outbox", None)
            if callable(notify):
                notify()


SettingsDep = Annotated[Settings, Depends(get_settings)]
EngineDep = Annotated[AsyncEngine, Depends(get_engine)]
# scope="function": the commit happens before the response is sent, so a failed commit is a 500
# the client sees rather than a success that did not stick.
DbDep = Annotated[AsyncConnection, Depends(get_db, scope="function")]
