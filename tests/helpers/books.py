"""Order events written the way the indexer writes them: the read model and the outbox rows of
the shared contract (``docs/books.md``) in the caller's transaction.

    async with engine.begin() as conn:
        m = await make_market(conn)
        o = await place(conn, m, side="buy", outcome="yes", price=600, quantity=2 * SHARE)
        await trade(conn, m, o, quantity=SHARE, taker_owner=wallet_address())
        await cancel(conn, m, o)

Rows come from ``tests/helpers/markets.py``; each helper bumps ``market.book_version`` by one
per order event and appends the order (and trade, and market) frames with
``store.uow.append_outbox``, as the indexer does. They check nothing: they write what they are told.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import JsonValue
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from helpers.markets import hex32, make_fill, make_order, wallet_address
from predmarket.exchange import notional
from predmarket.kit.schemas import format_utc
from predmarket.store.tables.market import market
from predmarket.store.tables.order import order
from predmarket.store.uow import Operation, append_outbox

SHARE = 10**18
_order_ids = itertools.count(1)


def utcnow() -> datetime:
    return datetime.now(UTC)


def order_view(row: dict[str, Any], tx_id: str) -> dict[str, JsonValue]:
    """The order as realtime frames carry it (amounts as strings)."""
    return {
        "orderId": row["chain_order_id"],
        "owner": row["owner"],
        "side": row["side"],
        "outcome": row["outcome"],
        "price": row["price"],
        "quantity": str(row["quantity"]),
        "remaining": str(row["remaining"]),
        "status": row["status"],
        "cancelReason": row.get("cancel_reason"),
        "txId": tx_id,
        "updatedAt": format_utc(row["updated_at"]),
    }


async def _bump_version(conn: AsyncConnection, market_row: dict[str, Any]) -> int:
    version = int(
        await conn.scalar(select(market.c.book_version).where(market.c.id == market_row["id"])) or 0
    )
    await conn.execute(
        update(market).where(market.c.id == market_row["id"]).values(book_version=version + 1)
    )
    return version + 1


async def _order_frames(
    conn: AsyncConnection, market_row: dict[str, Any], row: dict[str, Any], op: Operation, tx: str
) -> list[int]:
    key: dict[str, JsonValue] = {
        "marketAddress": market_row["market_address"],
        "orderId": row["chain_order_id"],
    }
    payload = order_view(row, tx)
    return [
        await append_outbox(
            conn,
            topic=topic,
            operation=op,
            entity="order",
            key=key,
            payload=payload,
            source="indexer",
        )
        for topic in (
            f"market:{market_row['market_address']}:orders",
            f"user:{row['owner']}:orders",
        )
    ]


async def place(
    conn: AsyncConnection,
    market_row: dict[str, Any],
    *,
    owner: str | None = None,
    side: str = "buy",
    outcome: str = "yes",
    price: int = 500,
    quantity: int = SHARE,
    remaining: int | None = None,
    order_id: int | None = None,
) -> dict[str, Any]:
    """An OrderPlaced: the order row (open unless nothing remains) and its insert frames."""
    left = quantity if remaining is None else remaining
    now = utcnow()
    tx = hex32("place")
    row = await make_order(
        conn,
        market_row["id"],
        chain_order_id=next(_order_ids) if order_id is None else order_id,
        owner=owner or wallet_address(),
        side=side,
        outcome=outcome,
        price=price,
        quantity=quantity,
        remaining=left,
        status="open" if left > 0 else "filled",
        placed_tx_id=tx,
        closed_tx_id=None if left > 0 else tx,
        created_at=now,
        updated_at=now,
        closed_at=None if left > 0 else now,
    )
    row.setdefault("cancel_reason", None)
    await _bump_version(conn, market_row)
    await _order_frames(conn, market_row, row, "insert", tx)
    return row


async def _update_order(conn: AsyncConnection, row: dict[str, Any], **changes: Any) -> None:
    await conn.execute(update(order).where(order.c.id == row["id"]).values(**changes))
    row.update(changes)


async def trade(
    conn: AsyncConnection,
    market_row: dict[str, Any],
    maker: dict[str, Any],
    *,
    quantity: int,
    taker_owner: str | None = None,
    kind: str = "normal",
    taker_order_id: int | None = None,
) -> dict[str, Any]:
    """A Trade filling ``quantity`` of resting ``maker``: the fill row, the maker's update, the
    market's trade summary, and the trade, order and market frames."""
    now = utcnow()
    tx = hex32("trade")
    left = maker["remaining"] - quantity
    await _update_order(
        conn,
        maker,
        remaining=left,
        status="open" if left > 0 else "filled",
        closed_tx_id=None if left > 0 else tx,
        closed_at=None if left > 0 else now,
        updated_at=now,
    )
    price = maker["price"]
    complement = kind != "normal"
    taker_outcome = (
        ("no" if maker["outcome"] == "yes" else "yes") if complement else maker["outcome"]
    )
    taker_side = maker["side"] if complement else ("buy" if maker["side"] == "sell" else "sell")
    taker = taker_owner or wallet_address()
    state = (
        (await conn.execute(select(market).where(market.c.id == market_row["id"]))).mappings().one()
    )
    seq = int(state["trade_count"]) + 1
    row = await make_fill(
        conn,
        market_row["id"],
        trade_seq=seq,
        kind=kind,
        maker_order_id=maker["chain_order_id"],
        maker_owner=maker["owner"],
        maker_side=maker["side"],
        maker_outcome=maker["outcome"],
        taker_order_id=next(_order_ids) if taker_order_id is None else taker_order_id,
        taker_owner=taker,
        taker_side=taker_side,
        taker_outcome=taker_outcome,
        price=price,
        taker_price=1000 - price if complement else price,
        quantity=quantity,
        maker_fee=0,
        taker_fee=0,
        tx_id=tx,
        traded_at=now,
    )
    yes_tick = price if maker["outcome"] == "yes" else 1000 - price
    volume = int(state["volume"]) + (notional(price, quantity) if not complement else quantity)
    version = await _bump_version(conn, market_row)
    await conn.execute(
        update(market)
        .where(market.c.id == market_row["id"])
        .values(
            volume=volume,
            trade_count=seq,
            last_fill_id=row["id"],
            last_trade_at=now,
            last_price_yes=yes_tick,
        )
    )
    address = market_row["market_address"]
    payload: dict[str, JsonValue] = {
        "tradeId": str(seq),
        "kind": kind,
        "makerOrderId": maker["chain_order_id"],
        "takerOrderId": row["taker_order_id"],
        "maker": maker["owner"],
        "taker": taker,
        "outcome": maker["outcome"],
        "makerSide": maker["side"],
        "price": price,
        "quantity": str(quantity),
        "makerFee": "0",
        "takerFee": "0",
        "txId": tx,
        "timestamp": format_utc(now),
    }
    for topic in (
        f"market:{address}:fills",
        f"user:{maker['owner']}:fills",
        f"user:{taker}:fills",
    ):
        await append_outbox(
            conn,
            topic=topic,
            operation="insert",
            entity="trade",
            key={"marketAddress": address, "tradeId": str(seq)},
            payload=payload,
            source="indexer",
        )
    await _order_frames(conn, market_row, maker, "update", tx)
    await append_outbox(
        conn,
        topic=f"market:{address}:orders",
        operation="update",
        entity="market",
        key={"marketAddress": address},
        payload={
            "volume": str(volume),
            "tradeCount": seq,
            "lastTradeAt": format_utc(now),
            "lastPriceYes": yes_tick,
            "bookVersion": version,
        },
        source="indexer",
    )
    return row


