"""Outbox reads and writes of the realtime stream, and the platform settings it keeps."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from pydantic import JsonValue
from sqlalchemy import RowMapping, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.outbox import outbox
from predmarket.store.tables.realtime import platform_setting

BANNER: Final = "banner"
OUTBOX_HORIZON: Final = "outbox_horizon"
#: Key of the transaction-level PostgreSQL advisory lock held by the one pruner at work.
PRUNE_LOCK_KEY: Final = 0x70726D_707275  # "prm" "pru"

_EVENT_COLUMNS: Final = (
    outbox.c.id,
    outbox.c.topic,
    outbox.c.operation,
    outbox.c.entity,
    outbox.c.key,
    outbox.c.payload,
    outbox.c.source,
    outbox.c.created_at,
)


async def last_event_id(conn: AsyncConnection) -> int:
    """The outbox's largest id (0 when empty)."""
    return int(await conn.scalar(select(func.coalesce(func.max(outbox.c.id), 0))) or 0)


async def events_after(conn: AsyncConnection, after: int, limit: int) -> list[RowMapping]:
    """Every topic's events after ``after``, in id order (the broker's tail; the primary key)."""
    stmt = select(*_EVENT_COLUMNS).where(outbox.c.id > after).order_by(outbox.c.id).limit(limit)
    return list((await conn.execute(stmt)).mappings())


async def replay_page(
    conn: AsyncConnection, topics: Iterable[str], after: int, limit: int
) -> list[RowMapping]:
    """The subscribed topics' events after ``after``, in id order (``ix_outbox_topic_id``)."""
    stmt = (
        select(*_EVENT_COLUMNS)
        .where(outbox.c.topic.in_(sorted(topics)), outbox.c.id > after)
        .order_by(outbox.c.id)
        .limit(limit)
    )
    return list((await conn.execute(stmt)).mappings())


async def get_setting(conn: AsyncConnection, name: str) -> RowMapping | None:
    stmt = select(platform_setting.c.value, platform_setting.c.updated_at).where(
        platform_setting.c.name == name
    )
    return (await conn.execute(stmt)).mappings().first()


async def put_setting(
    conn: AsyncConnection, name: str, value: dict[str, JsonValue], now: datetime
) -> None:
    """Insert or replace the setting ``name``."""
    values: dict[str, Any] = {"name": name, "value": value, "updated_at": now}
    if conn.dialect.name == "postgresql":
        pg = pg_insert(platform_setting).values(**values)
        stmt: Any = pg.on_conflict_do_update(
            index_elements=[platform_setting.c.name],
            set_={"value": pg.excluded.value, "updated_at": pg.excluded.updated_at},
        )
    else:
        lite = sqlite_insert(platform_setting).values(**values)
        stmt = lite.on_conflict_do_update(
            index_elements=[platform_setting.c.name],
            set_={"value": lite.excluded.value, "updated_at": lite.excluded.updated_at},
        )
    await conn.execute(stmt)


async def delete_setting(conn: AsyncConnection, name: str) -> bool:
    result = await conn.execute(delete(platform_setting).where(platform_setting.c.name == name))
    return bool(result.rowcount)


async def pruned_through(conn: AsyncConnection) -> int:
    """The largest outbox id retention has deleted (0: none)."""
    row = await get_setting(conn, OUTBOX_HORIZON)
    if row is None or not isinstance(row["value"], dict):
        return 0
    value = row["value"].get("prunedThrough", 0)
    return value if isinstance(value, int) else 0


async def try_prune_lock(conn: AsyncConnection) -> bool:
    """Take the pruner's lock for this transaction (PostgreSQL); False when another holds it."""
    if conn.dialect.name != "postgresql":
        return True
    got = await conn.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": PRUNE_LOCK_KEY})
    return bool(got)


async def oldest_events(conn: AsyncConnection, limit: int) -> list[RowMapping]:
    """The oldest outbox rows' ids and times, in id order."""
    stmt = select(outbox.c.id, outbox.c.created_at).order_by(outbox.c.id).limit(limit)
    return list((await conn.execute(stmt)).mappings())


async def delete_through(conn: AsyncConnection, last_id: int) -> int:
    """Delete the outbox rows with ``id <= last_id``; returns how many."""
    result = await conn.execute(delete(outbox).where(outbox.c.id <= last_id))
    return int(result.rowcount or 0)
