"""Wallet sign-in state: challenges and sessions (spec 3.1, 5.2; docs/auth.md).

Secrets are never stored: a session keeps the public id of its token (``token_id``, the lookup
key) and the SHA-256 digests of the token's secret and of its CSRF token's secret.
Revocation is the ``revoked_at`` column, read on every request, so it holds across restarts and
worker processes.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import Column, Index, String, Table, Text, Uuid

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import address, big_id, one_of, timestamp

KEY_TYPES: Final = ("default", "gl-secp256k1")
SESSION_MODES: Final = ("cookie", "bearer")
#: Public token ids are 32 lowercase hex characters; digests are SHA-256 as hex.
TOKEN_ID_LENGTH: Final = 32
DIGEST_LENGTH: Final = 64

auth_challenge = Table(
    "auth_challenge",
    metadata,
    big_id(),
    Column("nonce", String(32), nullable=False, comment="32 hex characters, in the text"),
    address("address", nullable=True, comment="the wallet it names; NULL: any wallet may sign"),
    Column("text", Text, nullable=False, comment="the exact text to sign"),
    Column(
        "text_digest",
        String(DIGEST_LENGTH),
        nullable=False,
        comment="SHA-256 of the text: finds the challenge a session request echoes back",
    ),
    timestamp("issued_at"),
    timestamp("expires_at"),
    timestamp("used_at", nullable=True, comment="set once, by the request that consumed it"),
    comment="Sign-in challenges: single-use, short-lived.",
)

Index(None, auth_challenge.c.nonce, unique=True)
Index(None, auth_challenge.c.text_digest, unique=True)
# The newest challenge issued for a wallet (a session request without the challenge text).
Index(None, auth_challenge.c.address, auth_challenge.c.id)
# Purging expired challenges.
Index(None, auth_challenge.c.expires_at)

auth_session = Table(
    "auth_session",
    metadata,
    Column("id", Uuid(), primary_key=True, comment="the public session id"),
    address("wallet", comment="canonical wallet: the address, groupless ones without :N"),
    address("address", comment="the address as signed in"),
    Column("key_type", String(12), nullable=False),
    Column("public_key", String(66), nullable=False, comment="compressed secp256k1, hex"),
    Column("mode", String(6), nullable=False),
    Column("token_id", String(TOKEN_ID_LENGTH), nullable=False, comment="public part of token"),
    Column("token_digest", String(DIGEST_LENGTH), nullable=False),
    Column(
        "csrf_digest",
        String(DIGEST_LENGTH),
        nullable=True,
        comment="digest of the CSRF token's secret; NULL for bearer sessions",
    ),
    timestamp("created_at"),
    timestamp("last_seen_at"),
    timestamp("expires_at", comment="cookie: slides on use up to max_expires_at; bearer: fixed"),
    timestamp("max_expires_at", comment="absolute end of the session"),
    timestamp("revoked_at", nullable=True),
    one_of("key_type", KEY_TYPES),
    one_of("mode", SESSION_MODES),
    comment="Wallet sessions (cookie and bearer); secrets only as digests.",
)

Index(None, auth_session.c.token_id, unique=True)
# GET /v1/auth/sessions (most recent first) and revoke-all of a wallet.
Index(None, auth_session.c.wallet, auth_session.c.created_at)
