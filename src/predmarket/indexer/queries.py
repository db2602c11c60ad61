"""The indexer's statements (SQLAlchemy Core), one function per read or write.

Every write here runs inside the unit of work of one event batch (see ``service.py``). Amounts
are Python ints: running totals are read, computed in Python and written back, never summed in
SQL (SQLite stores them as zero-padded text; docs/data-model.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, and_, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.dml import Insert

from predmarket.store.tables.event_group import event_group
from predmarket.store.tables.fill import fill
from predmarket.store.tables.indexer import chain_event, indexed_tx, indexer_checkpoint
from predmarket.store.tables.market import market
from predmarket.store.tables.market_tag import category, market_tag, tag
from predmarket.store.tables.order import order
from predmarket.store.tables.position import position

Row = Mapping[str, Any]


def _insert(conn: AsyncConnection, table: Table) -> Any:
    """The dialect's INSERT, which knows ``ON CONFLICT`` (SQLite and PostgreSQL spell it alike)."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    if conn.dialect.name == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"unsupported dialect {conn.dialect.name}")  # pragma: no cover


async def _insert_ignore(
    conn: AsyncConnection, table: Table, rows: Sequence[Row], keys: Sequence[str]
) -> None:
    if not rows:
        return
    stmt: Insert = _insert(conn, table).on_conflict_do_nothing(index_elements=list(keys))
    await conn.execute(stmt, list(rows))


# -- checkpoints ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Checkpoint:
    contract_address: str
    next_start: int


async def ensure_checkpoint(conn: AsyncConnection, address: str, now: datetime) -> None:
    """A checkpoint row at counter 0 for a contract the indexer starts to follow."""
    await _insert_ignore(
        conn,
        indexer_checkpoint,
        [{"contract_address": address, "next_start": 0, "updated_at": now}],
        ["contract_address"],
    )


async def load_checkpoints(conn: AsyncConnection) -> dict[str, int]:
    rows = await conn.execute(
        select(indexer_checkpoint.c.contract_address, indexer_checkpoint.c.next_start)
    )
    return {str(address): int(next_start) for address, next_start in rows.all()}


async def claim_batch(
    conn: AsyncConnection,
    *,
    contract: str,
    counter: int,
    block_hash: str,
    block_at: datetime,
    now: datetime,
) -> bool:
    """Move ``contract``'s checkpoint from ``counter`` to ``counter + 1``; False when it is not at
    ``counter`` (the batch was applied already, by this indexer before a restart or by another).

    It is the first statement of a batch's transaction on purpose: on PostgreSQL it locks the
    checkpoint row, so a second indexer waits and then finds the counter moved; on SQLite the
    write takes the database's write lock before anything is read, so nothing read afterwards
    can be stale.
    """
    c = indexer_checkpoint.c
    result = await conn.execute(
        update(indexer_checkpoint)
        .where(c.contract_address == contract, c.next_start == counter)
        .values(
            next_start=counter + 1,
            last_block_hash=block_hash,
            last_block_at=block_at,
            updated_at=now,
        )
    )
    return result.rowcount == 1


async def insert_chain_events(conn: AsyncConnection, rows: Sequence[Row]) -> None:
    # A plain insert: a duplicate key means an event applied twice, which must fail the batch.
    if rows:
        await conn.execute(insert(chain_event), list(rows))


async def insert_indexed_txs(conn: AsyncConnection, rows: Sequence[Row]) -> None:
    await _insert_ignore(conn, indexed_tx, rows, ["tx_id"])


# -- markets -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KnownMarket:
    id: int
    address: str
    registry_index: int


async def load_markets(conn: AsyncConnection, registry: str) -> list[KnownMarket]:
    rows = await conn.execute(
        select(market.c.id, market.c.market_address, market.c.registry_index)
        .where(market.c.registry_address == registry)
        .order_by(market.c.registry_index)
    )
    return [KnownMarket(id_, address, index) for id_, address, index in rows]


async def insert_market(conn: AsyncConnection, values: Row) -> int:
    result = await conn.execute(insert(market).values(**values))
    new_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert isinstance(new_id, int)
    return new_id


#: The market columns an event batch may change (the rest is fixed at creation).
MARKET_STATE_COLUMNS = (
    "status",
    "resolution",
    "resolved_at",
    "resolved_tx_id",
    "volume",
    "trade_count",
    "last_trade_at",
    "last_fill_id",
    "last_price_yes",
    "best_bid_yes",
    "best_ask_yes",
    "best_bid_no",
    "best_ask_no",
    "open_interest",
    "book_version",
    "category",
)


