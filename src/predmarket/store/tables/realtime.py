"""Service state behind the realtime stream (docs/realtime.md).

``platform_setting`` holds small named documents the service writes itself:

- ``banner``: the platform banner (``{message, level}``), set by the operator route and announced
  on the ``settings:banner`` topic;
- ``outbox_horizon``: ``{"prunedThrough": N}``, the largest outbox id the retention pruner has
  deleted. A replay cursor below it cannot be served (``svc-reset``).
"""

from __future__ import annotations

from sqlalchemy import Column, String, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import timestamp
from predmarket.store.types import JsonDocument

platform_setting = Table(
    "platform_setting",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", JsonDocument(), nullable=False),
    timestamp("updated_at"),
    comment="Named service settings and markers: the banner, the outbox retention horizon.",
)
