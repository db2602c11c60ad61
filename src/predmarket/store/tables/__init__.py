"""The tables, one module per aggregate, all on ``predmarket.store.meta.metadata``.

Importing this package registers every table on the shared metadata (migrations and tests rely
on it). Import a table from its module: ``from predmarket.store.tables.market import market``.
"""

from __future__ import annotations

from predmarket.store.tables import (
    auth,
    event_group,
    fill,
    indexer,
    keys,
    market,
    market_tag,
    order,
    outbox,
    position,
    realtime,
    webhooks,
)

__all__ = [
    "auth",
    "event_group",
    "fill",
    "indexer",
    "keys",
    "market",
    "market_tag",
    "order",
    "outbox",
    "position",
    "realtime",
    "webhooks",
]
