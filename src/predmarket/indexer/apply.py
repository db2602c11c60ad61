"""Applying one event batch (one contract, one block) to the read model, inside its transaction.

The caller (``service.py``) opens the transaction, moves the checkpoint first
(``queries.claim_batch``) and calls :func:`apply_registry_batch` or :func:`apply_market_batch`;
these write the read model, the ``chain_event`` and ``indexed_tx`` rows, and the outbox rows —
appended last, just before the commit, as ``store.uow`` asks.

Order lifecycle from a market's events. Within one ``placeOrder`` transaction the contract emits
``OrderPlaced`` first — already carrying what rests after the placement's own matching
(``remaining`` 0: filled at once) — then one ``Trade`` per match in execution order (each reduces
its *maker*; the taker's remainder is already final), then the self-trade ``OrderCancelled``
events (reason ``self-trade``) of the taker owner's resting orders it met. ``resolve`` emits one
``OrderCancelled`` (reason ``resolved``) per resting order, then ``MarketResolved``. So every
order's ``remaining``, locks and status follow exactly, event by event.

Best bid/ask per book are exact: :class:`BookTops` counts the open orders per (side, outcome,
price) of each market the indexer touched, loaded once from the open orders of the market
(``ix_order_market_id_status_id``) and updated with every order event; an empty side is 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import JsonValue
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.alephium.address import contract_id_from_address
from predmarket.exchange import Outcome, Side, TradeKind, buy_lock, notional
from predmarket.indexer import queries as q
from predmarket.indexer.errors import IndexerError
from predmarket.indexer.events import (
    Claimed,
    MarketCreated,
    MarketResolved,
    OrderCancelled,
    OrderPlaced,
    TradeEvent,
    decode_market_event,
    decode_registry_event,
)
from predmarket.kit.schemas import format_utc
from predmarket.node.models import ContractEvent
from predmarket.store.tables.market import NO_ASK, NO_BID
from predmarket.store.uow import Operation, append_outbox

#: What an empty side of a book reports in the market row: 0 for bids and asks alike, the same
#: rule as the table's defaults and the order-book endpoint.
EMPTY_BID: Final = NO_BID
EMPTY_ASK: Final = NO_ASK
#: Largest block time a timestamp column can hold (year 9999).
_MAX_MS: Final = 253_402_300_799_999


def ms_to_datetime(ms: int) -> datetime:
    """Chain milliseconds as an aware UTC datetime (exact to the millisecond)."""
    ms = min(ms, _MAX_MS)
    return datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=(ms % 1000) * 1000)


@dataclass(frozen=True, slots=True)
class Batch:
    """The events one block logged for one contract: the node's event-counter unit."""

    contract: str
    counter: int
    block_hash: str
    timestamp: int
    events: tuple[ContractEvent, ...]

    @property
    def block_at(self) -> datetime:
        return ms_to_datetime(self.timestamp)


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    topic: str
    operation: Operation
    entity: str
    key: dict[str, JsonValue]
    payload: dict[str, JsonValue]


async def _record_events(conn: AsyncConnection, batch: Batch, now: datetime) -> None:
    """The batch's ``chain_event`` rows, first thing: an event applied before fails here."""
    await q.insert_chain_events(
        conn,
        [
            {
                "contract_address": batch.contract,
                "event_counter": batch.counter,
                "event_position": position,
                "event_index": event.event_index,
                "tx_id": event.tx_id,
                "block_hash": batch.block_hash,
                "block_at": batch.block_at,
                "fields": [dict(f) for f in event.fields],
                "applied_at": now,
            }
            for position, event in enumerate(batch.events)
        ],
    )


async def _record_txs(
    conn: AsyncConnection, batch: Batch, now: datetime, tx_markets: Mapping[str, int | None]
) -> None:
    await q.insert_indexed_txs(
        conn,
        [
            {"tx_id": tx, "block_hash": batch.block_hash, "market_id": m, "indexed_at": now}
            for tx, m in tx_markets.items()
        ],
    )