async def cancel(
    conn: AsyncConnection, market_row: dict[str, Any], row: dict[str, Any], reason: str = "owner"
) -> None:
    """An OrderCancelled: the order leaves the book."""
    now = utcnow()
    tx = hex32("cancel")
    await _update_order(
        conn,
        row,
        remaining=0,
        status="cancelled",
        cancel_reason=reason,
        closed_tx_id=tx,
        closed_at=now,
        updated_at=now,
    )
    await _bump_version(conn, market_row)
    await _order_frames(conn, market_row, row, "update", tx)


async def open_levels(
    engine: AsyncEngine, market_id: int
) -> dict[tuple[str, str, int], tuple[int, int]]:
    """The book as the database holds it: ``(outcome, side, price) → (quantity, orders)``."""
    totals: Counter[tuple[str, str, int]] = Counter()
    counts: Counter[tuple[str, str, int]] = Counter()
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(order.c.outcome, order.c.side, order.c.price, order.c.remaining).where(
                order.c.market_id == market_id, order.c.status == "open"
            )
        )
        for outcome, side, price, remaining in rows:
            totals[(outcome, side, price)] += remaining
            counts[(outcome, side, price)] += 1
    return {k: (totals[k], counts[k]) for k in totals}


async def book_version(engine: AsyncEngine, market_id: int) -> int:
    async with engine.connect() as conn:
        value = await conn.scalar(select(market.c.book_version).where(market.c.id == market_id))
    return int(value or 0)


async def eventually(condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Wait until ``condition()`` (a value or an awaitable) is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)
