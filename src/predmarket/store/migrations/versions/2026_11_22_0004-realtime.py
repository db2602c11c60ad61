"""Realtime: platform settings (banner, outbox retention horizon) and the outbox wake-up.

Revision ID: 0004
Revises: 0003
Created: 2026-11-23

Creates ``platform_setting`` as ``predmarket.store.tables.realtime`` defines it. On PostgreSQL it
also installs a statement-level trigger on ``outbox`` that runs ``pg_notify('predmarket_outbox',
'')``: PostgreSQL delivers the notification when the writing transaction commits, so every
worker's realtime broker wakes as soon as any process commits an event (docs/realtime.md).
Notifications with the same payload in one transaction are folded into one.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from predmarket.store import types

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOTIFY_FUNCTION = """
CREATE OR REPLACE FUNCTION predmarket_outbox_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('predmarket_outbox', '');
    RETURN NULL;
END;
$$
"""
NOTIFY_TRIGGER = """
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
FOR EACH STATEMENT EXECUTE FUNCTION predmarket_outbox_notify()
"""


def upgrade() -> None:
    op.create_table(
        "platform_setting",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", types.JsonDocument(), nullable=False),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_platform_setting")),
        comment="Named service settings and markers: the banner, the outbox retention horizon.",
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(NOTIFY_FUNCTION)
        op.execute(NOTIFY_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS outbox_notify ON outbox")
        op.execute("DROP FUNCTION IF EXISTS predmarket_outbox_notify()")
    op.drop_table("platform_setting")