async def _append_all(conn: AsyncConnection, entries: Sequence[OutboxEntry], now: datetime) -> None:
    for e in entries:
        await append_outbox(
            conn,
            topic=e.topic,
            operation=e.operation,
            entity=e.entity,
            key=e.key,
            payload=e.payload,
            source="indexer",
            created_at=now,
        )


def orders_topic(market_address: str) -> str:
    return f"market:{market_address}:orders"


def fills_topic(market_address: str) -> str:
    return f"market:{market_address}:fills"


# -- the registry: markets appear ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewMarket:
    id: int
    address: str
    registry_index: int


async def apply_registry_batch(
    conn: AsyncConnection, batch: Batch, *, registry: str, now: datetime
) -> list[NewMarket]:
    """MarketCreated events: market rows, tags, event groups, tallies, the market's checkpoint."""
    await _record_events(conn, batch, now)
    created: list[NewMarket] = []
    outbox: list[OutboxEntry] = []
    tx_markets: dict[str, int | None] = {}
    at = batch.block_at
    for event in batch.events:
        ev = decode_registry_event(event.event_index, event.fields)
        market_id = await _create_market(conn, ev, batch, event, registry=registry, now=now)
        created.append(NewMarket(market_id, ev.market, ev.index))
        tx_markets[event.tx_id] = market_id
        outbox.append(
            OutboxEntry(
                orders_topic(ev.market),
                "insert",
                "market",
                {"marketAddress": ev.market},
                _market_created_payload(market_id, ev, event.tx_id, at),
            )
        )
    await _record_txs(conn, batch, now, tx_markets)
    await _append_all(conn, outbox, now)
    return created


async def _create_market(
    conn: AsyncConnection,
    ev: MarketCreated,
    batch: Batch,
    event: ContractEvent,
    *,
    registry: str,
    now: datetime,
) -> int:
    at = batch.block_at
    meta = ev.metadata
    group_id: int | None = None
    if meta.event_slug is not None:
        group_id = await q.event_group_id(
            conn,
            slug=meta.event_slug,
            title=meta.event_title or meta.event_slug,
            category_name=ev.category,
            created_at=at,
        )
    market_id = await q.insert_market(
        conn,
        {
            "market_address": ev.market,
            "contract_id": contract_id_from_address(ev.market).hex(),
            "registry_address": registry,
            "registry_index": ev.index,
            "yes_token_id": ev.yes_token,
            "no_token_id": ev.no_token,
            "question": ev.question,
            "category": ev.category,
            "creator": ev.creator,
            "event_group_id": group_id,
            "close_at": ms_to_datetime(ev.close_time_ms),
            "metadata": meta.to_json(),
            "created_at": at,
            "created_block_hash": batch.block_hash,
            "created_tx_id": event.tx_id,
            "status": "open",
            "best_bid_yes": EMPTY_BID,
            "best_ask_yes": EMPTY_ASK,
            "best_bid_no": EMPTY_BID,
            "best_ask_no": EMPTY_ASK,
            "updated_at": at,
        },
    )
    await q.insert_market_tags(conn, market_id, meta.tags)
    if ev.category:
        await q.count_new_market(conn, q.TALLIES["category"], ev.category, now)
    for t in meta.tags:
        await q.count_new_market(conn, q.TALLIES["tag"], t, now)
    await q.ensure_checkpoint(conn, ev.market, now)
    return market_id


def _market_created_payload(
    market_id: int, ev: MarketCreated, tx_id: str, at: datetime
) -> dict[str, JsonValue]:
    meta = ev.metadata
    return {
        "id": market_id,
        "marketAddress": ev.market,
        "question": ev.question,
        "category": ev.category,
        "tags": list(meta.tags),
        "creator": ev.creator,
        "eventSlug": meta.event_slug,
        "closeAt": format_utc(ms_to_datetime(ev.close_time_ms)),
        "status": "open",
        "resolved": False,
        "finalOutcome": None,
        "volume": "0",
        "bestBidYes": EMPTY_BID,
        "bestAskYes": EMPTY_ASK,
        "bestBidNo": EMPTY_BID,
        "bestAskNo": EMPTY_ASK,
        "bookVersion": 0,
        "txId": tx_id,
        "createdAt": format_utc(at),
    }


