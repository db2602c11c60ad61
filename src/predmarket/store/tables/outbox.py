"""The outbox: the durable, ordered event log behind realtime frames and webhooks.

``id`` is the realtime event id. Rows are appended through ``store.uow.append_outbox``, which
serialises writers so ids become visible in increasing order (see ``docs/data-model.md``).
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import Column, Index, String, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import big_id, one_of, timestamp
from predmarket.store.types import JsonDocument

OPERATIONS: Final = ("insert", "update", "delete")
SOURCES: Final = ("indexer", "api", "outbox")

outbox = Table(
    "outbox",
    metadata,
    big_id(),
    Column("topic", String(255), nullable=False),
    Column("operation", String(6), nullable=False),
    Column("entity", String(64), nullable=False),
    Column("key", JsonDocument(), nullable=False),
    Column("payload", JsonDocument(), nullable=False),
    Column("source", String(7), nullable=False),
    timestamp("created_at"),
    one_of("operation", OPERATIONS),
    one_of("source", SOURCES),
    # SQLite reuses the largest rowid after a delete unless AUTOINCREMENT is on; event ids must
    # never be reused, even after retention empties the table.
    sqlite_autoincrement=True,
    comment="Realtime event log; id is the event id, monotonic and never reused.",
)

# Replay of one topic after Last-Event-ID: WHERE topic = ? AND id > ? ORDER BY id.
Index(None, outbox.c.topic, outbox.c.id)
