"""API credentials: legacy API keys, developer keys and the developer key audit log.

Revision ID: 0003
Revises: 0002
Created: 2026-11-22

Creates ``api_key``, ``developer_key`` and ``developer_key_event`` exactly as
``predmarket.store.tables.keys`` defines them (see docs/keys.md). Secrets are stored only as
SHA-256 digests.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from predmarket.store import types

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_key",
        sa.Column("id", sa.String(length=32), nullable=False, comment="public id, part of the key"),
        sa.Column(
            "wallet",
            sa.String(length=80),
            nullable=False,
            comment="canonical wallet: the address, groupless ones without :N",
        ),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column(
            "scopes", sa.String(length=200), nullable=False, comment="space-delimited, sorted"
        ),
        sa.Column("secret_digest", sa.String(length=64), nullable=False),
        sa.Column(
            "key_type",
            sa.String(length=12),
            nullable=False,
            comment="of the key that signed the minting",
        ),
        sa.Column(
            "public_key", sa.String(length=66), nullable=False, comment="compressed secp256k1, hex"
        ),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.Column(
            "last_used_at",
            types.UtcDateTime(),
            nullable=True,
            comment="updated at most once a minute",
        ),
        sa.Column("revoked_at", types.UtcDateTime(), nullable=True),
        sa.CheckConstraint(
            "key_type IN ('default', 'gl-secp256k1')", name=op.f("ck_api_key_key_type")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_key")),
        comment="Legacy API keys (svc_live_): a wallet credential with scopes; secret as digest.",
    )
    op.create_index(
        op.f("ix_api_key_wallet_created_at_id"),
        "api_key",
        ["wallet", "created_at", "id"],
        unique=False,
    )
    op.create_table(
        "developer_key",
        sa.Column("id", sa.String(length=32), nullable=False, comment="public id, part of the key"),
        sa.Column(
            "owner",
            sa.String(length=80),
            nullable=False,
            comment="canonical wallet of the session that created it",
        ),
        sa.Column(
            "builder_code",
            sa.String(length=16),
            nullable=False,
            comment="public attribution identity; immutable, kept across rotation",
        ),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column(
            "scopes", sa.String(length=200), nullable=False, comment="space-delimited, sorted"
        ),
        sa.Column("secret_digest", sa.String(length=64), nullable=False, comment="current secret"),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.Column("rotated_at", types.UtcDateTime(), nullable=True, comment="last rotation"),
        sa.Column(
            "last_used_at",
            types.UtcDateTime(),
            nullable=True,
            comment="updated at most once a minute",
        ),
        sa.Column("revoked_at", types.UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_developer_key")),
        comment="Developer keys (svc_dev_): identify an integration, never a wallet.",
    )
    op.create_index(
        op.f("ix_developer_key_builder_code"), "developer_key", ["builder_code"], unique=True
    )
    op.create_index(
        op.f("ix_developer_key_owner_created_at_id"),
        "developer_key",
        ["owner", "created_at", "id"],
        unique=False,
    )
    op.create_table(
        "developer_key_event",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.Identity(always=False),
            nullable=False,
        ),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("event", sa.String(length=16), nullable=False),
        sa.Column("occurred_at", types.UtcDateTime(), nullable=False),
        sa.Column(
            "actor",
            sa.String(length=80),
            nullable=False,
            comment="the wallet whose session did it",
        ),
        sa.Column(
            "request_id",
            sa.String(length=64),
            nullable=True,
            comment="x-request-id of the request",
        ),
        sa.Column(
            "details",
            types.JsonDocument(),
            nullable=True,
            comment="what changed (name, scopes); never a secret",
        ),
        sa.CheckConstraint(
            "event IN ('created', 'rotated', 'revoked', 'updated')",
            name=op.f("ck_developer_key_event_event"),
        ),
        sa.ForeignKeyConstraint(
            ["key_id"],
            ["developer_key.id"],
            name=op.f("fk_developer_key_event_key_id_developer_key"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_developer_key_event")),
        comment="Audit log of developer key events, append-only.",
    )
    op.create_index(
        op.f("ix_developer_key_event_key_id_id"),
        "developer_key_event",
        ["key_id", "id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_developer_key_event_key_id_id"), table_name="developer_key_event")
    op.drop_table("developer_key_event")
    op.drop_index(op.f("ix_developer_key_owner_created_at_id"), table_name="developer_key")
    op.drop_index(op.f("ix_developer_key_builder_code"), table_name="developer_key")
    op.drop_table("developer_key")
    op.drop_index(op.f("ix_api_key_wallet_created_at_id"), table_name="api_key")
    op.drop_table("api_key")