# -- the books' tops -----------------------------------------------------------------------------

BookKey = tuple[str, str]  # (side, outcome) as the table stores them


@dataclass
class BookTops:
    """Open-order counts per price for each (side, outcome) of one market."""

    levels: dict[BookKey, Counter[int]] = field(default_factory=dict)

    @classmethod
    async def load(cls, conn: AsyncConnection, market_id: int) -> BookTops:
        tops = cls()
        for side, outcome, price in await q.open_order_prices(conn, market_id):
            tops.add(side, outcome, price)
        return tops

    def add(self, side: str, outcome: str, price: int) -> None:
        self.levels.setdefault((side, outcome), Counter())[price] += 1

    def remove(self, side: str, outcome: str, price: int) -> None:
        level = self.levels.get((side, outcome))
        if level is None or level[price] <= 0:
            raise IndexerError(f"no open {side} {outcome} order at {price} to remove")
        level[price] -= 1
        if level[price] == 0:
            del level[price]

    def best(self, side: str, outcome: str) -> int:
        level = self.levels.get((side, outcome))
        is_bid = side == Side.BUY.value
        if not level:
            return EMPTY_BID if is_bid else EMPTY_ASK
        return max(level) if is_bid else min(level)

    def summary(self) -> dict[str, int]:
        return {
            "best_bid_yes": self.best("buy", "yes"),
            "best_ask_yes": self.best("sell", "yes"),
            "best_bid_no": self.best("buy", "no"),
            "best_ask_no": self.best("sell", "no"),
        }


# -- a market's events ---------------------------------------------------------------------------


def _order_view(row: Mapping[str, Any], tx_id: str) -> dict[str, JsonValue]:
    """The order as realtime frames carry it (amounts as decimal strings)."""
    return {
        "orderId": row["chain_order_id"],
        "owner": row["owner"],
        "side": row["side"],
        "outcome": row["outcome"],
        "price": row["price"],
        "quantity": str(row["quantity"]),
        "remaining": str(row["remaining"]),
        "status": row["status"],
        "cancelReason": row["cancel_reason"],
        "txId": tx_id,
        "updatedAt": format_utc(row["updated_at"]),
    }


def _reduce_cost(cost: int, shares: int, sold: int) -> int:
    """Average-cost accounting: the cost that leaves with ``sold`` of ``shares`` (floored; the
    last share takes whatever is left, so the cost of an emptied position is exactly 0)."""
    if sold >= shares:
        return cost
    return cost * sold // shares


#: Market columns published in the market update frame, with their JSON names.
_MARKET_FRAME_FIELDS: Final = {
    "status": "status",
    "resolution": "finalOutcome",
    "resolved_at": "resolvedAt",
    "volume": "volume",
    "trade_count": "tradeCount",
    "last_trade_at": "lastTradeAt",
    "last_price_yes": "lastPriceYes",
    "best_bid_yes": "bestBidYes",
    "best_ask_yes": "bestAskYes",
    "best_bid_no": "bestBidNo",
    "best_ask_no": "bestAskNo",
    "open_interest": "openInterest",
    "book_version": "bookVersion",
}
_AMOUNT_FIELDS: Final = frozenset({"volume", "open_interest"})


def _frame_value(column: str, value: Any) -> JsonValue:
    if value is None:
        return None
    if isinstance(value, datetime):
        return format_utc(value)
    if column in _AMOUNT_FIELDS:
        return str(value)
    assert isinstance(value, str | int)
    return value


