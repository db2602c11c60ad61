"""GET /v1/categories and GET /v1/tags: every value with its market counts, paginated."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import make_market, row_counts, utcnow

pytestmark = pytest.mark.db


async def get(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    r = await client.get(path, params=params)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


@pytest.fixture
async def taxonomy(seed: AsyncEngine) -> None:
    """sports: 3 markets (2 trading, 1 closed); crypto: 3 (1 trading, 2 resolved);
    weather: 1; politics: 3 trading; an empty category (not listed)."""
    now = utcnow()
    past = now - timedelta(hours=1)
    async with seed.begin() as conn:
        await make_market(conn, category="sports", tags=["football", "uk"])
        await make_market(conn, category="sports", tags=["football"])
        await make_market(conn, category="sports", tags=["tennis"], close_at=past)
        await make_market(conn, category="crypto", tags=["btc"])
        await make_market(
            conn, category="crypto", tags=["btc", "uk"], status="resolved", resolution="yes"
        )
        await make_market(conn, category="crypto", status="resolved", resolution="no")
        await make_market(conn, category="weather", tags=["uk", "rain"])
        for _ in range(3):
            await make_market(conn, category="politics", tags=["election"])
        await make_market(conn, category="")


def counts(name: str, total: int, trading: int, resolved: int) -> dict[str, Any]:
    return {
        "name": name,
        "marketCount": total,
        "openMarketCount": trading,
        "resolvedMarketCount": resolved,
    }


class TestCategories:
    async def test_counts_most_used_first_ties_by_name(
        self, client: httpx.AsyncClient, taxonomy: None
    ) -> None:
        body = await get(client, "/v1/categories")
        assert body == {
            "categories": [
                counts("crypto", 3, 1, 2),
                counts("politics", 3, 3, 0),
                counts("sports", 3, 2, 0),
                counts("weather", 1, 1, 0),
            ],
            "pagination": {"limit": 50, "nextCursor": None},
        }

    async def test_empty(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        assert await get(client, "/v1/categories") == {
            "categories": [],
            "pagination": {"limit": 50, "nextCursor": None},
        }

    async def test_cursor_and_offset_modes(self, client: httpx.AsyncClient, taxonomy: None) -> None:
        names: list[str] = []
        cursor = None
        while True:
            body = await get(
                client, "/v1/categories", limit=3, **({"cursor": cursor} if cursor else {})
            )
            names.extend(c["name"] for c in body["categories"])
            cursor = body["pagination"]["nextCursor"]
            if cursor is None:
                break
        assert names == ["crypto", "politics", "sports", "weather"]
        body = await get(client, "/v1/categories", limit=3, page=1)
        assert [c["name"] for c in body["categories"]] == ["weather"]
        assert body["pagination"] == {"limit": 3, "nextCursor": None, "page": 1, "total": 4}

    async def test_fields_and_facets(self, client: httpx.AsyncClient, taxonomy: None) -> None:
        body = await get(client, "/v1/categories", fields="marketCount", facets="true")
        assert body["categories"][0] == {"name": "crypto", "marketCount": 3}
        # facets describe the markets the taxonomy covers: all of them
        assert body["facets"]["status"] == [
            {"value": "open", "count": 8},
            {"value": "resolved", "count": 2},
            {"value": "closed", "count": 1},
        ]
        assert body["facets"]["category"][0] == {"value": "crypto", "count": 3}


class TestTags:
    async def test_counts_most_used_first_ties_by_name(
        self, client: httpx.AsyncClient, taxonomy: None
    ) -> None:
        body = await get(client, "/v1/tags")
        assert body["tags"] == [
            counts("election", 3, 3, 0),
            counts("uk", 3, 2, 1),
            counts("btc", 2, 1, 1),
            counts("football", 2, 2, 0),
            counts("rain", 1, 1, 0),
            counts("tennis", 1, 0, 0),
        ]

    async def test_within_a_category(self, client: httpx.AsyncClient, taxonomy: None) -> None:
        body = await get(client, "/v1/tags", category="sports", facets="true")
        assert body["tags"] == [
            counts("football", 2, 2, 0),
            counts("tennis", 1, 0, 0),
            counts("uk", 1, 1, 0),
        ]
        assert body["facets"]["category"] == [{"value": "sports", "count": 3}]
        assert (await get(client, "/v1/tags", category="nothing"))["tags"] == []

    async def test_paging_walks_every_tag_once(
        self, client: httpx.AsyncClient, taxonomy: None
    ) -> None:
        everything = [t["name"] for t in (await get(client, "/v1/tags"))["tags"]]
        walked: list[str] = []
        cursor = None
        while True:
            body = await get(client, "/v1/tags", limit=1, **({"cursor": cursor} if cursor else {}))
            walked.extend(t["name"] for t in body["tags"])
            cursor = body["pagination"]["nextCursor"]
            if cursor is None:
                break
        assert walked == everything
        cursor = (await get(client, "/v1/tags", limit=1, category="sports"))["pagination"][
            "nextCursor"
        ]
        r = await client.get("/v1/tags", params={"cursor": cursor})
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["type"] == "cursor_query_mismatch"

    async def test_fields(self, client: httpx.AsyncClient, taxonomy: None) -> None:
        body = await get(client, "/v1/tags", fields="openMarketCount", limit=1)
        assert body["tags"] == [{"name": "election", "openMarketCount": 3}]


@pytest.mark.parametrize("path", ["/v1/categories", "/v1/tags"])
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "query.limit"),
        ({"limit": 201}, "query.limit"),
        ({"page": -1}, "query.page"),
        ({"cursor": "zzz"}, "query.cursor"),
        ({"fields": "count"}, "query.fields"),
        ({"facets": "yes please"}, "query.facets"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field(
    client: httpx.AsyncClient, seed: AsyncEngine, path: str, params: dict[str, Any], field: str
) -> None:
    before = await row_counts(seed)
    r = await client.get(path, params=params)
    assert r.status_code == 400, r.text
    assert [p["field"] for p in r.json()["details"]["fields"]] == [field]
    assert await row_counts(seed) == before
