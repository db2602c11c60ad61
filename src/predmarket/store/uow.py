"""Units of work and the outbox writer.

One transaction per request or per indexed block (style rule 4): :func:`transaction` commits
when the block succeeds and rolls back when it raises; services take the connection and never
commit themselves. Outbox rows are written with :func:`append_outbox` inside that same
transaction, so an event exists exactly when the change it describes does.

**Outbox ordering.** Realtime readers poll ``WHERE id > :last_seen ORDER BY id``. On PostgreSQL
ids come from a sequence at INSERT time but become visible at COMMIT time, so with two writers
the one holding id 6 can commit before the one holding id 5; a reader that already advanced to
6 never sees 5. :func:`append_outbox` therefore takes a transaction-scoped advisory lock before
taking an id: the next writer cannot draw an id until the previous one has committed or rolled
back, so ids become visible in increasing order (a rollback leaves a gap, never a late row).
The lock is held until the end of the transaction — append outbox rows last, just before the
commit, to keep that window short. SQLite already allows one writer at a time (the database
write lock is held from the first write to the commit), so the same holds there for free.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Final, Literal

from pydantic import JsonValue
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.store.tables.outbox import outbox

#: Key of the transaction-level PostgreSQL advisory lock that serialises outbox writers.
OUTBOX_LOCK_KEY: Final = 0x70726D_6F7574  # "prm" "out"

#: Set in a connection's ``info`` by :func:`append_outbox`; a unit of work that finds it after
#: its commit wakes this process's outbox followers (:func:`take_outbox_written`).
OUTBOX_WRITTEN: Final = "predmarket.outbox_written"

Operation = Literal["insert", "update", "delete"]
Source = Literal["indexer", "api", "outbox"]


@asynccontextmanager
async def transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """``async with transaction(engine) as conn``: commit on success, roll back on error."""
    async with engine.begin() as conn:
        yield conn


async def lock_outbox(conn: AsyncConnection) -> None:
    """Take the outbox writer lock for the rest of this transaction (PostgreSQL; a no-op on
    SQLite). :func:`append_outbox` calls it; taking it again in one transaction is free."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": OUTBOX_LOCK_KEY})


async def append_outbox(
    conn: AsyncConnection,
    *,
    topic: str,
    operation: Operation,
    entity: str,
    key: Mapping[str, JsonValue],
    payload: Mapping[str, JsonValue],
    source: Source,
    created_at: datetime | None = None,
) -> int:
    """Append one event to the outbox in ``conn``'s transaction; returns its id (the event id).

    Amounts in ``key``/``payload`` must already be decimal strings (JSON has no big integers).
    """
    await lock_outbox(conn)
    conn.info[OUTBOX_WRITTEN] = True
    result = await conn.execute(
        insert(outbox).values(
            topic=topic,
            operation=operation,
            entity=entity,
            key=dict(key),
            payload=dict(payload),
            source=source,
            created_at=created_at if created_at is not None else datetime.now(UTC),
        )
    )
    event_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    if not isinstance(event_id, int):  # pragma: no cover - both drivers return the new id
        raise RuntimeError("the outbox insert returned no id")
    return event_id


def take_outbox_written(conn: AsyncConnection) -> bool:
    """Whether :func:`append_outbox` ran on ``conn`` since the last call (the flag lives on the
    pooled connection, so it is cleared here whatever the transaction's fate)."""
    return bool(conn.info.pop(OUTBOX_WRITTEN, False))
