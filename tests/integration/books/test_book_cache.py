"""The in-memory books follow the outbox: after any sequence of order events written as the
indexer writes them, every book equals the aggregate of the open orders in the database, and its
version equals the market's ``book_version``."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.books import (
    SHARE,
    book_version,
    cancel,
    eventually,
    open_levels,
    place,
    trade,
)
from helpers.markets import make_market, wallet_address
from predmarket.books.cache import BookCache, MarketBook
from predmarket.store.uow import append_outbox

pytestmark = pytest.mark.db

LOT = SHARE // 10


@pytest.fixture
async def cache(seed: AsyncEngine) -> AsyncIterator[BookCache]:
    books = BookCache(seed, poll_interval_s=0.01, batch_size=7)  # small batches: many polls
    await books.start()
    try:
        yield books
    finally:
        await books.stop()


async def assert_matches_db(engine: AsyncEngine, book: MarketBook, market_id: int) -> None:
    assert book.levels() == await open_levels(engine, market_id)
    assert book.version == await book_version(engine, market_id)


class TestLoading:
    async def test_start_loads_every_market(self, seed: AsyncEngine) -> None:
        async with seed.begin() as conn:
            m1 = await make_market(conn)
            m2 = await make_market(conn)
            a = await place(conn, m1, side="buy", outcome="yes", price=600, quantity=3 * LOT)
            await place(conn, m1, side="buy", outcome="yes", price=600, quantity=2 * LOT)
            await place(conn, m1, side="sell", outcome="no", price=450, quantity=LOT)
            await trade(conn, m1, a, quantity=LOT)
            gone = await place(conn, m2, side="sell", outcome="yes", price=700, quantity=LOT)
            await cancel(conn, m2, gone)
        books = BookCache(seed)
        await books.start()
        try:
            assert books.ready and len(books) == 2
            one, two = books.peek(m1["market_address"]), books.peek(m2["market_address"])
            assert one is not None and two is not None
            await assert_matches_db(seed, one, m1["id"])
            await assert_matches_db(seed, two, m2["id"])
            assert one.levels()[("yes", "buy", 600)] == (4 * LOT, 2)
            assert two.levels() == {} and two.version == 2
            assert one.quote().yes_price == 0.6
        finally:
            await books.stop()

    async def test_an_empty_database(self, cache: BookCache) -> None:
        assert cache.ready and len(cache) == 0 and cache.last_event_id >= 0
        assert await cache.get(wallet_address()) is None

    async def test_an_unmigrated_database_is_retried_not_fatal(self, empty_database: Any) -> None:
        from predmarket.store import migrate
        from predmarket.store.engine import create_engine

        with empty_database() as url:
            engine = create_engine(url)
            books = BookCache(engine, poll_interval_s=0.01)
            try:
                await books.start()  # logs the failure, keeps trying in the background
                assert not books.ready
                await migrate.upgrade_async(engine)
                await eventually(lambda: books.ready)
            finally:
                await books.stop()
                await engine.dispose()


class TestFollowing:
    async def test_place_fill_cancel(self, seed: AsyncEngine, cache: BookCache) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        book = await cache.get(m["market_address"])
        assert book is not None and book.levels() == {} and book.version == 0
        async with seed.begin() as conn:
            bid = await place(conn, m, side="buy", outcome="yes", price=550, quantity=5 * LOT)
            ask = await place(conn, m, side="sell", outcome="no", price=300, quantity=2 * LOT)
        await cache.sync()
        await assert_matches_db(seed, book, m["id"])
        assert book.levels() == {
            ("yes", "buy", 550): (5 * LOT, 1),
            ("no", "sell", 300): (2 * LOT, 1),
        }

        async with seed.begin() as conn:
            await trade(conn, m, bid, quantity=2 * LOT)  # partial fill
        await cache.sync()
        await assert_matches_db(seed, book, m["id"])
        assert book.levels()[("yes", "buy", 550)] == (3 * LOT, 1)

        async with seed.begin() as conn:
            await trade(conn, m, bid, quantity=3 * LOT)  # the rest: leaves the book
            await cancel(conn, m, ask)
        await cache.sync()
        await assert_matches_db(seed, book, m["id"])
        assert book.levels() == {} and book.version == 5

    async def test_follows_in_the_background(self, seed: AsyncEngine, cache: BookCache) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            await place(conn, m, price=420, quantity=LOT)
        await eventually(lambda: (b := cache.peek(m["market_address"])) and b.version == 1)
        book = cache.peek(m["market_address"])
        assert book is not None
        await assert_matches_db(seed, book, m["id"])

    async def test_notify_polls_at_once(self, seed: AsyncEngine) -> None:
        books = BookCache(seed, poll_interval_s=60)
        await books.start()
        try:
            async with seed.begin() as conn:
                m = await make_market(conn)
                await place(conn, m, quantity=LOT)
            books.notify()
            await eventually(lambda: books.peek(m["market_address"]) is not None, timeout=5)
        finally:
            await books.stop()

    async def test_event_id_is_the_markets_last_event(
        self, seed: AsyncEngine, cache: BookCache
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            other = await make_market(conn)
        book = await cache.get(m["market_address"])
        assert book is not None
        async with seed.begin() as conn:
            await place(conn, m, quantity=LOT)
        last = await cache.sync()
        assert book.event_id == last - 1  # the user: copy came after the market's frame
        async with seed.begin() as conn:
            await place(conn, other, quantity=LOT)
        assert await cache.sync() > last
        assert book.event_id == last - 1  # another market's events do not move this cursor

    async def test_a_book_loaded_ahead_of_the_poller_counts_nothing_twice(
        self, seed: AsyncEngine
    ) -> None:
        books = BookCache(seed, poll_interval_s=60)  # polls once at start, then only on sync
        await books.start()
        try:
            async with seed.begin() as conn:
                m = await make_market(conn)
                o = await place(conn, m, price=300, quantity=4 * LOT)
                await place(conn, m, price=300, quantity=LOT)
                await cancel(conn, m, o)
            # Asked for before the poller saw any of it: loaded from the database, at its
            # snapshot, which already holds these events.
            book = await books.get(m["market_address"])
            assert book is not None
            await assert_matches_db(seed, book, m["id"])
            await books.sync()  # the same events arrive from the outbox: skipped
            await assert_matches_db(seed, book, m["id"])
            assert book.version == 3
        finally:
            await books.stop()

    async def test_an_unreadable_event_is_skipped(
        self, seed: AsyncEngine, cache: BookCache
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        book = await cache.get(m["market_address"])
        assert book is not None
        async with seed.begin() as conn:
            await append_outbox(
                conn,
                topic=f"market:{m['market_address']}:orders",
                operation="insert",
                entity="order",
                key={"marketAddress": m["market_address"], "orderId": 1},
                payload={"orderId": "one", "side": "sideways"},
                source="indexer",
            )
            await append_outbox(
                conn,
                topic=f"market:{m['market_address']}:orders",
                operation="insert",
                entity="something-new",
                key={},
                payload={},
                source="indexer",
            )
            await place(conn, m, price=100, quantity=LOT)
        await cache.sync()
        assert book.levels() == {("yes", "buy", 100): (LOT, 1)}


class TestPrices:
    async def test_no_trade_is_half_and_half(self, seed: AsyncEngine, cache: BookCache) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        book = await cache.get(m["market_address"])
        assert book is not None
        quote = book.quote()
        assert (quote.yes_price, quote.no_price, quote.price_timestamp) == (0.5, 0.5, 0)

    @pytest.mark.parametrize(
        ("kind", "maker_outcome", "maker_side", "price", "yes"),
        [
            ("normal", "yes", "sell", 640, 0.64),
            ("normal", "no", "sell", 300, 0.7),  # a no trade at 300 is yes at 700
            ("mint", "no", "buy", 250, 0.75),  # the maker bought no at 250: yes at 750
            ("merge", "yes", "sell", 810, 0.81),
        ],
    )
    async def test_the_last_trade_sets_the_price(
        self,
        seed: AsyncEngine,
        cache: BookCache,
        kind: str,
        maker_outcome: str,
        maker_side: str,
        price: int,
        yes: float,
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        book = await cache.get(m["market_address"])
        assert book is not None
        async with seed.begin() as conn:
            o = await place(
                conn, m, side=maker_side, outcome=maker_outcome, price=price, quantity=LOT
            )
            f = await trade(conn, m, o, quantity=LOT, kind=kind)
        await cache.sync()
        quote = book.quote()
        assert quote.yes_price == yes
        assert quote.no_price == pytest.approx(1 - yes)
        assert quote.yes_price + quote.no_price == pytest.approx(1.0)
        traded_at = f["traded_at"]
        assert quote.price_timestamp == int(traded_at.timestamp() * 1000)
        # A fresh load from the database agrees with the followed book.
        fresh = BookCache(seed)
        await fresh.start()
        try:
            again = fresh.peek(m["market_address"])
            assert again is not None and again.quote() == quote
        finally:
            await fresh.stop()


class TestRandomFlows:
    @pytest.mark.parametrize("seed_value", [1, 2, 3])
    async def test_books_equal_the_database(
        self, seed: AsyncEngine, cache: BookCache, seed_value: int
    ) -> None:
        rng = random.Random(seed_value)
        async with seed.begin() as conn:
            markets = [await make_market(conn) for _ in range(3)]
        owners = [wallet_address() for _ in range(4)]
        resting: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for step in range(60):
            async with seed.begin() as conn:
                for _ in range(rng.randint(1, 3)):
                    action = rng.random()
                    if action < 0.5 or not resting:
                        m = rng.choice(markets)
                        o = await place(
                            conn,
                            m,
                            owner=rng.choice(owners),
                            side=rng.choice(["buy", "sell"]),
                            outcome=rng.choice(["yes", "no"]),
                            price=rng.randint(1, 999),
                            quantity=rng.randint(1, 20) * LOT,
                        )
                        resting.append((m, o))
                    elif action < 0.8:
                        m, o = rng.choice(resting)
                        q = rng.randint(1, o["remaining"] // LOT) * LOT
                        await trade(conn, m, o, quantity=q, kind=rng.choice(["normal", "mint"]))
                        if o["remaining"] == 0:
                            resting.remove((m, o))
                    else:
                        m, o = resting.pop(rng.randrange(len(resting)))
                        await cancel(conn, m, o)
            if step % 7 == 0:
                await cache.sync()
        await cache.sync()
        for m in markets:
            book = cache.peek(m["market_address"])
            assert book is not None
            await assert_matches_db(seed, book, m["id"])
        # A cache started now, from the database alone, holds the same books.
        fresh = BookCache(seed)
        await fresh.start()
        try:
            for m in markets:
                a, b = cache.peek(m["market_address"]), fresh.peek(m["market_address"])
                assert a is not None and b is not None
                assert (a.levels(), a.version, a.quote()) == (b.levels(), b.version, b.quote())
                assert a.render(100) != b"" and a.snapshot(100).yes == b.snapshot(100).yes
        finally:
            await fresh.stop()
