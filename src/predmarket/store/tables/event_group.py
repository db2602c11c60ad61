"""Event groups: linked markets shown together (spec tag "Events")."""

from __future__ import annotations

from sqlalchemy import Column, Index, String, Table, Text

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import LABEL_LENGTH, small_id, timestamp

event_group = Table(
    "event_group",
    metadata,
    small_id(),
    # The stable public handle of the group, taken from market metadata (``eventGroup.slug``).
    Column("slug", String(128), nullable=False, unique=True),
    Column("title", Text, nullable=False),
    Column("category", String(LABEL_LENGTH), nullable=False, server_default=""),
    timestamp("created_at"),
    comment="Linked-market groups; markets point here with market.event_group_id.",
)

# GET /v1/events: newest first, optionally within a category.
Index(None, event_group.c.created_at, event_group.c.id)
Index(None, event_group.c.category, event_group.c.created_at, event_group.c.id)
