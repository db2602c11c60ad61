"""GET /v1/trending: the published algorithm (v1) and per-market components, from fills."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import make_fill, make_market, row_counts, utcnow, wallet_address
from predmarket.kit.pagination import CursorCodec, PageRequest
from predmarket.markets import queries, service
from predmarket.store.tables.fill import fill

pytestmark = pytest.mark.db

W = [wallet_address(400 + i) for i in range(5)]


async def trending(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    r = await client.get("/v1/trending", params=params)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def populate(seed: AsyncEngine, now: datetime) -> dict[str, dict[str, Any]]:
    recent = now - timedelta(minutes=30)
    old = now - timedelta(days=2)
    async with seed.begin() as conn:
        hot = await make_market(conn, category="sports", last_trade_at=now - timedelta(hours=3))
        minted = await make_market(conn, category="crypto", last_trade_at=now - timedelta(hours=1))
        stale = await make_market(conn, category="sports", last_trade_at=old)
        quiet = await make_market(conn, category="sports")
        closed = await make_market(conn, close_at=now - timedelta(minutes=1), last_trade_at=recent)
        resolved = await make_market(
            conn, status="resolved", resolution="yes", last_trade_at=recent
        )
        # Outside the window: counted nowhere.
        await make_fill(conn, stale["id"], traded_at=old, quantity=10**22)
        await make_fill(conn, hot["id"], traded_at=old, quantity=10**22)
        # Inside: three normal trades at 500 (notional 0.5 share each) among three wallets.
        for maker, taker in ((W[0], W[1]), (W[1], W[2]), (W[0], W[2])):
            await make_fill(conn, hot["id"], traded_at=recent, maker_owner=maker, taker_owner=taker)
        # A mint of 2 shares: volume counts the quantity, not the maker's notional.
        await make_fill(
            conn,
            minted["id"],
            kind="mint",
            price=300,
            taker_price=700,
            maker_side="buy",
            taker_outcome="no",
            quantity=2 * 10**18,
            traded_at=recent,
            maker_owner=W[3],
            taker_owner=W[4],
        )
        for m in (closed, resolved):
            await make_fill(conn, m["id"], traded_at=recent, quantity=10**24)
    return {
        "hot": hot,
        "minted": minted,
        "stale": stale,
        "quiet": quiet,
        "closed": closed,
        "resolved": resolved,
    }


class TestRanking:
    async def test_components_and_scores(self, seed: AsyncEngine) -> None:
        """Through the service with the clock pinned, so every number is exact."""
        now = utcnow()
        m = await populate(seed, now)
        page = PageRequest(limit=20, codec=CursorCodec("k" * 40), query="q")
        async with seed.connect() as conn:
            body = await service.trending(conn, page=page, now=now)
        ranked = [x.id for x in body.markets]
        assert ranked == [m["hot"]["id"], m["minted"]["id"], m["stale"]["id"], m["quiet"]["id"]]
        hot, minted, stale, quiet = body.markets
        assert [x.rank for x in body.markets] == [1, 2, 3, 4]

        c = hot.components
        assert c.volume24h.value == 3 * 5 * 10**17
        assert c.volume24h.score == round(math.sqrt(1.5 / 2), 6)
        assert (c.trades24h.value, c.trades24h.score) == (3, 1.0)
        assert (c.traders24h.value, c.traders24h.score) == (3, 1.0)
        assert c.recency.value == 3.0
        assert c.recency.score == round(0.5**0.5, 6)  # three hours: half a half-life
        assert c.recency.last_trade_at == m["hot"]["last_trade_at"]
        expected = 0.4 * round(math.sqrt(0.75), 6) + 0.25 * 1.0 + 0.2 * 1.0 + 0.15 * 0.5**0.5
        assert hot.score == pytest.approx(expected, abs=2e-6)
        assert hot.score == pytest.approx(
            sum(x.contribution for x in (c.volume24h, c.trades24h, c.traders24h, c.recency)),
            abs=1e-6,
        )

        c = minted.components
        assert (c.volume24h.value, c.volume24h.score) == (2 * 10**18, 1.0)
        assert (c.trades24h.value, c.trades24h.score) == (1, round(1 / 3, 6))
        assert (c.traders24h.value, c.traders24h.score) == (2, round(2 / 3, 6))
        assert c.recency.score == round(0.5 ** (1 / 6), 6)

        c = stale.components
        assert (c.volume24h.value, c.trades24h.value, c.traders24h.value) == (0, 0, 0)
        assert c.recency.value == 48.0 and c.recency.score == round(0.5**8, 6)
        assert stale.score == pytest.approx(0.15 * 0.5**8, abs=1e-6)

        c = quiet.components
        assert c.recency.value is None and c.recency.last_trade_at is None
        assert quiet.score == 0.0

        assert body.algorithm.name == "activity-24h" and body.algorithm.version == 1
        as_of = now.replace(microsecond=now.microsecond // 1000 * 1000)  # milliseconds
        assert body.algorithm.window.end == as_of
        assert body.algorithm.window.start == as_of - timedelta(hours=24)

    async def test_a_cursor_pins_the_ranking_time(self, seed: AsyncEngine) -> None:
        """Recency decays while a client pages; every page ranks as of the first one."""
        now = utcnow().replace(microsecond=0)
        m = await populate(seed, now)
        codec = CursorCodec("k" * 40)
        async with seed.connect() as conn:
            first = await service.trending(
                conn, page=PageRequest(limit=2, codec=codec, query="q"), now=now
            )
            cursor = first.pagination.next_cursor
            assert cursor is not None
            later = PageRequest(limit=2, codec=codec, query="q", after=codec.decode(cursor, "q"))
            second = await service.trending(conn, page=later, now=now + timedelta(hours=5))
            fresh = await service.trending(
                conn,
                page=PageRequest(limit=4, codec=codec, query="q"),
                now=now + timedelta(hours=5),
            )
        assert second.algorithm.window.end == now
        assert [x.id for x in first.markets + second.markets] == [
            m[k]["id"] for k in ("hot", "minted", "stale", "quiet")
        ]
        assert [x.rank for x in second.markets] == [3, 4]
        # the pinned page saw recency as of the first page; a fresh ranking as of its own time
        assert first.markets[0].components.recency.value == 3.0
        assert fresh.algorithm.window.end == now + timedelta(hours=5)
        assert fresh.markets[0].id == m["hot"]["id"]
        assert fresh.markets[0].components.recency.value == 8.0

    async def test_over_http(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        m = await populate(seed, utcnow())
        body = await trending(client)
        assert set(body) == {"algorithm", "markets", "pagination"}
        algorithm = body["algorithm"]
        assert algorithm["name"] == "activity-24h" and algorithm["version"] == 1
        assert algorithm["weights"] == {
            "volume24h": 0.4,
            "trades24h": 0.25,
            "traders24h": 0.2,
            "recency": 0.15,
        }
        assert sum(algorithm["weights"].values()) == pytest.approx(1.0)
        assert algorithm["window"]["seconds"] == 86400
        assert algorithm["recencyHalfLifeHours"] == 6.0
        assert "0.4 * volume24h" in algorithm["description"]
        ids = [x["id"] for x in body["markets"]]
        assert ids == [m[k]["id"] for k in ("hot", "minted", "stale", "quiet")]
        top = body["markets"][0]
        assert top["marketAddress"] == m["hot"]["market_address"]  # a full summary
        assert set(top["components"]) == {"volume24h", "trades24h", "traders24h", "recency"}
        assert top["components"]["volume24h"]["value"] == str(15 * 10**17)
        assert top["rank"] == 1 and 0 < top["score"] <= 1

    async def test_category_paging_fields_and_facets(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        m = await populate(seed, utcnow())
        sports = [m[k]["id"] for k in ("hot", "stale", "quiet")]
        assert [x["id"] for x in (await trending(client, category="sports"))["markets"]] == sports
        walked, ranks = [], []
        cursor = None
        while True:
            body = await trending(client, limit=1, **({"cursor": cursor} if cursor else {}))
            walked.extend(x["id"] for x in body["markets"])
            ranks.extend(x["rank"] for x in body["markets"])
            cursor = body["pagination"]["nextCursor"]
            if cursor is None:
                break
        assert walked == [m[k]["id"] for k in ("hot", "minted", "stale", "quiet")]
        assert ranks == [1, 2, 3, 4]
        body = await trending(client, limit=3, page=1)
        assert body["pagination"] == {"limit": 3, "nextCursor": None, "page": 1, "total": 4}
        assert body["markets"][0]["rank"] == 4
        body = await trending(client, fields="score,rank", facets="true", limit=1)
        assert body["markets"] == [
            {"id": m["hot"]["id"], "score": body["markets"][0]["score"], "rank": 1}
        ]
        assert body["facets"]["category"] == [
            {"value": "sports", "count": 3},
            {"value": "crypto", "count": 1},
        ]
        assert body["facets"]["status"] == [{"value": "open", "count": 4}]

    async def test_nothing_traded(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        assert (await trending(client))["markets"] == []
        async with seed.begin() as conn:
            a = await make_market(conn)
            b = await make_market(conn)
        body = await trending(client)
        # all scores 0: the newer market first
        assert [(x["id"], x["score"]) for x in body["markets"]] == [(b["id"], 0.0), (a["id"], 0.0)]

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"limit": 0}, "query.limit"),
            ({"limit": 101}, "query.limit"),
            ({"category": "c" * 65}, "query.category"),
            ({"fields": "components.volume24h"}, "query.fields"),
        ],
    )
    async def test_bad_input(
        self, client: httpx.AsyncClient, seed: AsyncEngine, params: dict[str, Any], field: str
    ) -> None:
        before = await row_counts(seed)
        r = await client.get("/v1/trending", params=params)
        assert r.status_code == 400
        assert [p["field"] for p in r.json()["details"]["fields"]] == [field]
        assert await row_counts(seed) == before


async def test_the_window_start_is_found_by_bisection(seed: AsyncEngine) -> None:
    """first_fill_id_since equals a scan, with gaps in the ids and runs of equal times."""
    rng = random.Random(5)
    t0 = utcnow() - timedelta(days=3)
    async with seed.begin() as conn:
        market_id = (await make_market(conn))["id"]
        assert await queries.first_fill_id_since(conn, t0) is None
        t = t0
        for _ in range(120):
            t += timedelta(minutes=rng.choice([0, 0, 1, 7, 60]))
            await make_fill(conn, market_id, traded_at=t)
        ids = [i for (i,) in await conn.execute(select(fill.c.id))]
        await conn.execute(delete(fill).where(fill.c.id.in_(rng.sample(ids, 40))))
        times = sorted((at, i) for i, at in await conn.execute(select(fill.c.id, fill.c.traded_at)))
        probes = [at for at, _ in times] + [at + timedelta(seconds=1) for at, _ in times]
        for since in [t0 - timedelta(days=1), *probes, t + timedelta(days=1)]:
            expected = (
                await conn.execute(select(func.min(fill.c.id)).where(fill.c.traded_at >= since))
            ).scalar()
            assert await queries.first_fill_id_since(conn, since) == expected, since
