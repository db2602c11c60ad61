"""Developer webhooks: subscriptions, deliveries, attempts and the dispatcher's cursor.

Revision ID: 0005
Revises: 0004
Created: 2026-11-23

Creates ``webhook_subscription``, ``webhook_delivery``, ``webhook_attempt`` and
``webhook_cursor`` exactly as ``predmarket.store.tables.webhooks`` defines them (see
docs/webhooks.md). Webhook secrets are stored only encrypted.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from predmarket.store import types

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "webhook_subscription",
        sa.Column("id", sa.String(length=35), nullable=False, comment="wh_ + 32 hex"),
        sa.Column(
            "owner",
            sa.String(length=80),
            nullable=False,
            comment="canonical wallet owning the developer key that created it",
        ),
        sa.Column(
            "key_id", sa.String(length=32), nullable=False, comment="developer key that created it"
        ),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("description", sa.String(length=256), nullable=True),
        sa.Column(
            "topics",
            types.JsonDocument(),
            nullable=False,
            comment="list of spec 6.1 topics, as asked",
        ),
        sa.Column(
            "feeds",
            types.JsonDocument(),
            nullable=False,
            comment="the outbox topics that feed them (a groupless wallet under both spellings)",
        ),
        sa.Column(
            "secret_ciphertext",
            sa.String(length=128),
            nullable=False,
            comment="AES-GCM under a key derived from the server secret; never plain text",
        ),
        sa.Column("previous_secret_ciphertext", sa.String(length=128), nullable=True),
        sa.Column("previous_secret_expires_at", types.UtcDateTime(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_at", types.UtcDateTime(), nullable=True),
        sa.Column("disabled_reason", sa.String(length=256), nullable=True),
        sa.Column(
            "start_after_event_id",
            sa.BigInteger(),
            nullable=False,
            comment="events up to this outbox id predate the subscription",
        ),
        sa.Column(
            "consecutive_failures",
            sa.Integer(),
            nullable=False,
            comment="failed attempts since a 2xx",
        ),
        sa.Column(
            "first_failure_at",
            types.UtcDateTime(),
            nullable=True,
            comment="first failure since the last 2xx",
        ),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.Column("secret_rotated_at", types.UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_subscription")),
        comment="Developer webhook subscriptions; the signing secret only encrypted.",
    )
    op.create_index(
        op.f("ix_webhook_subscription_owner_created_at"),
        "webhook_subscription",
        ["owner", "created_at"],
        unique=False,
    )
    op.create_table(
        "webhook_delivery",
        sa.Column("id", sa.String(length=36), nullable=False, comment="msg_ + 32 hex; webhook-id"),
        sa.Column("subscription_id", sa.String(length=35), nullable=False),
        sa.Column("event_id", sa.BigInteger(), nullable=False, comment="the outbox id"),
        sa.Column("topic", sa.String(length=255), nullable=False),
        sa.Column(
            "event",
            types.JsonDocument(),
            nullable=False,
            comment="the body sent: the frame's data",
        ),
        sa.Column("status", sa.String(length=9), nullable=False),
        sa.Column(
            "attempts",
            sa.Integer(),
            nullable=False,
            comment="attempts made, redeliveries included",
        ),
        sa.Column(
            "round_attempts",
            sa.Integer(),
            nullable=False,
            comment="attempts in the current schedule",
        ),
        sa.Column(
            "next_attempt_at",
            types.UtcDateTime(),
            nullable=True,
            comment="when due; NULL once final",
        ),
        sa.Column(
            "lease_expires_at", types.UtcDateTime(), nullable=True, comment="a worker's lease"
        ),
        sa.Column(
            "lock_token", sa.String(length=32), nullable=True, comment="the lease holder's token"
        ),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=512), nullable=True),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.Column(
            "first_attempt_at",
            types.UtcDateTime(),
            nullable=True,
            comment="first attempt of the current round",
        ),
        sa.Column("delivered_at", types.UtcDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'failed')",
            name=op.f("ck_webhook_delivery_status"),
        ),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["webhook_subscription.id"],
            name=op.f("fk_webhook_delivery_subscription_id_webhook_subscription"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_delivery")),
        comment="One event for one webhook subscription: the unit of at-least-once delivery.",
    )
    op.create_index(
        op.f("ix_webhook_delivery_subscription_id_event_id"),
        "webhook_delivery",
        ["subscription_id", "event_id"],
        unique=True,
    )
    op.create_index(
        op.f("ix_webhook_delivery_subscription_id_created_at_id"),
        "webhook_delivery",
        ["subscription_id", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_webhook_delivery_status_next_attempt_at"),
        "webhook_delivery",
        ["status", "next_attempt_at"],
        unique=False,
    )
    op.create_table(
        "webhook_attempt",
        sa.Column("id", BigId, sa.Identity(always=False), nullable=False),
        sa.Column("delivery_id", sa.String(length=36), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False, comment="1-based, across redeliveries"),
        sa.Column("started_at", types.UtcDateTime(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True, comment="NULL: no HTTP response"),
        sa.Column("outcome", sa.String(length=9), nullable=False),
        sa.Column("error", sa.String(length=512), nullable=True),
        sa.Column(
            "next_attempt_at",
            types.UtcDateTime(),
            nullable=True,
            comment="the retry it scheduled, if any",
        ),
        sa.CheckConstraint(
            "outcome IN ('succeeded', 'failed')", name=op.f("ck_webhook_attempt_outcome")
        ),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_delivery.id"],
            name=op.f("fk_webhook_attempt_delivery_id_webhook_delivery"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempt")),
        comment="Every webhook delivery attempt, append-only.",
    )
    op.create_index(
        op.f("ix_webhook_attempt_delivery_id_id"),
        "webhook_attempt",
        ["delivery_id", "id"],
        unique=False,
    )
    op.create_table(
        "webhook_cursor",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("last_event_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_webhook_cursor")),
        comment="The webhook dispatcher's position in the outbox.",
    )


def downgrade() -> None:
    op.drop_table("webhook_cursor")
    op.drop_index(op.f("ix_webhook_attempt_delivery_id_id"), table_name="webhook_attempt")
    op.drop_table("webhook_attempt")
    op.drop_index(op.f("ix_webhook_delivery_status_next_attempt_at"), table_name="webhook_delivery")
    op.drop_index(
        op.f("ix_webhook_delivery_subscription_id_created_at_id"), table_name="webhook_delivery"
    )
    op.drop_index(
        op.f("ix_webhook_delivery_subscription_id_event_id"), table_name="webhook_delivery"
    )
    op.drop_table("webhook_delivery")
    op.drop_index(
        op.f("ix_webhook_subscription_owner_created_at"), table_name="webhook_subscription"
    )
    op.drop_table("webhook_subscription")
