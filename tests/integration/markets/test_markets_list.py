"""GET /v1/markets: spec 2.1 summaries, every parameter of the spec 4.2 table, both paging modes."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import make_market, row_counts, utcnow, wallet_address

pytestmark = pytest.mark.db

SPEC_FIELDS = {
    "id",
    "marketAddress",
    "question",
    "category",
    "tags",
    "resolved",
    "finalOutcome",
    "volume",
    "bestBidYes",
    "bestAskYes",
    "bestBidNo",
    "bestAskNo",
    "createdAt",
}
EXTRA_FIELDS = {
    "status",
    "closeAt",
    "creator",
    "eventSlug",
    "tradeCount",
    "lastTradeAt",
    "lastPriceYes",
}
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
AMOUNT = re.compile(r"0|[1-9][0-9]*")


async def get(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    r = await client.get("/v1/markets", params=params)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def ids(client: httpx.AsyncClient, **params: Any) -> list[int]:
    return [m["id"] for m in (await get(client, limit=200, **params))["markets"]]


async def walk(client: httpx.AsyncClient, **params: Any) -> list[int]:
    """Every id of a list, following nextCursor page by page."""
    seen: list[int] = []
    cursor = None
    while True:
        body = await get(client, **params, **({"cursor": cursor} if cursor else {}))
        assert set(body["pagination"]) == {"limit", "nextCursor"}
        assert len(body["markets"]) <= body["pagination"]["limit"]
        seen.extend(m["id"] for m in body["markets"])
        cursor = body["pagination"]["nextCursor"]
        if cursor is None:
            return seen


def assert_bad(r: httpx.Response, field: str) -> None:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["code"] == "INVALID_REQUEST"
    assert body["error"]["code"] == "INVALID_REQUEST"
    assert field in [p["field"] for p in body["details"]["fields"]], body
    assert r.headers["x-request-id"] == body["requestId"]


class TestShape:
    async def test_empty(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        assert await get(client) == {"markets": [], "pagination": {"limit": 50, "nextCursor": None}}

    async def test_summary_fields_and_types(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        traded = utcnow() - timedelta(minutes=5)
        async with seed.begin() as conn:
            m = await make_market(
                conn,
                question="Will it rain in London?",
                category="weather",
                tags=["rain", "london"],
                volume=2**200 + 7,
                best_bid_yes=610,
                best_ask_yes=640,
                best_bid_no=360,
                best_ask_no=390,
                trade_count=3,
                last_trade_at=traded,
                last_fill_id=9,
                last_price_yes=625,
            )
        body = await get(client)
        assert body["pagination"] == {"limit": 50, "nextCursor": None}
        assert "facets" not in body
        [item] = body["markets"]
        assert set(item) == SPEC_FIELDS | EXTRA_FIELDS
        assert item["id"] == m["id"] and isinstance(item["id"], int)
        assert item["marketAddress"] == m["market_address"]
        assert item["question"] == "Will it rain in London?"
        assert item["category"] == "weather"
        assert item["tags"] == ["london", "rain"]
        assert item["resolved"] is False and item["finalOutcome"] is None
        assert item["volume"] == str(2**200 + 7) and AMOUNT.fullmatch(item["volume"])
        assert (item["bestBidYes"], item["bestAskYes"], item["bestBidNo"], item["bestAskNo"]) == (
            610,
            640,
            360,
            390,
        )
        for name in ("createdAt", "closeAt", "lastTradeAt"):
            assert TIME.fullmatch(item[name]), name
        assert item["status"] == "open"
        assert item["creator"] == m["creator"]
        assert item["eventSlug"] is None
        assert item["tradeCount"] == 3 and item["lastPriceYes"] == 625

    async def test_empty_books_and_resolution(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            await make_market(conn, status="resolved", resolution="no", resolved_at=utcnow())
        [item] = (await get(client, status="resolved"))["markets"]
        assert item["resolved"] is True and item["finalOutcome"] == "no"
        assert item["status"] == "resolved"
        # spec 2.1: ticks 0..1000; an empty side reports 0, bids and asks alike
        best = (item["bestBidYes"], item["bestAskYes"], item["bestBidNo"], item["bestAskNo"])
        assert best == (0, 0, 0, 0)
        assert item["tradeCount"] == 0 and item["lastTradeAt"] is None
        assert item["lastPriceYes"] is None and item["volume"] == "0"


class TestFilters:
    async def test_status(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        now = utcnow()
        async with seed.begin() as conn:
            trading = await make_market(conn, close_at=now + timedelta(hours=1))
            closed = await make_market(conn, close_at=now - timedelta(seconds=1))
            resolved = await make_market(
                conn, status="resolved", resolution="yes", close_at=now + timedelta(days=1)
            )
        # Default: open = trading now (a market past its close time is not trading).
        assert await ids(client) == [trading["id"]]
        assert await ids(client, status="open") == [trading["id"]]
        assert await ids(client, status="closed") == [closed["id"]]
        assert await ids(client, status="resolved") == [resolved["id"]]
        assert await ids(client, status="all") == [resolved["id"], closed["id"], trading["id"]]
        statuses = {m["id"]: m["status"] for m in (await get(client, status="all"))["markets"]}
        assert statuses == {
            trading["id"]: "open",
            closed["id"]: "closed",
            resolved["id"]: "resolved",
        }

    async def test_category_is_exact(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        async with seed.begin() as conn:
            sports = await make_market(conn, category="sports")
            await make_market(conn, category="sports-betting")
            await make_market(conn, category="Sports")
        assert await ids(client, category="sports") == [sports["id"]]
        assert await ids(client, category="sport") == []

    async def test_tags_are_an_and(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        async with seed.begin() as conn:
            ab = await make_market(conn, tags=["a", "b"])
            a = await make_market(conn, tags=["a"])
            b = await make_market(conn, tags=["b"])
            abc = await make_market(conn, tags=["a", "b", "c"])
            await make_market(conn)
        assert await ids(client, tags="a,b") == [abc["id"], ab["id"]]
        assert await ids(client, tags=" A , b,,") == [abc["id"], ab["id"]]
        assert await ids(client, tags="a") == [abc["id"], a["id"], ab["id"]]
        assert await ids(client, tags="b") == [abc["id"], b["id"], ab["id"]]
        assert await ids(client, tags="a,b,c") == [abc["id"]]
        assert await ids(client, tags="a,zzz") == []

    async def test_q_matches_every_term_case_insensitively(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            both = await make_market(conn, question="Will BITCOIN close above 100k in June?")
            one = await make_market(conn, question="Will bitcoin dominance rise?")
            await make_market(conn, question="Will ether flip it?")
            pct = await make_market(conn, question="Is this 100% certain_ever?")
        assert await ids(client, q="bitcoin") == [one["id"], both["id"]]
        assert await ids(client, q="Bitcoin june") == [both["id"]]
        assert await ids(client, q="june bitcoin") == [both["id"]]
        assert await ids(client, q="ether june") == []
        # LIKE wildcards in the text match themselves only.
        assert await ids(client, q="%") == [pct["id"]]
        assert await ids(client, q="certai__ever") == []  # "_" is not a wildcard either
        assert await ids(client, q="certain_ever") == [pct["id"]]
        # Blank text is no filter.
        assert len(await ids(client, q="   ")) == 4

    async def test_creator(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        alice, bob = wallet_address(101), wallet_address(102)
        async with seed.begin() as conn:
            mine = await make_market(conn, creator=alice)
            await make_market(conn, creator=bob)
        assert await ids(client, creator=alice) == [mine["id"]]
        assert await ids(client, creator=wallet_address(103)) == []

    async def test_min_volume_compares_numbers_not_strings(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            by_volume = {
                v: (await make_market(conn, volume=v))["id"]
                for v in (0, 999, 9 * 10**18, 10**19, 2 * 10**20, 2**200)
            }
        assert sorted(await ids(client, minVolume=str(10**19))) == sorted(
            [by_volume[10**19], by_volume[2 * 10**20], by_volume[2**200]]
        )
        assert sorted(await ids(client, minVolume="1000")) == sorted(
            [by_volume[v] for v in (9 * 10**18, 10**19, 2 * 10**20, 2**200)]
        )
        assert len(await ids(client, minVolume="0")) == 6
        assert await ids(client, minVolume=str(2**200 + 1)) == []

    async def test_filters_combine(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        alice = wallet_address(104)
        async with seed.begin() as conn:
            hit = await make_market(
                conn, category="c", tags=["x"], creator=alice, volume=10**20, question="Rain?"
            )
            await make_market(conn, category="c", tags=["x"], creator=alice, volume=10**20)
            await make_market(
                conn, category="c", tags=["y"], creator=alice, volume=10**20, question="Rain?"
            )
            await make_market(
                conn, category="c", tags=["x"], creator=alice, volume=1, question="Rain?"
            )
        params = {"category": "c", "tags": "x", "creator": alice, "minVolume": "100", "q": "rain"}
        assert await ids(client, **params) == [hit["id"]]


class TestSort:
    @pytest.fixture
    async def rows(self, seed: AsyncEngine) -> list[dict[str, Any]]:
        """Markets with ties in every sort key and volumes of different digit counts."""
        t0 = utcnow() - timedelta(days=1)
        volumes = [0, 9 * 10**18, 10**19, 10**19, 2**200, 999, 10**19, 5]
        bids = [0, 450, 450, 999, 1, 0, 450, 10]
        fills = [0, 7, 3, 0, 12, 5, 0, 1]
        made = []
        async with seed.begin() as conn:
            for i, (v, b, f) in enumerate(zip(volumes, bids, fills, strict=True)):
                made.append(
                    await make_market(
                        conn,
                        volume=v,
                        best_bid_yes=b,
                        last_fill_id=f,
                        created_at=t0 + timedelta(minutes=i // 3),
                    )
                )
        return made

    @pytest.mark.parametrize(
        ("sort", "column"),
        [
            ("created-at", "created_at"),
            ("volume", "volume"),
            ("best-bid-yes", "best_bid_yes"),
            ("recently-traded", "last_fill_id"),
        ],
    )
    @pytest.mark.parametrize("order", ["asc", "desc"])
    async def test_every_sort_both_ways_over_pages(
        self,
        client: httpx.AsyncClient,
        rows: list[dict[str, Any]],
        sort: str,
        column: str,
        order: str,
    ) -> None:
        expected = [
            r["id"]
            for r in sorted(rows, key=lambda r: (r[column], r["id"]), reverse=order == "desc")
        ]
        for limit in (1, 3, 200):
            assert await walk(client, sort=sort, order=order, limit=limit) == expected

    async def test_defaults_are_created_at_desc(
        self, client: httpx.AsyncClient, rows: list[dict[str, Any]]
    ) -> None:
        expected = [
            r["id"] for r in sorted(rows, key=lambda r: (r["created_at"], r["id"]), reverse=True)
        ]
        assert await ids(client) == expected
        assert await ids(client, order="desc") == expected
        assert await ids(client, sort="created-at") == expected

    async def test_volume_sort_is_numeric(
        self, client: httpx.AsyncClient, rows: list[dict[str, Any]]
    ) -> None:
        volumes = [int(m["volume"]) for m in (await get(client, sort="volume"))["markets"]]
        assert volumes == sorted(volumes, reverse=True)
        assert volumes[0] == 2**200 and volumes[-1] == 0


class TestPaging:
    @pytest.fixture
    async def seven(self, seed: AsyncEngine) -> list[int]:
        async with seed.begin() as conn:
            made = [await make_market(conn, category="c", tags=["t"]) for _ in range(7)]
        return [m["id"] for m in reversed(made)]

    async def test_offset_mode(self, client: httpx.AsyncClient, seven: list[int]) -> None:
        pages = []
        for n in range(3):
            body = await get(client, page=n, limit=3)
            assert body["pagination"] == {"limit": 3, "nextCursor": None, "page": n, "total": 7}
            pages.extend(m["id"] for m in body["markets"])
        assert pages == seven
        assert (await get(client, page=5, limit=3))["markets"] == []

    async def test_cursor_pinned_to_the_query(
        self, client: httpx.AsyncClient, seven: list[int]
    ) -> None:
        cursor = (await get(client, limit=2, category="c", sort="volume"))["pagination"][
            "nextCursor"
        ]
        assert cursor
        for changed in (
            {"category": "d", "sort": "volume"},
            {"category": "c"},
            {"category": "c", "sort": "volume", "order": "asc"},
            {"category": "c", "sort": "volume", "tags": "t"},
            {"category": "c", "sort": "volume", "status": "all"},
            {"category": "c", "sort": "volume", "minVolume": "0"},
        ):
            r = await client.get("/v1/markets", params={**changed, "cursor": cursor})
            assert_bad(r, "query.cursor")
            assert r.json()["details"]["fields"][0]["type"] == "cursor_query_mismatch"
        # limit, fields and facets may change between pages
        r = await client.get(
            "/v1/markets",
            params={
                "category": "c",
                "sort": "volume",
                "cursor": cursor,
                "limit": 10,
                "fields": "question",
                "facets": "true",
            },
        )
        assert r.status_code == 200
        assert [m["id"] for m in r.json()["markets"]] == seven[2:]
        # and a cursor of another list is refused
        r = await client.get("/v1/tags", params={"cursor": cursor})
        assert_bad(r, "query.cursor")

    async def test_forged_cursor(self, client: httpx.AsyncClient, seven: list[int]) -> None:
        r = await client.get("/v1/markets", params={"cursor": "bm90LWEtY3Vyc29y"})
        assert_bad(r, "query.cursor")
        assert r.json()["details"]["fields"][0]["type"] == "cursor_invalid"


class TestFieldsAndFacets:
    async def test_fields(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        async with seed.begin() as conn:
            await make_market(conn, volume=5, tags=["x"])
        body = await get(client, fields="volume,tags")
        assert set(body["markets"][0]) == {"id", "volume", "tags"}
        assert body["markets"][0]["volume"] == "5"
        body = await get(client, fields="bestBidYes,closeAt")
        assert set(body["markets"][0]) == {"id", "bestBidYes", "closeAt"}
        r = await client.get("/v1/markets", params={"fields": "volume,nope"})
        assert_bad(r, "query.fields")
        assert "nope" in r.json()["message"]

    async def test_facets_count_every_filtered_row(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        now = utcnow()
        async with seed.begin() as conn:
            for _ in range(3):
                await make_market(conn, category="sports", tags=["football", "uk"])
            await make_market(conn, category="crypto", tags=["btc"])
            await make_market(conn, category="crypto", close_at=now - timedelta(hours=1))
            await make_market(
                conn, category="crypto", tags=["btc"], status="resolved", resolution="invalid"
            )
        body = await get(client, facets="true", limit=1, status="all")
        assert len(body["markets"]) == 1
        assert body["facets"] == {
            "category": [{"value": "crypto", "count": 3}, {"value": "sports", "count": 3}],
            "tag": [
                {"value": "football", "count": 3},
                {"value": "uk", "count": 3},
                {"value": "btc", "count": 2},
            ],
            "status": [
                {"value": "open", "count": 4},
                {"value": "closed", "count": 1},
                {"value": "resolved", "count": 1},
            ],
        }
        # over the filtered rows only
        body = await get(client, facets="true", category="crypto", status="all")
        assert body["facets"]["category"] == [{"value": "crypto", "count": 3}]
        assert body["facets"]["tag"] == [{"value": "btc", "count": 2}]
        assert body["facets"]["status"] == [
            {"value": "closed", "count": 1},
            {"value": "open", "count": 1},
            {"value": "resolved", "count": 1},
        ]
        assert "facets" not in await get(client, facets="false")
        assert_bad(await client.get("/v1/markets", params={"facets": "maybe"}), "query.facets")


class TestBadInput:
    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"limit": 0}, "query.limit"),
            ({"limit": 201}, "query.limit"),
            ({"limit": "ten"}, "query.limit"),
            ({"status": "closing"}, "query.status"),
            ({"status": "OPEN"}, "query.status"),
            ({"sort": "price"}, "query.sort"),
            ({"order": "up"}, "query.order"),
            ({"minVolume": "01"}, "query.minVolume"),
            ({"minVolume": "-1"}, "query.minVolume"),
            ({"minVolume": "1.5"}, "query.minVolume"),
            ({"minVolume": "1e18"}, "query.minVolume"),
            ({"minVolume": str(2**256)}, "query.minVolume"),
            ({"creator": "not-an-address"}, "query.creator"),
            ({"tags": ",".join(f"t{i}" for i in range(11))}, "query.tags"),
            ({"tags": "x" * 65}, "query.tags"),
            ({"q": " ".join(["w"] * 11)}, "query.q"),
            ({"q": "x" * 201}, "query.q"),
            ({"category": "c" * 65}, "query.category"),
            ({"page": -1}, "query.page"),
            ({"page": 0, "cursor": "abc"}, "query.page"),
            ({"fields": "question,,unknown"}, "query.fields"),
        ],
    )
    async def test_is_a_400_naming_the_field_and_writes_nothing(
        self, client: httpx.AsyncClient, seed: AsyncEngine, params: dict[str, Any], field: str
    ) -> None:
        async with seed.begin() as conn:
            await make_market(conn)
        before = await row_counts(seed)
        assert_bad(await client.get("/v1/markets", params=params), field)
        assert await row_counts(seed) == before
