"""``?facets=true``: counts over all matching rows, from SQL and from memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from kit_probe import STATUS, item, item_tag, populated, router, tags_of
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.kit.facets import ColumnFacet, FacetCount, LinkFacet, count_facets, facet_counts

pytestmark = pytest.mark.db

SOURCES = {
    "category": ColumnFacet(item.c.category),
    "tag": LinkFacet(item.c.id, item_tag.c.item_id, item_tag.c.tag),
    "status": ColumnFacet(STATUS),
}


def expected(data: list[dict[str, Any]]) -> dict[str, list[FacetCount]]:
    return {
        "category": facet_counts(r["category"] for r in data),
        "tag": facet_counts(t for r in data for t in tags_of(r["id"])),
        "status": facet_counts("resolved" if r["resolved"] else "open" for r in data),
    }


@pytest.fixture
async def data(engine: AsyncEngine) -> AsyncIterator[list[dict[str, object]]]:
    async for data in populated(engine, 37):
        yield data


async def test_counts_over_everything(engine: AsyncEngine, data: list[dict[str, Any]]) -> None:
    async with engine.connect() as conn:
        got = await count_facets(conn, select(item), SOURCES)
    assert got == expected(data)
    assert sum(c.count for c in got["status"]) == len(data)
    assert "None" not in {c.value for c in got["category"]}  # NULL is not a value


async def test_counts_follow_the_filters_not_the_page(
    engine: AsyncEngine, data: list[dict[str, Any]]
) -> None:
    filtered = select(item).where(item.c.resolved.is_(False)).order_by(item.c.id).limit(2)
    async with engine.connect() as conn:
        got = await count_facets(conn, filtered, SOURCES)
    assert got == expected([r for r in data if not r["resolved"]])


async def test_most_frequent_first_then_by_value_and_top(
    engine: AsyncEngine, data: list[dict[str, Any]]
) -> None:
    async with engine.connect() as conn:
        got = await count_facets(conn, select(item), {"category": SOURCES["category"]}, top=2)
    counts = Counter(r["category"] for r in data if r["category"])
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
    assert [(c.value, c.count) for c in got["category"]] == ranked


def test_in_memory_counts() -> None:
    got = facet_counts(["b", "a", None, "b", "c", "a", "b"], top=2)
    assert got == [FacetCount(value="b", count=3), FacetCount(value="a", count=2)]


class TestOverHttp:
    @pytest.fixture
    def app(self, app: FastAPI) -> FastAPI:
        app.include_router(router)
        return app

    async def test_requested(self, client: httpx.AsyncClient, data: list[dict[str, Any]]) -> None:
        body = (await client.get("/test/items", params={"facets": "true", "limit": 1})).json()
        want = {k: [c.model_dump() for c in v] for k, v in expected(data).items()}
        assert body["facets"] == want
        assert len(body["items"]) == 1

    async def test_with_a_filter(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        params = {"facets": "true", "category": "crypto"}
        body = (await client.get("/test/items", params=params)).json()
        crypto = [r for r in data if r["category"] == "crypto"]
        assert body["facets"]["category"] == [{"value": "crypto", "count": len(crypto)}]
        assert body["facets"]["status"] == [c.model_dump() for c in expected(crypto)["status"]]

    async def test_absent_unless_requested(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        for params in ({}, {"facets": "false"}):
            body = (await client.get("/test/items", params=params)).json()
            assert "facets" not in body

    async def test_a_bad_flag_is_a_400(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        r = await client.get("/test/items", params={"facets": "maybe"})
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["field"] == "query.facets"
