"""The in-memory order books: every market's open orders, aggregated per price, kept current
from the outbox, so ``…/orderbook`` and ``…/prices`` never query the database per request.

How it stays right (``docs/books.md``):

- **Loading.** A book is built from one database snapshot (``queries.snapshot``) holding the
  market row (its ``book_version`` and last trade), its open orders and the outbox's last id
  ``E``; the indexer writes the read model and the outbox in one transaction, so the book is
  exactly the state after event ``E``. At start every market is loaded at once; a market the
  cache does not know yet (created since, or asked for before the first load finished) is loaded
  on its own when an event or a request names it.
- **Following.** One task reads ``outbox WHERE id > last_seen ORDER BY id`` every
  ``poll_interval_ms`` (at once after :meth:`BookCache.notify`, for a broker that knows of new
  rows). Rows of ``market:{address}:orders`` change the book — ``order`` events carry the full
  order view, so an order is replaced, not patched, and the version goes up by one; ``market``
  events may carry an absolute ``bookVersion`` and the last trade — and rows of
  ``market:{address}:fills`` move the price. A row at or below a book's ``event_id`` is already
  in it and is skipped; ``user:`` copies of the same events are ignored. The outbox's ordering
  guarantee (``docs/data-model.md``) makes ``id > last_seen`` miss nothing.
- **Reading.** Applying a batch never awaits, so a reader sees a book between batches, never
  half of one. A snapshot's JSON is rendered once per (book state, depth) and reused.

Nothing here is the only copy of anything: a restart rebuilds it from the database.
"""

from __future__ import annotations

import calendar
import logging
from bisect import bisect_left, insort
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.books import queries
from predmarket.books.schemas import BookSide, OrderBook, PriceLevel, PriceQuote
from predmarket.exchange import TICK_SCALE
from predmarket.kit.follower import OutboxFollower
from predmarket.settings import BookSettings

log = logging.getLogger("predmarket.books")

_TOPIC_PREFIX: Final = "market:"
_ORDERS_SUFFIX: Final = ":orders"
_FILLS_SUFFIX: Final = ":fills"
_OUTCOMES: Final = {"yes": 0, "no": 1}
_SIDES: Final = {"buy": 0, "sell": 1}
#: What an empty side of a book reports (spec 2.1's 0..1000 summary ticks).
EMPTY_SIDE: Final = 0


class BookEventError(ValueError):
    """An outbox row the cache cannot read (it is logged and skipped)."""


# -- one side of one outcome's book ------------------------------------------------------------


class _Levels:
    """Price → total resting quantity and order count, with the prices kept sorted."""

    __slots__ = ("counts", "prices", "totals")

    def __init__(self) -> None:
        self.totals: dict[int, int] = {}
        self.counts: dict[int, int] = {}
        self.prices: list[int] = []

    def add(self, price: int, quantity: int) -> None:
        if price in self.counts:
            self.totals[price] += quantity
            self.counts[price] += 1
        else:
            self.totals[price] = quantity
            self.counts[price] = 1
            insort(self.prices, price)

    def remove(self, price: int, quantity: int) -> None:
        count = self.counts.get(price)
        if count is None:
            raise BookEventError(f"no resting order at {price} to remove")
        if count == 1:
            del self.totals[price], self.counts[price]
            del self.prices[bisect_left(self.prices, price)]
        else:
            self.counts[price] = count - 1
            self.totals[price] -= quantity

    def best(self, *, highest: bool) -> int:
        if not self.prices:
            return EMPTY_SIDE
        return self.prices[-1] if highest else self.prices[0]

    def top(self, depth: int, *, highest: bool) -> list[PriceLevel]:
        prices = self.prices[: -depth - 1 : -1] if highest else self.prices[:depth]
        return [
            PriceLevel(price=p, total_quantity=self.totals[p], order_count=self.counts[p])
            for p in prices
        ]


@dataclass(slots=True)
class _Resting:
    book: int  # index into MarketBook._levels: outcome * 2 + side
    price: int
    remaining: int


# -- one market ----------------------------------------------------------------------------------


