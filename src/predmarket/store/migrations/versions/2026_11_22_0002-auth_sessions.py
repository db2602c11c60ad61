"""Wallet sign-in: challenges and sessions.

Revision ID: 0002
Revises: 0001
Created: 2026-11-22

Creates ``auth_challenge`` and ``auth_session`` exactly as ``predmarket.store.tables.auth``
defines them (see docs/auth.md). Secrets are stored only as SHA-256 digests.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from predmarket.store import types

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "auth_challenge",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.Identity(always=False),
            nullable=False,
        ),
        sa.Column(
            "nonce", sa.String(length=32), nullable=False, comment="32 hex characters, in the text"
        ),
        sa.Column(
            "address",
            sa.String(length=80),
            nullable=True,
            comment="the wallet it names; NULL: any wallet may sign",
        ),
        sa.Column("text", sa.Text(), nullable=False, comment="the exact text to sign"),
        sa.Column(
            "text_digest",
            sa.String(length=64),
            nullable=False,
            comment="SHA-256 of the text: finds the challenge a session request echoes back",
        ),
        sa.Column("issued_at", types.UtcDateTime(), nullable=False),
        sa.Column("expires_at", types.UtcDateTime(), nullable=False),
        sa.Column(
            "used_at",
            types.UtcDateTime(),
            nullable=True,
            comment="set once, by the request that consumed it",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_challenge")),
        comment="Sign-in challenges: single-use, short-lived.",
    )
    op.create_index(
        op.f("ix_auth_challenge_address_id"), "auth_challenge", ["address", "id"], unique=False
    )
    op.create_index(
        op.f("ix_auth_challenge_expires_at"), "auth_challenge", ["expires_at"], unique=False
    )
    op.create_index(op.f("ix_auth_challenge_nonce"), "auth_challenge", ["nonce"], unique=True)
    op.create_index(
        op.f("ix_auth_challenge_text_digest"), "auth_challenge", ["text_digest"], unique=True
    )
    op.create_table(
        "auth_session",
        sa.Column("id", sa.Uuid(), nullable=False, comment="the public session id"),
        sa.Column(
            "wallet",
            sa.String(length=80),
            nullable=False,
            comment="canonical wallet: the address, groupless ones without :N",
        ),
        sa.Column(
            "address", sa.String(length=80), nullable=False, comment="the address as signed in"
        ),
        sa.Column("key_type", sa.String(length=12), nullable=False),
        sa.Column(
            "public_key",
            sa.String(length=66),
            nullable=False,
            comment="compressed secp256k1, hex",
        ),
        sa.Column("mode", sa.String(length=6), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=False, comment="public part of token"),
        sa.Column("token_digest", sa.String(length=64), nullable=False),
        sa.Column(
            "csrf_digest",
            sa.String(length=64),
            nullable=True,
            comment="digest of the CSRF token's secret; NULL for bearer sessions",
        ),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.Column("last_seen_at", types.UtcDateTime(), nullable=False),
        sa.Column(
            "expires_at",
            types.UtcDateTime(),
            nullable=False,
            comment="cookie: slides on use up to max_expires_at; bearer: fixed",
        ),
        sa.Column(
            "max_expires_at",
            types.UtcDateTime(),
            nullable=False,
            comment="absolute end of the session",
        ),
        sa.Column("revoked_at", types.UtcDateTime(), nullable=True),
        sa.CheckConstraint(
            "key_type IN ('default', 'gl-secp256k1')", name=op.f("ck_auth_session_key_type")
        ),
        sa.CheckConstraint("mode IN ('cookie', 'bearer')", name=op.f("ck_auth_session_mode")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_session")),
        comment="Wallet sessions (cookie and bearer); secrets only as digests.",
    )
    op.create_index(op.f("ix_auth_session_token_id"), "auth_session", ["token_id"], unique=True)
    op.create_index(
        op.f("ix_auth_session_wallet_created_at"),
        "auth_session",
        ["wallet", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_auth_session_wallet_created_at"), table_name="auth_session")
    op.drop_index(op.f("ix_auth_session_token_id"), table_name="auth_session")
    op.drop_table("auth_session")
    op.drop_index(op.f("ix_auth_challenge_text_digest"), table_name="auth_challenge")
    op.drop_index(op.f("ix_auth_challenge_nonce"), table_name="auth_challenge")
    op.drop_index(op.f("ix_auth_challenge_expires_at"), table_name="auth_challenge")
    op.drop_index(op.f("ix_auth_challenge_address_id"), table_name="auth_challenge")
    op.drop_table("auth_challenge")