class _MarketBatch:
    """State of one market batch while its events are applied."""

    def __init__(
        self,
        conn: AsyncConnection,
        batch: Batch,
        *,
        market_id: int,
        address: str,
        tops: BookTops,
        state: dict[str, Any],
    ) -> None:
        self.conn = conn
        self.batch = batch
        self.market_id = market_id
        self.address = address
        self.tops = tops
        self.state = state
        self.at = batch.block_at
        self.outbox: list[OutboxEntry] = []
        self.positions: dict[str, tuple[bool, dict[str, int]]] = {}
        self.resolved_now = False

    # outbox

    def _order_changed(self, row: Mapping[str, Any], operation: Operation, tx_id: str) -> None:
        key: dict[str, JsonValue] = {
            "marketAddress": self.address,
            "orderId": row["chain_order_id"],
        }
        payload = _order_view(row, tx_id)
        for topic in (orders_topic(self.address), f"user:{row['owner']}:orders"):
            self.outbox.append(OutboxEntry(topic, operation, "order", key, payload))

    # positions

    async def _position(self, owner: str) -> dict[str, int]:
        held = self.positions.get(owner)
        if held is None:
            found = await q.get_position(self.conn, self.market_id, owner)
            exists = found is not None
            amounts = found if found is not None else dict.fromkeys(q.POSITION_AMOUNTS, 0)
            self.positions[owner] = held = (exists, amounts)
        return held[1]

    async def _trade_leg(
        self, owner: str, side: Side, outcome: Outcome, price: int, quantity: int, fee: int
    ) -> None:
        pos = await self._position(owner)
        shares_key = f"{outcome.value}_shares"
        cost_key = f"{outcome.value}_cost"
        if side is Side.BUY:
            pos[shares_key] += quantity
            pos[cost_key] += notional(price, quantity) + fee
        else:
            if pos[shares_key] < quantity:
                raise IndexerError(f"{owner} sold {quantity} {outcome} shares it does not hold")
            pos[cost_key] -= _reduce_cost(pos[cost_key], pos[shares_key], quantity)
            pos[shares_key] -= quantity

    async def flush_positions(self) -> None:
        for owner, (exists, amounts) in self.positions.items():
            values = {**amounts, "updated_at": self.at}
            if exists:
                await q.update_position(self.conn, self.market_id, owner, values)
            else:
                await q.insert_position(
                    self.conn, {"market_id": self.market_id, "owner": owner, **values}
                )

    # events

    async def placed(self, ev: OrderPlaced, tx_id: str) -> None:
        rests = ev.remaining > 0
        status = "open" if rests else "filled"
        row: dict[str, Any] = {
            "market_id": self.market_id,
            "chain_order_id": ev.order_id,
            "owner": ev.owner,
            "side": ev.side.value,
            "outcome": ev.outcome.value,
            "price": ev.price,
            "quantity": ev.quantity,
            "remaining": ev.remaining,
            "locked_collateral": buy_lock(ev.price, ev.remaining) if ev.side is Side.BUY else 0,
            "locked_shares": ev.remaining if ev.side is Side.SELL else 0,
            "deposit": ev.deposit,
            "status": status,
            "cancel_reason": None,
            "placed_tx_id": tx_id,
            "placed_block_hash": self.batch.block_hash,
            "closed_tx_id": None if rests else tx_id,
            "created_at": self.at,
            "updated_at": self.at,
            "closed_at": None if rests else self.at,
        }
        await q.insert_order(self.conn, row)
        if rests:
            self.tops.add(row["side"], row["outcome"], ev.price)
        self.state["book_version"] += 1
        self._order_changed(row, "insert", tx_id)

    async def trade(self, ev: TradeEvent, tx_id: str, position: int) -> None:
        maker = await q.get_order(self.conn, self.market_id, ev.maker_order_id)
        remaining = maker["remaining"] - ev.quantity
        if remaining < 0 or maker["status"] != "open":
            raise IndexerError(
                f"trade {ev.trade_id} fills {ev.quantity} of maker order {ev.maker_order_id}, "
                f"which has {maker['remaining']} open ({maker['status']})"
            )
        changes: dict[str, Any] = {"remaining": remaining, "updated_at": self.at}
        if ev.maker_side is Side.BUY:
            changes["locked_collateral"] = maker["locked_collateral"] - buy_lock(
                ev.price, ev.quantity
            )
        else:
            changes["locked_shares"] = maker["locked_shares"] - ev.quantity
        if remaining == 0:
            changes.update(status="filled", closed_tx_id=tx_id, closed_at=self.at)
            self.tops.remove(maker["side"], maker["outcome"], maker["price"])
        await q.update_order(self.conn, maker["id"], changes)
        maker.update(changes)

        fill_id = await q.insert_fill(
            self.conn,
            {
                "market_id": self.market_id,
                "trade_seq": ev.trade_id,
                "kind": ev.kind.value,
                "maker_order_id": ev.maker_order_id,
                "maker_owner": ev.maker_owner,
                "maker_side": ev.maker_side.value,
                "maker_outcome": ev.maker_outcome.value,
                "taker_order_id": ev.taker_order_id,
                "taker_owner": ev.taker_owner,
                "taker_side": ev.taker_side.value,
                "taker_outcome": ev.taker_outcome.value,
                "price": ev.price,
                "taker_price": ev.taker_price,
                "quantity": ev.quantity,
                "maker_fee": ev.maker_fee,
                "taker_fee": ev.taker_fee,
                "tx_id": tx_id,
                "block_hash": self.batch.block_hash,
                "event_counter": self.batch.counter,
                "event_position": position,
                "traded_at": self.at,
            },
        )
        await self._trade_leg(
            ev.maker_owner, ev.maker_side, ev.maker_outcome, ev.price, ev.quantity, ev.maker_fee
        )
        await self._trade_leg(
            ev.taker_owner,
            ev.taker_side,
            ev.taker_outcome,
            ev.taker_price,
            ev.quantity,
            ev.taker_fee,
        )

        s = self.state
        # exchange.Market.volume: the notional of a normal trade, the quantity of a mint/merge.
        s["volume"] += (
            notional(ev.price, ev.quantity) if ev.kind is TradeKind.NORMAL else ev.quantity
        )
        s["trade_count"] += 1
        s["last_fill_id"] = fill_id
        s["last_trade_at"] = self.at
        s["last_price_yes"] = ev.yes_price
        if ev.kind is TradeKind.MINT:
            s["open_interest"] += ev.quantity
        elif ev.kind is TradeKind.MERGE:
            s["open_interest"] -= ev.quantity
        s["book_version"] += 1

        trade_key: dict[str, JsonValue] = {
            "marketAddress": self.address,
            "tradeId": str(ev.trade_id),
        }
        trade_payload: dict[str, JsonValue] = {
            "tradeId": str(ev.trade_id),
            "kind": ev.kind.value,
            "makerOrderId": ev.maker_order_id,
            "takerOrderId": ev.taker_order_id,
            "maker": ev.maker_owner,
            "taker": ev.taker_owner,
            "outcome": ev.maker_outcome.value,
            "makerSide": ev.maker_side.value,
            "price": ev.price,
            "quantity": str(ev.quantity),
            "makerFee": str(ev.maker_fee),
            "takerFee": str(ev.taker_fee),
            "txId": tx_id,
            "timestamp": format_utc(self.at),
        }
        for topic in (
            fills_topic(self.address),
            f"user:{ev.maker_owner}:fills",
            f"user:{ev.taker_owner}:fills",
        ):
            self.outbox.append(OutboxEntry(topic, "insert", "trade", trade_key, trade_payload))
        self._order_changed(maker, "update", tx_id)

    async def cancelled(self, ev: OrderCancelled, tx_id: str) -> None:
        row = await q.get_order(self.conn, self.market_id, ev.order_id)
        if row["status"] != "open" or row["remaining"] != ev.quantity:
            raise IndexerError(
                f"order {ev.order_id} cancelled with {ev.quantity} left, but the read model has "
                f"{row['remaining']} ({row['status']})"
            )
        changes: dict[str, Any] = {
            "remaining": 0,
            "locked_collateral": 0,
            "locked_shares": 0,
            "status": "cancelled",
            "cancel_reason": ev.reason.value,
            "closed_tx_id": tx_id,
            "closed_at": self.at,
            "updated_at": self.at,
        }
        await q.update_order(self.conn, row["id"], changes)
        row.update(changes)
        self.tops.remove(row["side"], row["outcome"], row["price"])
        self.state["book_version"] += 1
        self._order_changed(row, "update", tx_id)

    def resolved(self, ev: MarketResolved, tx_id: str) -> None:
        self.state.update(
            status="resolved",
            resolution=ev.resolution.value,
            resolved_at=self.at,
            resolved_tx_id=tx_id,
        )
        self.resolved_now = True

    async def claimed(self, ev: Claimed) -> None:
        pos = await self._position(ev.owner)
        for outcome, quantity in (("yes", ev.yes_quantity), ("no", ev.no_quantity)):
            shares_key, cost_key = f"{outcome}_shares", f"{outcome}_cost"
            if pos[shares_key] < quantity:
                raise IndexerError(f"{ev.owner} claimed {quantity} {outcome} shares it lacks")
            pos[cost_key] -= _reduce_cost(pos[cost_key], pos[shares_key], quantity)
            pos[shares_key] -= quantity
        pos["claimed_payout"] += ev.payout
        self.state["open_interest"] = max(0, self.state["open_interest"] - ev.yes_quantity)


