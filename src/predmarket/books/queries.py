"""SQL of the books domain: loading books into memory, following the outbox, market lookups."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final

from sqlalchemy import RowMapping, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.store.tables.indexer import indexed_tx
from predmarket.store.tables.market import market
from predmarket.store.tables.order import order
from predmarket.store.tables.outbox import outbox

#: Largest ``IN (...)`` list sent at once (SQLite caps bound parameters).
_IN_CHUNK: Final = 500
#: Market ids are 32-bit (a larger one names no market, and PostgreSQL would refuse it).
MAX_MARKET_ID: Final = 2**31 - 1


@asynccontextmanager
async def snapshot(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A read-only connection whose statements all see one snapshot of the database.

    Loading a book reads the outbox's last id, the market rows and the open orders; they must
    agree, or the book would count an event twice or miss one. PostgreSQL: a REPEATABLE READ
    transaction. SQLite (WAL): pysqlite does not begin a transaction before a SELECT, so an
    explicit ``BEGIN`` holds one read snapshot from the first read to the rollback.
    """
    async with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execution_options(isolation_level="REPEATABLE READ")
            await conn.begin()
        else:
            await conn.exec_driver_sql("BEGIN")
        try:
            yield conn
        finally:
            await conn.rollback()


@dataclass(frozen=True)
class BookRows:
    """What rebuilds some markets' books: all of it as of outbox event ``event_id``."""

    event_id: int
    markets: list[RowMapping]
    orders: list[RowMapping]


def _chunks(values: Sequence[str]) -> list[Sequence[str]]:
    return [values[i : i + _IN_CHUNK] for i in range(0, len(values), _IN_CHUNK)]


async def load_books(conn: AsyncConnection, addresses: Sequence[str] | None = None) -> BookRows:
    """The markets (all, or those at ``addresses``) with their open orders; run it in
    :func:`snapshot` so the rows are exactly the state after outbox event ``event_id``."""
    event_id = int(await conn.scalar(select(func.coalesce(func.max(outbox.c.id), 0))) or 0)
    market_cols = select(
        market.c.id,
        market.c.market_address,
        market.c.book_version,
        market.c.last_price_yes,
        market.c.last_trade_at,
    )
    order_cols = select(
        order.c.market_id,
        order.c.chain_order_id,
        order.c.side,
        order.c.outcome,
        order.c.price,
        order.c.remaining,
    ).where(order.c.status == "open")
    if addresses is None:
        markets = list((await conn.execute(market_cols)).mappings())
        orders = list((await conn.execute(order_cols)).mappings())
        return BookRows(event_id, markets, orders)
    markets = []
    for chunk in _chunks(list(addresses)):
        result = await conn.execute(market_cols.where(market.c.market_address.in_(chunk)))
        markets.extend(result.mappings())
    orders = []
    for row in markets:
        # ix_order_market_id_status_id serves each market's open orders.
        result = await conn.execute(order_cols.where(order.c.market_id == row["id"]))
        orders.extend(result.mappings())
    return BookRows(event_id, markets, orders)


async def outbox_after(conn: AsyncConnection, last_id: int, limit: int) -> list[RowMapping]:
    """The next outbox rows after ``last_id``, in id order (the primary key serves it)."""
    stmt = (
        select(
            outbox.c.id,
            outbox.c.topic,
            outbox.c.entity,
            outbox.c.operation,
            outbox.c.key,
            outbox.c.payload,
        )
        .where(outbox.c.id > last_id)
        .order_by(outbox.c.id)
        .limit(limit)
    )
    return list((await conn.execute(stmt)).mappings())


async def get_market_ref(
    conn: AsyncConnection, *, id: int | None = None, address: str | None = None
) -> RowMapping | None:
    """A market by its id or its contract address: id, address, category."""
    stmt = select(market.c.id, market.c.market_address, market.c.category)
    if id is not None:
        if not 0 < id <= MAX_MARKET_ID:
            return None
        stmt = stmt.where(market.c.id == id)
    else:
        stmt = stmt.where(market.c.market_address == address)
    return (await conn.execute(stmt)).mappings().first()


async def get_indexed_tx(conn: AsyncConnection, tx_id: str) -> RowMapping | None:
    """The indexer's record of a transaction (one primary-key lookup)."""
    stmt = select(
        indexed_tx.c.tx_id, indexed_tx.c.block_hash, indexed_tx.c.market_id, indexed_tx.c.indexed_at
    ).where(indexed_tx.c.tx_id == tx_id)
    return (await conn.execute(stmt)).mappings().first()