class MarketBook:
    """A market's two books (yes and no, each bids and asks), its version, its realtime cursor
    and its last trade price."""

    __slots__ = (
        "_levels",
        "_orders",
        "_rendered",
        "address",
        "event_id",
        "last_trade_ms",
        "last_yes_tick",
        "version",
    )

    def __init__(
        self,
        address: str,
        *,
        event_id: int,
        version: int,
        last_yes_tick: int | None = None,
        last_trade_ms: int = 0,
    ) -> None:
        self.address = address
        #: Every event of this market's topics up to this outbox id is in the book.
        self.event_id = event_id
        self.version = version
        self.last_yes_tick = last_yes_tick
        self.last_trade_ms = last_trade_ms
        # yes bids, yes asks, no bids, no asks
        self._levels = (_Levels(), _Levels(), _Levels(), _Levels())
        self._orders: dict[int, _Resting] = {}
        self._rendered: dict[int, bytes] = {}

    # -- changes ---------------------------------------------------------------------------------

    def set_order(
        self, order_id: int, *, side: str, outcome: str, price: int, remaining: int, open_: bool
    ) -> None:
        """The order's latest state: resting with ``remaining``, or gone (filled, cancelled)."""
        old = self._orders.pop(order_id, None)
        if old is not None:
            self._levels[old.book].remove(old.price, old.remaining)
        if open_ and remaining > 0:
            book = _OUTCOMES[outcome] * 2 + _SIDES[side]
            self._orders[order_id] = _Resting(book, price, remaining)
            self._levels[book].add(price, remaining)
        self._rendered.clear()

    def set_last_trade(self, yes_tick: int | None, at_ms: int) -> None:
        self.last_yes_tick = yes_tick
        self.last_trade_ms = at_ms

    def changed(self) -> None:
        self._rendered.clear()

    # -- reads -----------------------------------------------------------------------------------

    @property
    def open_orders(self) -> int:
        return len(self._orders)

    def snapshot(self, depth: int) -> OrderBook:
        yes_bids, yes_asks, no_bids, no_asks = self._levels
        return OrderBook(
            market_address=self.address,
            yes=BookSide(
                bids=yes_bids.top(depth, highest=True), asks=yes_asks.top(depth, highest=False)
            ),
            no=BookSide(
                bids=no_bids.top(depth, highest=True), asks=no_asks.top(depth, highest=False)
            ),
            best_bid_yes=yes_bids.best(highest=True),
            best_ask_yes=yes_asks.best(highest=False),
            best_bid_no=no_bids.best(highest=True),
            best_ask_no=no_asks.best(highest=False),
            version=self.version,
            event_id=str(self.event_id),
        )

    def render(self, depth: int) -> bytes:
        """The snapshot's JSON, rendered once per state of the book and depth."""
        body = self._rendered.get(depth)
        if body is None:
            body = self.snapshot(depth).model_dump_json(by_alias=True).encode()
            self._rendered[depth] = body
        return body

    def quote(self) -> PriceQuote:
        """Spec 2.3 from the last trade's yes tick (0.5 / 0.5 / 0 before any trade)."""
        tick = self.last_yes_tick
        if tick is None:
            return PriceQuote(
                market_address=self.address, yes_price=0.5, no_price=0.5, price_timestamp=0
            )
        # Both from ints, so yesPrice + noPrice is 1 to the float's precision.
        return PriceQuote(
            market_address=self.address,
            yes_price=tick / TICK_SCALE,
            no_price=(TICK_SCALE - tick) / TICK_SCALE,
            price_timestamp=self.last_trade_ms,
        )

    def levels(self) -> dict[tuple[str, str, int], tuple[int, int]]:
        """Every level as ``(outcome, side, price) → (total quantity, order count)``."""
        out: dict[tuple[str, str, int], tuple[int, int]] = {}
        for outcome, o in _OUTCOMES.items():
            for side, s in _SIDES.items():
                levels = self._levels[o * 2 + s]
                for price in levels.prices:
                    out[(outcome, side, price)] = (levels.totals[price], levels.counts[price])
        return out


# -- reading outbox payloads ---------------------------------------------------------------------


