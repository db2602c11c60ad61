"""DbDep: one transaction per request, committed on success, rolled back on any error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from kit_probe import item, populated
from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.kit.deps import DbDep, EngineDep, SettingsDep
from predmarket.kit.errors import Conflict

pytestmark = pytest.mark.db

probe = APIRouter(prefix="/test/uow")


async def add(db: DbDep, n: int) -> None:
    row = {
        "id": 1000 + n,
        "name": "new",
        "category": None,
        "volume": 0,
        "created_at": datetime.now(UTC),
        "resolved": False,
    }
    await db.execute(insert(item).values(row))


@probe.post("/ok/{n}")
async def ok(db: DbDep, n: int) -> dict[str, int]:
    await add(db, n)
    return {"n": n}


@probe.post("/refused/{n}")
async def refused(db: DbDep, n: int) -> None:
    await add(db, n)
    raise Conflict()


@probe.post("/crash/{n}")
async def crash(db: DbDep, n: int) -> None:
    await add(db, n)
    raise RuntimeError("boom")


@probe.get("/resources")
async def resources(engine: EngineDep, settings: SettingsDep) -> dict[str, str]:
    return {"dialect": engine.dialect.name, "profile": settings.profile}


@pytest.fixture
def app(app: FastAPI) -> FastAPI:
    app.include_router(probe)
    return app


@pytest.fixture
async def data(engine: AsyncEngine) -> AsyncIterator[list[dict[str, object]]]:
    async for data in populated(engine, 3):
        yield data


async def count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(item)) or 0)


async def test_commits_on_success(
    client: httpx.AsyncClient, engine: AsyncEngine, data: list[dict[str, object]]
) -> None:
    assert (await client.post("/test/uow/ok/1")).status_code == 200
    assert await count(engine) == 4


@pytest.mark.parametrize(("route", "status"), [("refused", 409), ("crash", 500)])
async def test_rolls_back_on_error(
    client: httpx.AsyncClient,
    engine: AsyncEngine,
    data: list[dict[str, object]],
    route: str,
    status: int,
) -> None:
    assert (await client.post(f"/test/uow/{route}/2")).status_code == status
    assert await count(engine) == 3


async def test_a_failing_write_is_a_500(
    client: httpx.AsyncClient, engine: AsyncEngine, data: list[dict[str, object]]
) -> None:
    assert (await client.post("/test/uow/ok/3")).status_code == 200
    # The same primary key again: the insert fails inside the request, never silently.
    assert (await client.post("/test/uow/ok/3")).status_code == 500
    assert await count(engine) == 4


async def test_typed_resources(client: httpx.AsyncClient, engine: AsyncEngine) -> None:
    body = (await client.get("/test/uow/resources")).json()
    assert body == {"dialect": engine.dialect.name, "profile": "devnet"}
