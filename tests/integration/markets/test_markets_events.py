"""GET /v1/events and GET /v1/events/{slug}: linked-market groups with their markets."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import make_event, make_market, row_counts, utcnow

pytestmark = pytest.mark.db


async def get(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    r = await client.get(path, params=params)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


@pytest.fixture
async def groups(seed: AsyncEngine) -> dict[str, Any]:
    now = utcnow()
    async with seed.begin() as conn:
        election = await make_event(
            conn,
            slug="us-2028",
            title="US election 2028",
            category="politics",
            created_at=now - timedelta(days=3),
        )
        cup = await make_event(
            conn,
            slug="world-cup",
            title="World Cup final",
            category="sports",
            created_at=now - timedelta(days=2),
        )
        done = await make_event(
            conn,
            slug="done",
            title="Finished",
            category="sports",
            created_at=now - timedelta(days=1),
        )
        a = await make_market(conn, event_group_id=election["id"], volume=9 * 10**18, tags=["us"])
        b = await make_market(conn, event_group_id=election["id"], volume=10**19)
        c = await make_market(
            conn, event_group_id=cup["id"], close_at=now - timedelta(minutes=1), volume=2**200
        )
        d = await make_market(conn, event_group_id=done["id"], status="resolved", resolution="yes")
        e = await make_market(conn, event_group_id=done["id"], status="resolved", resolution="no")
        await make_market(conn)  # in no group
    return {"election": election, "cup": cup, "done": done, "markets": [a, b, c, d, e]}


class TestList:
    async def test_newest_first_with_markets_oldest_first(
        self, client: httpx.AsyncClient, groups: dict[str, Any]
    ) -> None:
        a, b, c, d, e = groups["markets"]
        body = await get(client, "/v1/events")
        assert body["pagination"] == {"limit": 20, "nextCursor": None}
        assert [g["slug"] for g in body["events"]] == ["done", "world-cup", "us-2028"]
        done, cup, election = body["events"]
        assert set(election) == {
            "id",
            "slug",
            "title",
            "category",
            "createdAt",
            "status",
            "marketCount",
            "volume",
            "markets",
        }
        assert election["id"] == groups["election"]["id"]
        assert election["title"] == "US election 2028" and election["category"] == "politics"
        assert [m["id"] for m in election["markets"]] == [a["id"], b["id"]]
        assert election["markets"][0]["tags"] == ["us"]
        assert election["markets"][0]["eventSlug"] == "us-2028"
        assert election["marketCount"] == 2
        assert election["volume"] == str(9 * 10**18 + 10**19)
        assert cup["volume"] == str(2**200)
        # open if any market trades; resolved when all are; else closed
        assert (election["status"], cup["status"], done["status"]) == ("open", "closed", "resolved")
        assert [m["id"] for m in cup["markets"]] == [c["id"]]
        assert [m["id"] for m in done["markets"]] == [d["id"], e["id"]]
        assert [m["finalOutcome"] for m in done["markets"]] == ["yes", "no"]

    async def test_category_filter(self, client: httpx.AsyncClient, groups: dict[str, Any]) -> None:
        body = await get(client, "/v1/events", category="sports")
        assert [g["slug"] for g in body["events"]] == ["done", "world-cup"]
        assert (await get(client, "/v1/events", category="weather"))["events"] == []

    async def test_paging_both_modes(
        self, client: httpx.AsyncClient, groups: dict[str, Any]
    ) -> None:
        first = await get(client, "/v1/events", limit=2)
        assert [g["slug"] for g in first["events"]] == ["done", "world-cup"]
        cursor = first["pagination"]["nextCursor"]
        second = await get(client, "/v1/events", limit=2, cursor=cursor)
        assert [g["slug"] for g in second["events"]] == ["us-2028"]
        assert second["pagination"]["nextCursor"] is None
        r = await client.get("/v1/events", params={"cursor": cursor, "category": "sports"})
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["type"] == "cursor_query_mismatch"
        body = await get(client, "/v1/events", limit=2, page=1)
        assert body["pagination"] == {"limit": 2, "nextCursor": None, "page": 1, "total": 3}
        assert [g["slug"] for g in body["events"]] == ["us-2028"]

    async def test_fields_and_facets(
        self, client: httpx.AsyncClient, groups: dict[str, Any]
    ) -> None:
        body = await get(client, "/v1/events", fields="title", facets="true", category="sports")
        assert body["events"] == [
            {"id": groups["done"]["id"], "slug": "done", "title": "Finished"},
            {"id": groups["cup"]["id"], "slug": "world-cup", "title": "World Cup final"},
        ]
        # facets over the markets of the listed groups
        assert body["facets"]["status"] == [
            {"value": "resolved", "count": 2},
            {"value": "closed", "count": 1},
        ]

    async def test_limit_bounds(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        before = await row_counts(seed)
        for bad in (0, 101):
            r = await client.get("/v1/events", params={"limit": bad})
            assert r.status_code == 400
            assert r.json()["details"]["fields"][0]["field"] == "query.limit"
        assert await row_counts(seed) == before


class TestGet:
    async def test_by_slug(self, client: httpx.AsyncClient, groups: dict[str, Any]) -> None:
        body = await get(client, "/v1/events/us-2028")
        listed = (await get(client, "/v1/events", category="politics"))["events"][0]
        assert body == listed

    async def test_unknown_slug_is_a_404(
        self, client: httpx.AsyncClient, groups: dict[str, Any]
    ) -> None:
        r = await client.get("/v1/events/nope")
        assert r.status_code == 404
        assert r.json()["code"] == "NOT_FOUND"
        assert r.json()["message"] == "event not found"

    async def test_overlong_slug_is_a_400(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        r = await client.get("/v1/events/" + "s" * 129)
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["field"] == "path.slug"
