"""Read-model SQL of a wallet's activity (orders and fills it took part in)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import func, select, union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.fill import fill
from predmarket.store.tables.order import order


class Activity(NamedTuple):
    order_count: int
    open_order_count: int
    fill_count: int
    first_activity_at: datetime | None
    last_activity_at: datetime | None


async def activity(conn: AsyncConnection, owners: Sequence[str]) -> Activity:
    """Counts and first/last times over every form of the wallet's address in ``owners``."""
    o, f = order.c, fill.c
    orders = (
        await conn.execute(
            select(
                func.count(),
                func.count().filter(o.status == "open"),
                func.min(o.created_at),
                func.max(o.updated_at),
            ).where(o.owner.in_(owners))
        )
    ).one()
    # One fill can have the wallet on both sides (a self-trade): count it once.
    fills = union_all(
        select(f.id, f.traded_at).where(f.maker_owner.in_(owners)),
        select(f.id, f.traded_at).where(f.taker_owner.in_(owners)),
    ).subquery()
    fill_row = (
        await conn.execute(
            select(
                func.count(func.distinct(fills.c.id)),
                func.min(fills.c.traded_at),
                func.max(fills.c.traded_at),
            )
        )
    ).one()
    times = [t for t in (orders[2], orders[3], fill_row[1], fill_row[2]) if t is not None]
    return Activity(
        order_count=int(orders[0]),
        open_order_count=int(orders[1]),
        fill_count=int(fill_row[0]),
        first_activity_at=min(times) if times else None,
        last_activity_at=max(times) if times else None,
    )
