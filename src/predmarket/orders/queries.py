"""SQL of a market's orders and fills: newest first, keyset-paged on the row id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.kit.pagination import CursorValue, Keyset
from predmarket.store.tables.fill import fill
from predmarket.store.tables.market_tag import market_tag
from predmarket.store.tables.order import order


@dataclass(frozen=True)
class NewestFirst(Keyset):
    """Ids follow chain order, so the id alone is the newest-first key.

    The cursor holds ``(id, id)``; continuing is ``id < :id``, which the ``(market_id, id)``
    indexes serve as a range — a row-value comparison of a column with itself would not be.
    """

    def after(self, position: Sequence[CursorValue]) -> ColumnElement[bool]:
        if len(position) != 2:
            return super().after(position)  # refuses the cursor
        return self.id < position[1] if self.descending else self.id > position[1]


ORDERS_ORDER = NewestFirst(order.c.id, order.c.id, descending=True)
FILLS_ORDER = NewestFirst(fill.c.id, fill.c.id, descending=True)


def orders(
    market_id: int,
    *,
    status: str | None = None,
    owner: str | None = None,
    side: str | None = None,
    outcome: str | None = None,
) -> Select[Any]:
    """A market's orders, filtered (``ix_order_market_id_id`` / ``…_status_id``)."""
    stmt = select(
        order.c.id,
        order.c.chain_order_id,
        order.c.owner,
        order.c.side,
        order.c.outcome,
        order.c.price,
        order.c.quantity,
        order.c.remaining,
        order.c.status,
        order.c.cancel_reason,
        order.c.placed_tx_id,
        order.c.closed_tx_id,
        order.c.created_at,
        order.c.updated_at,
        order.c.closed_at,
    ).where(order.c.market_id == market_id)
    if status is not None:
        stmt = stmt.where(order.c.status == status)
    if owner is not None:
        stmt = stmt.where(order.c.owner == owner)
    if side is not None:
        stmt = stmt.where(order.c.side == side)
    if outcome is not None:
        stmt = stmt.where(order.c.outcome == outcome)
    return stmt


def fills(market_id: int, *, owner: str | None = None, kind: str | None = None) -> Select[Any]:
    """A market's fills, filtered (``ix_fill_market_id_id``); ``owner`` is maker or taker."""
    stmt = select(
        fill.c.id,
        fill.c.trade_seq,
        fill.c.kind,
        fill.c.maker_order_id,
        fill.c.maker_owner,
        fill.c.maker_side,
        fill.c.maker_outcome,
        fill.c.taker_order_id,
        fill.c.taker_owner,
        fill.c.taker_side,
        fill.c.taker_outcome,
        fill.c.price,
        fill.c.taker_price,
        fill.c.quantity,
        fill.c.maker_fee,
        fill.c.taker_fee,
        fill.c.tx_id,
        fill.c.block_hash,
        fill.c.traded_at,
    ).where(fill.c.market_id == market_id)
    if owner is not None:
        stmt = stmt.where((fill.c.maker_owner == owner) | (fill.c.taker_owner == owner))
    if kind is not None:
        stmt = stmt.where(fill.c.kind == kind)
    return stmt


async def market_tags(conn: AsyncConnection, market_id: int) -> list[str]:
    stmt = select(market_tag.c.tag).where(market_tag.c.market_id == market_id)
    return sorted(str(t) for t in (await conn.scalars(stmt)))