async def get_market_state(conn: AsyncConnection, market_id: int) -> dict[str, Any]:
    columns = [market.c[name] for name in MARKET_STATE_COLUMNS]
    row = (await conn.execute(select(*columns).where(market.c.id == market_id))).one()
    return dict(row._mapping)


async def update_market(conn: AsyncConnection, market_id: int, values: Row) -> None:
    if values:
        await conn.execute(update(market).where(market.c.id == market_id).values(**values))


async def market_tags(conn: AsyncConnection, market_id: int) -> list[str]:
    rows = await conn.execute(
        select(market_tag.c.tag)
        .where(market_tag.c.market_id == market_id)
        .order_by(market_tag.c.tag)
    )
    return [t for (t,) in rows]


async def insert_market_tags(conn: AsyncConnection, market_id: int, tags: Sequence[str]) -> None:
    await _insert_ignore(
        conn, market_tag, [{"market_id": market_id, "tag": t} for t in tags], ["market_id", "tag"]
    )


async def event_group_id(
    conn: AsyncConnection, *, slug: str, title: str, category_name: str, created_at: datetime
) -> int:
    """The id of the group ``slug``, created on its first market (title and category from it)."""
    await _insert_ignore(
        conn,
        event_group,
        [{"slug": slug, "title": title, "category": category_name, "created_at": created_at}],
        ["slug"],
    )
    found = await conn.scalar(select(event_group.c.id).where(event_group.c.slug == slug))
    assert isinstance(found, int)
    return found


async def count_new_market(conn: AsyncConnection, table: Table, name: str, now: datetime) -> None:
    """A market joined category/tag ``name``: both of its counts go up (the row appears)."""
    c = table.c
    stmt = (
        _insert(conn, table)
        .values(name=name, market_count=1, open_market_count=1, updated_at=now)
        .on_conflict_do_update(
            index_elements=["name"],
            set_={
                "market_count": c.market_count + 1,
                "open_market_count": c.open_market_count + 1,
                "updated_at": now,
            },
        )
    )
    await conn.execute(stmt)


async def count_resolved_market(
    conn: AsyncConnection, table: Table, names: Sequence[str], now: datetime
) -> None:
    """Markets of these categories/tags stopped being open."""
    if names:
        await conn.execute(
            update(table)
            .where(table.c.name.in_(list(names)), table.c.open_market_count > 0)
            .values(open_market_count=table.c.open_market_count - 1, updated_at=now)
        )


TALLIES = {"category": category, "tag": tag}


# -- orders --------------------------------------------------------------------------------------


async def insert_order(conn: AsyncConnection, values: Row) -> None:
    await conn.execute(insert(order).values(**values))


async def get_order(conn: AsyncConnection, market_id: int, chain_order_id: int) -> dict[str, Any]:
    row = (
        await conn.execute(
            select(order).where(
                and_(order.c.market_id == market_id, order.c.chain_order_id == chain_order_id)
            )
        )
    ).one_or_none()
    if row is None:
        raise LookupError(f"order {chain_order_id} of market {market_id} was never placed")
    return dict(row._mapping)


async def update_order(conn: AsyncConnection, order_row_id: int, values: Row) -> None:
    await conn.execute(update(order).where(order.c.id == order_row_id).values(**values))


async def open_order_prices(conn: AsyncConnection, market_id: int) -> list[tuple[str, str, int]]:
    """(side, outcome, price) of every open order of a market (``ix_order_market_id_status_id``)."""
    rows = await conn.execute(
        select(order.c.side, order.c.outcome, order.c.price).where(
            order.c.market_id == market_id, order.c.status == "open"
        )
    )
    return [(side, outcome, price) for side, outcome, price in rows]


# -- fills and positions -------------------------------------------------------------------------


async def insert_fill(conn: AsyncConnection, values: Row) -> int:
    result = await conn.execute(insert(fill).values(**values))
    new_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert isinstance(new_id, int)
    return new_id


POSITION_AMOUNTS = ("yes_shares", "no_shares", "yes_cost", "no_cost", "claimed_payout")


async def get_position(conn: AsyncConnection, market_id: int, owner: str) -> dict[str, int] | None:
    row = (
        await conn.execute(
            select(*(position.c[name] for name in POSITION_AMOUNTS)).where(
                position.c.market_id == market_id, position.c.owner == owner
            )
        )
    ).one_or_none()
    return None if row is None else dict(row._mapping)


async def insert_position(conn: AsyncConnection, values: Row) -> None:
    await conn.execute(insert(position).values(**values))


async def update_position(conn: AsyncConnection, market_id: int, owner: str, values: Row) -> None:
    await conn.execute(
        update(position)
        .where(position.c.market_id == market_id, position.c.owner == owner)
        .values(**values)
    )
