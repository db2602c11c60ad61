"""The in-memory market list (``predmarket.markets.cache``): the same bodies as the SQL path over
random data and random queries, and kept current from the outbox."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.books import eventually, place, trade
from helpers.markets import make_event, make_market, wallet_address
from predmarket.kit.fields import FieldSelection, parse_fields
from predmarket.kit.pagination import CursorCodec, PageRequest
from predmarket.kit.schemas import format_utc
from predmarket.markets import service
from predmarket.markets.cache import MarketListCache
from predmarket.markets.queries import MarketFilter
from predmarket.markets.schemas import MarketSummary
from predmarket.settings import MarketListSettings, Settings
from predmarket.store.tables.market import market
from predmarket.store.uow import append_outbox

pytestmark = pytest.mark.db

CODEC = CursorCodec("a-test-secret-for-cursors-0123456789")
SUMMARY_FIELDS = [
    "id",
    "marketAddress",
    "question",
    "category",
    "tags",
    "resolved",
    "finalOutcome",
    "volume",
    "bestBidYes",
    "createdAt",
    "status",
    "closeAt",
    "eventSlug",
    "lastPriceYes",
]
# Labels and words chosen to make the two paths disagree if they could: case, non-ASCII
# letters (which SQLite does not fold), LIKE's wildcards, and ties everywhere.
CATEGORIES = ["sports", "Sports", "crypto", "", "météo", "a_b", "x%y"]
TAGS = ["a", "b", "c", "élection", "x_y", "50%"]
WORDS = ["Rain", "RAIN", "rain", "ÉTÉ", "été", "50%", "a_b", "aXb", "İstanbul", "Ünïcode", "k"]
TERMS = ["rain", "RAIN", "été", "ÉTÉ", "%", "_", "a_b", "istanbul", "ünï", "k", "zzz", "50"]


@pytest.fixture
def app_settings(app_settings: Settings) -> Settings:
    """The market list polling the outbox every 20 ms."""
    return app_settings.model_copy(update={"market_list": MarketListSettings(poll_interval_ms=20)})


@pytest.fixture
async def plain_client(app: FastAPI, seed: AsyncEngine) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app whose market list only follows the outbox (never reloaded); the app
    starts on the emptied database (``seed``), as a service starts on its database."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


# -- the two paths over random data --------------------------------------------------------------


async def seed_random(engine: AsyncEngine, rnd: random.Random, now: datetime) -> None:
    creators = [wallet_address(n) for n in range(3)]
    base = now - timedelta(days=10)
    async with engine.begin() as conn:
        events = [await make_event(conn, slug=f"group-{n}-{rnd.random()}") for n in range(2)]
        for _ in range(90):
            resolved = rnd.random() < 0.2
            await make_market(
                conn,
                question=" ".join(rnd.choices(WORDS, k=rnd.randint(1, 4))),
                category=rnd.choice(CATEGORIES),
                tags=rnd.sample(TAGS, rnd.randint(0, 3)),
                creator=rnd.choice(creators),
                event_group_id=rnd.choice([None, None, events[0]["id"], events[1]["id"]]),
                # few distinct values: ties on every sort key
                created_at=base + timedelta(hours=rnd.randint(0, 6)),
                close_at=now + timedelta(minutes=rnd.choice([-60, -1, 1, 60, 6000])),
                status="resolved" if resolved else "open",
                resolution=rnd.choice(["yes", "no", "invalid"]) if resolved else None,
                resolved_at=now - timedelta(minutes=5) if resolved else None,
                resolved_tx_id="cd" * 32 if resolved else None,
                volume=rnd.choice([0, 1, 10**18, 10**21, 2**200 + 7, rnd.randint(0, 10**24)]),
                trade_count=rnd.randint(0, 5),
                last_fill_id=rnd.choice([0, 0, 3, 7, rnd.randint(1, 10**6)]),
                last_trade_at=rnd.choice([None, now - timedelta(seconds=rnd.randint(1, 10**5))]),
                last_price_yes=rnd.choice([None, 1, 500, 999]),
                best_bid_yes=rnd.choice([0, 0, 100, 500, 999]),
                best_ask_yes=rnd.choice([0, 600, 1000]),
                best_bid_no=rnd.choice([0, 300]),
                best_ask_no=rnd.choice([0, 700]),
            )


def random_query(rnd: random.Random) -> dict[str, Any]:
    q: dict[str, Any] = {
        "status": rnd.choice(["open", "closed", "resolved", "all", "all"]),
        "sort": rnd.choice(["created-at", "volume", "best-bid-yes", "recently-traded"]),
        "descending": rnd.random() < 0.6,
        "limit": rnd.choice([1, 2, 3, 7, 50]),
        "facets": rnd.random() < 0.3,
        "offset": rnd.random() < 0.25,
        "fields": None,
        "category": None,
        "tags": None,
        "q": None,
        "creator": None,
        "min_volume": None,
    }
    if rnd.random() < 0.3:
        q["category"] = rnd.choice([*CATEGORIES, "nothing"])
    if rnd.random() < 0.3:
        q["tags"] = ",".join(rnd.sample([*TAGS, "A", "none"], rnd.randint(1, 2)))
    if rnd.random() < 0.3:
        q["q"] = " ".join(rnd.sample(TERMS, rnd.randint(1, 2)))
    if rnd.random() < 0.2:
        q["creator"] = wallet_address(rnd.randint(0, 3))
    if rnd.random() < 0.2:
        q["min_volume"] = rnd.choice([0, 1, 10**18 + 1, 10**21, 2**200])
    if rnd.random() < 0.2:
        q["fields"] = ",".join(rnd.sample(SUMMARY_FIELDS, rnd.randint(1, 4)))
    return q


def market_filter(q: dict[str, Any]) -> MarketFilter:
    return MarketFilter(
        status=q["status"],
        category=q["category"],
        tags=service.parse_tags(q["tags"]),
        terms=[[t] for t in service.parse_terms(q["q"], field="query.q")],
        creator=q["creator"],
        min_volume=q["min_volume"],
    )


async def both_paths(
    engine: AsyncEngine,
    cache: MarketListCache,
    q: dict[str, Any],
    page: PageRequest,
    fields: FieldSelection,
    now: datetime,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    where = market_filter(q)
    options: dict[str, Any] = {
        "sort": q["sort"],
        "descending": q["descending"],
        "facets": q["facets"],
    }
    async with engine.connect() as conn:
        sql = await service.list_markets(conn, page=page, where=where, now=now, **options)
    memory = cache.page_json(where, page=page, fields=fields, now=now, **options)
    sql_body = json.loads(service.market_page_json(sql, fields))
    return sql_body, None if memory is None else json.loads(memory)


@pytest.mark.parametrize("data_seed", [1, 2, 3])
async def test_memory_and_sql_return_the_same_pages(seed: AsyncEngine, data_seed: int) -> None:
    """Random markets (ties on every sort key, case and non-ASCII labels, LIKE wildcards in the
    text) and random queries, each walked page by page: identical bodies, cursors included."""
    rnd = random.Random(data_seed)
    now = datetime.now(UTC)
    await seed_random(seed, rnd, now)
    cache = MarketListCache(seed)
    await cache.reload()
    assert cache.ready and len(cache) == 90
    sqlite = seed.dialect.name == "sqlite"
    compared = declined = 0
    for n in range(150):
        q = random_query(rnd)
        fields = parse_fields(q["fields"], SUMMARY_FIELDS, ("id",))
        digest = f"query-{n}"
        if q["offset"]:
            pages = [
                PageRequest(limit=q["limit"], codec=CODEC, query=digest, page=p) for p in range(3)
            ]
        else:
            pages = [PageRequest(limit=q["limit"], codec=CODEC, query=digest)]
        walked = 0
        while pages and walked < 4:
            page = pages.pop(0)
            walked += 1
            sql, memory = await both_paths(seed, cache, q, page, fields, now)
            non_ascii = any(not t.isascii() for t in (q["q"] or "").split())
            if memory is None:
                # Only PostgreSQL's own lower() can fold a non-ASCII term.
                assert not sqlite and non_ascii, q
                declined += 1
                break
            assert memory == sql, (q, page)
            compared += 1
            cursor = sql["pagination"]["nextCursor"]
            if cursor is not None:
                after = CODEC.decode(cursor, digest)
                pages.append(PageRequest(limit=q["limit"], codec=CODEC, query=digest, after=after))
    assert compared > 150
    assert declined == 0 or not sqlite


async def test_the_summary_json_is_the_schema_s(seed: AsyncEngine) -> None:
    """Pre-rendered items validate as MarketSummary and carry the status at request time."""
    now = datetime.now(UTC)
    async with seed.begin() as conn:
        m = await make_market(conn, close_at=now + timedelta(minutes=1), tags=["b", "a"])
    cache = MarketListCache(seed)
    await cache.reload()
    page = PageRequest(limit=5, codec=CODEC, query="q")
    for at, status in ((now, "open"), (now + timedelta(minutes=2), "closed")):
        body = cache.page_json(
            MarketFilter(status="all"),
            sort="created-at",
            descending=True,
            page=page,
            facets=False,
            fields=FieldSelection(),
            now=at,
        )
        assert body is not None
        [item] = json.loads(body)["markets"]
        assert MarketSummary.model_validate(item).status == status
        assert item["id"] == m["id"] and item["tags"] == ["a", "b"]


# -- following the outbox ------------------------------------------------------------------------


async def announce(conn: Any, row: dict[str, Any]) -> None:
    """The outbox row the indexer writes with a new market (apply_registry_batch)."""
    await append_outbox(
        conn,
        topic=f"market:{row['market_address']}:orders",
        operation="insert",
        entity="market",
        key={"marketAddress": row["market_address"]},
        payload={"id": row["id"], "marketAddress": row["market_address"], "status": "open"},
        source="indexer",
    )


async def listed(client: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    r = await client.get("/v1/markets", params={"status": "all", **params})
    assert r.status_code == 200, r.text
    markets: list[dict[str, Any]] = r.json()["markets"]
    return markets


class TestFollowing:
    async def test_a_new_market_is_listed_within_the_poll_period(
        self, plain_client: httpx.AsyncClient, seed: AsyncEngine, app: FastAPI
    ) -> None:
        assert app.state.markets_cache.ready
        async with seed.begin() as conn:
            m = await make_market(conn, question="Fresh market?", tags=["new"])
            await announce(conn, m)
        start = time.monotonic()
        await eventually(lambda: self._has(plain_client, m["id"]), timeout=5)
        # polling every 20 ms: well under a second even on a loaded machine
        assert time.monotonic() - start < 2.0
        [item] = await listed(plain_client, tags="new")
        assert item["question"] == "Fresh market?" and item["tags"] == ["new"]

    @staticmethod
    async def _has(client: httpx.AsyncClient, market_id: int) -> bool:
        return market_id in [m["id"] for m in await listed(client)]

    async def test_a_row_without_its_outbox_event_is_not_seen(
        self, plain_client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        """The list follows the outbox, not the table: proof that requests are served from
        memory (the SQL path would list this row at once)."""
        async with seed.begin() as conn:
            silent = await make_market(conn)
            announced = await make_market(conn)
            await announce(conn, announced)
        await eventually(lambda: self._has(plain_client, announced["id"]), timeout=5)
        assert not await self._has(plain_client, silent["id"])

    async def test_trades_and_resolution_move_the_market(
        self, plain_client: httpx.AsyncClient, seed: AsyncEngine, app: FastAPI
    ) -> None:
        async with seed.begin() as conn:
            a = await make_market(conn, question="A?")
            b = await make_market(conn, question="B?")
            await announce(conn, a)
            await announce(conn, b)
        await eventually(lambda: self._has(plain_client, b["id"]), timeout=5)
        async with seed.begin() as conn:
            maker = await place(conn, a, side="sell", price=600, quantity=10**18)
        async with seed.begin() as conn:
            await trade(conn, a, maker, quantity=10**18)

        async def volume_first() -> bool:
            top = await listed(plain_client, sort="volume", limit=1)
            return bool(top) and top[0]["id"] == a["id"] and top[0]["volume"] == str(6 * 10**17)

        await eventually(volume_first, timeout=5)
        [traded] = [m for m in await listed(plain_client) if m["id"] == a["id"]]
        assert traded["tradeCount"] == 1 and traded["lastPriceYes"] == 600
        recent = await listed(plain_client, sort="recently-traded", limit=1)
        assert recent[0]["id"] == a["id"]

        # Resolution: the row changes and a market frame says so.
        async with seed.begin() as conn:
            await conn.execute(
                update(market)
                .where(market.c.id == b["id"])
                .values(status="resolved", resolution="no", resolved_at=datetime.now(UTC))
            )
            await append_outbox(
                conn,
                topic=f"market:{b['market_address']}:orders",
                operation="update",
                entity="market",
                key={"marketAddress": b["market_address"]},
                payload={"status": "resolved", "finalOutcome": "no", "resolved": True},
                source="indexer",
            )

        async def resolved() -> bool:
            found = await listed(plain_client, status="resolved")
            return [m["id"] for m in found] == [b["id"]] and found[0]["finalOutcome"] == "no"

        await eventually(resolved, timeout=5)
        assert b["id"] not in [m["id"] for m in await listed(plain_client, status="open")]
        cache: MarketListCache = app.state.markets_cache
        assert cache.last_event_id > 0


class TestNotify:
    @pytest.fixture
    def app_settings(self, app_settings: Settings) -> Settings:
        """A poll period far longer than the test: only notify() can explain a prompt update."""
        return app_settings.model_copy(
            update={"market_list": MarketListSettings(poll_interval_ms=600_000)}
        )

    async def test_notify_polls_at_once(
        self, plain_client: httpx.AsyncClient, seed: AsyncEngine, app: FastAPI
    ) -> None:
        cache: MarketListCache = app.state.markets_cache
        await asyncio.sleep(0.05)  # let the follower reach its (long) sleep
        async with seed.begin() as conn:
            m = await make_market(conn)
            await announce(conn, m)
        await asyncio.sleep(0.3)
        assert m["id"] not in [x["id"] for x in await listed(plain_client)]
        cache.notify()
        await eventually(
            lambda: TestFollowing._has(plain_client, m["id"]),
            timeout=2,
        )


# -- through HTTP --------------------------------------------------------------------------------


async def test_cursor_paging_and_mismatch_from_memory(
    plain_client: httpx.AsyncClient, seed: AsyncEngine, app: FastAPI
) -> None:
    base = datetime.now(UTC) - timedelta(hours=1)
    async with seed.begin() as conn:
        made = []
        for n in range(7):
            m = await make_market(conn, created_at=base + timedelta(minutes=n // 2))
            await announce(conn, m)
            made.append(m)
    await app.state.markets_cache.sync()
    newest_first = sorted(made, key=lambda m: (m["created_at"], m["id"]), reverse=True)
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 3, "status": "open"}
        if cursor:
            params["cursor"] = cursor
        r = await plain_client.get("/v1/markets", params=params)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        body = r.json()
        seen += [m["id"] for m in body["markets"]]
        cursor = body["pagination"]["nextCursor"]
        if cursor is None:
            break
        # the same cursor with another filter is refused
        bad = await plain_client.get(
            "/v1/markets", params={"limit": 3, "status": "all", "cursor": cursor}
        )
        assert bad.status_code == 400
        assert bad.json()["details"]["fields"][0]["field"] == "query.cursor"
        assert bad.json()["details"]["fields"][0]["type"] == "cursor_query_mismatch"
    assert seen == [m["id"] for m in newest_first]
    r = await plain_client.get("/v1/markets", params={"page": 1, "limit": 3, "facets": "true"})
    body = r.json()
    assert body["pagination"] == {"limit": 3, "nextCursor": None, "page": 1, "total": 7}
    assert body["facets"]["status"] == [{"value": "open", "count": 7}]
    r = await plain_client.get("/v1/markets", params={"fields": "question,createdAt", "limit": 1})
    [item] = r.json()["markets"]
    assert item == {
        "id": newest_first[0]["id"],
        "question": newest_first[0]["question"],
        "createdAt": format_utc(newest_first[0]["created_at"]),
    }


async def test_without_the_cache_the_database_answers(
    seed: AsyncEngine, app_settings: Settings
) -> None:
    """``market_list.enabled = false``: every list is answered by SQL, with the same shape."""
    from predmarket.app import create_app

    settings = app_settings.model_copy(update={"market_list": MarketListSettings(enabled=False)})
    app = create_app(settings)
    async with seed.begin() as conn:
        m = await make_market(conn)
    async with app.router.lifespan_context(app):
        assert app.state.markets_cache is None
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            r = await c.get("/v1/markets", params={"fields": "question"})
    assert r.status_code == 200
    assert r.json() == {
        "markets": [{"id": m["id"], "question": m["question"]}],
        "pagination": {"limit": 50, "nextCursor": None},
    }