def _int(value: object, name: str) -> int:
    # Ids and ticks come as JSON numbers, amounts as decimal strings; accept either.
    if isinstance(value, bool):
        raise BookEventError(f"{name} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise BookEventError(f"{name} is not an integer")


def _choice(value: object, allowed: Mapping[str, int], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise BookEventError(f"{name} is not one of {', '.join(allowed)}")
    return value


def epoch_ms(value: datetime) -> int:
    """Milliseconds since the epoch, exactly (no float rounding)."""
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return calendar.timegm(utc.utctimetuple()) * 1000 + utc.microsecond // 1000


def _ms(value: object, name: str) -> int:
    if not isinstance(value, str):
        raise BookEventError(f"{name} is not a date-time")
    try:
        return epoch_ms(datetime.fromisoformat(value))
    except ValueError:
        raise BookEventError(f"{name} is not a date-time") from None


def _market_topic(topic: str) -> tuple[str, bool] | None:
    """``market:{address}:orders`` → (address, True); ``…:fills`` → (address, False)."""
    if not topic.startswith(_TOPIC_PREFIX):
        return None
    if topic.endswith(_ORDERS_SUFFIX):
        return topic[len(_TOPIC_PREFIX) : -len(_ORDERS_SUFFIX)], True
    if topic.endswith(_FILLS_SUFFIX):
        return topic[len(_TOPIC_PREFIX) : -len(_FILLS_SUFFIX)], False
    return None


def _yes_tick(kind_outcome: str, price: int) -> int:
    # Trade.price is the maker's tick of the maker's outcome, in every kind of trade: a normal
    # trade has one outcome on both legs, and in a mint or merge the maker's yes-equivalent is
    # its own tick (yes maker) or 1000 - tick (no maker).
    return price if kind_outcome == "yes" else TICK_SCALE - price


def _apply_order(book: MarketBook, operation: str, payload: Mapping[str, object]) -> None:
    order_id = _int(payload.get("orderId"), "orderId")
    if operation == "delete":
        book.set_order(order_id, side="buy", outcome="yes", price=0, remaining=0, open_=False)
        return
    status = payload.get("status")
    book.set_order(
        order_id,
        side=_choice(payload.get("side"), _SIDES, "side"),
        outcome=_choice(payload.get("outcome"), _OUTCOMES, "outcome"),
        price=_int(payload.get("price"), "price"),
        remaining=_int(payload.get("remaining"), "remaining"),
        open_=status == "open",
    )


def _apply_market(book: MarketBook, payload: Mapping[str, object]) -> None:
    # "The changed fields" of the market: only those the book holds matter here.
    if "bookVersion" in payload:
        book.version = _int(payload["bookVersion"], "bookVersion")
    if "lastPriceYes" in payload:
        raw = payload["lastPriceYes"]
        tick = None if raw is None else _int(raw, "lastPriceYes")
        at = payload.get("lastTradeAt")
        book.set_last_trade(tick, book.last_trade_ms if at is None else _ms(at, "lastTradeAt"))
    book.changed()


def _apply_trade(book: MarketBook, payload: Mapping[str, object]) -> None:
    outcome = _choice(payload.get("outcome"), _OUTCOMES, "outcome")
    price = _int(payload.get("price"), "price")
    book.set_last_trade(_yes_tick(outcome, price), _ms(payload.get("timestamp"), "timestamp"))


def _build(rows: queries.BookRows) -> list[MarketBook]:
    by_id: dict[int, MarketBook] = {}
    for m in rows.markets:
        last_at = m["last_trade_at"]
        by_id[m["id"]] = MarketBook(
            m["market_address"],
            event_id=rows.event_id,
            version=int(m["book_version"]),
            last_yes_tick=m["last_price_yes"],
            last_trade_ms=0 if last_at is None else epoch_ms(last_at),
        )
    for o in rows.orders:
        book = by_id.get(o["market_id"])
        if book is not None:
            book.set_order(
                int(o["chain_order_id"]),
                side=o["side"],
                outcome=o["outcome"],
                price=int(o["price"]),
                remaining=int(o["remaining"]),
                open_=True,
            )
    return list(by_id.values())


# -- the cache -----------------------------------------------------------------------------------


class BookCache(OutboxFollower):
    """Every market's book in memory; see the module's docstring. One per process
    (``app.state.books``), started and stopped by the app's lifespan (:func:`running`)."""

    label = "order books"

    def __init__(
        self, engine: AsyncEngine, *, poll_interval_s: float = 0.2, batch_size: int = 1000
    ) -> None:
        super().__init__(engine, poll_interval_s=poll_interval_s, batch_size=batch_size)
        self._books: dict[str, MarketBook] = {}

    # -- state -----------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once every market has been loaded."""
        return self._ready

    def __len__(self) -> int:
        return len(self._books)

    def peek(self, address: str) -> MarketBook | None:
        """The book if it is loaded (never touches the database)."""
        return self._books.get(address)

    async def get(self, address: str) -> MarketBook | None:
        """The market's book; a market not loaded yet is loaded from the database (None when
        there is no such market)."""
        book = self._books.get(address)
        if book is not None:
            return book
        await self._load([address])
        return self._books.get(address)

    # -- life cycle ------------------------------------------------------------------------------

    # -- loading ---------------------------------------------------------------------------------

    def _install(self, books: Iterable[MarketBook]) -> None:
        for book in books:
            held = self._books.get(book.address)
            # A held book reflects everything up to the larger of its load point and what the
            # poller has applied since; keep whichever of the two books is fresher.
            if held is None or max(held.event_id, self._last_seen) < book.event_id:
                self._books[book.address] = book

    async def _load(self, addresses: list[str]) -> None:
        async with queries.snapshot(self._engine) as conn:
            rows = await queries.load_books(conn, addresses)
        self._install(_build(rows))

    async def _load_all(self) -> None:
        async with self._lock:
            async with queries.snapshot(self._engine) as conn:
                rows = await queries.load_books(conn)
            self._install(_build(rows))
            self._last_seen = max(self._last_seen, rows.event_id)
            self._ready = True
            log.info(
                "order books: %d markets, %d open orders, at event %d",
                len(rows.markets),
                len(rows.orders),
                rows.event_id,
            )

    # -- following -------------------------------------------------------------------------------

    async def _poll_once(self) -> int:
        async with self._lock:
            async with self._engine.connect() as conn:
                rows = await queries.outbox_after(conn, self._last_seen, self._batch_size)
            if not rows:
                return 0
            unknown = sorted(
                {
                    target[0]
                    for row in rows
                    if (target := _market_topic(row["topic"])) is not None
                    and target[0] not in self._books
                }
            )
            if unknown:
                await self._load(unknown)
            # From here to the end nothing awaits: readers never see half a batch.
            for row in rows:
                self._apply(row)
            self._last_seen = int(rows[-1]["id"])
            return len(rows)

    def _apply(self, row: RowMapping) -> None:
        target = _market_topic(row["topic"])
        if target is None:
            return  # user:, dispute:, settings: … topics say nothing new about books
        address, orders_topic = target
        book = self._books.get(address)
        event_id = int(row["id"])
        if book is None or event_id <= book.event_id:
            return
        entity = row["entity"]
        payload = row["payload"] if isinstance(row["payload"], Mapping) else {}
        try:
            if orders_topic:
                if entity == "order":
                    book.version += 1
                    _apply_order(book, row["operation"], payload)
                elif entity == "market":
                    _apply_market(book, payload)
                else:
                    return  # a newer entity: forward compatible
                book.event_id = event_id
            elif entity == "trade":
                _apply_trade(book, payload)
        except BookEventError as e:
            log.error("order books: outbox event %d of %s skipped: %s", event_id, row["topic"], e)
            if orders_topic:
                book.event_id = event_id
            book.changed()


@asynccontextmanager
async def running(engine: AsyncEngine, settings: BookSettings) -> AsyncIterator[BookCache]:
    """``app.state.books = await stack.enter_async_context(running(engine, settings.books))``."""
    cache = BookCache(
        engine, poll_interval_s=settings.poll_interval_ms / 1000, batch_size=settings.batch_size
    )
    await cache.start()
    try:
        yield cache
    finally:
        await cache.stop()