async def apply_market_batch(
    conn: AsyncConnection,
    batch: Batch,
    *,
    market_id: int,
    tops: BookTops,
    now: datetime,
) -> None:
    """A market contract's events of one block. ``tops`` is updated in place: discard it when
    the transaction does not commit."""
    await _record_events(conn, batch, now)
    state = await q.get_market_state(conn, market_id)
    before = dict(state)
    work = _MarketBatch(
        conn, batch, market_id=market_id, address=batch.contract, tops=tops, state=state
    )
    tx_ids: dict[str, int | None] = {}
    for position, event in enumerate(batch.events):
        tx_id = event.tx_id
        tx_ids[tx_id] = market_id
        ev = decode_market_event(event.event_index, event.fields)
        if isinstance(ev, OrderPlaced):
            await work.placed(ev, tx_id)
        elif isinstance(ev, TradeEvent):
            await work.trade(ev, tx_id, position)
        elif isinstance(ev, OrderCancelled):
            await work.cancelled(ev, tx_id)
        elif isinstance(ev, MarketResolved):
            work.resolved(ev, tx_id)
        else:
            await work.claimed(ev)
    await work.flush_positions()

    state.update(tops.summary())
    changed = {k: v for k, v in state.items() if v != before[k]}
    if changed:
        await q.update_market(conn, market_id, {**changed, "updated_at": batch.block_at})
    if work.resolved_now:
        if state["category"]:
            await q.count_resolved_market(conn, q.TALLIES["category"], [state["category"]], now)
        tags = await q.market_tags(conn, market_id)
        await q.count_resolved_market(conn, q.TALLIES["tag"], tags, now)

    await _record_txs(conn, batch, now, tx_ids)
    frame = {
        _MARKET_FRAME_FIELDS[k]: _frame_value(k, v)
        for k, v in changed.items()
        if k in _MARKET_FRAME_FIELDS
    }
    if "status" in frame:
        frame["resolved"] = state["status"] == "resolved"
    if frame:
        work.outbox.append(
            OutboxEntry(
                orders_topic(batch.contract),
                "update",
                "market",
                {"marketAddress": batch.contract},
                frame,
            )
        )
    await _append_all(conn, work.outbox, now)
