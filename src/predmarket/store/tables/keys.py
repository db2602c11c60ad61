"""API credentials other than sessions: legacy API keys, developer keys and their audit log
(spec 2.7, 2.8, 5.3, 5.4; docs/keys.md).

Secrets are never stored: a key row keeps the public id that is part of the key (the lookup key
and the key's API id) and the SHA-256 digest of the key's secret. Revocation is the
``revoked_at`` column, read on every request, so it holds across restarts and worker processes.
Scopes are stored as one space-delimited string (the form of OAuth's ``scope`` parameter), sorted.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import Column, ForeignKey, Index, String, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import address, big_id, one_of, timestamp
from predmarket.store.types import JsonDocument

#: Public key ids are 32 lowercase hex characters; digests are SHA-256 as hex.
KEY_ID_LENGTH: Final = 32
DIGEST_LENGTH: Final = 64
NAME_LENGTH: Final = 64
#: Room for every scope of either kind, space-delimited.
SCOPES_LENGTH: Final = 200
#: ``bld_`` and 12 base32 characters.
BUILDER_CODE_LENGTH: Final = 16
DEVELOPER_KEY_EVENTS: Final = ("created", "rotated", "revoked", "updated")

api_key = Table(
    "api_key",
    metadata,
    Column("id", String(KEY_ID_LENGTH), primary_key=True, comment="public id, part of the key"),
    address("wallet", comment="canonical wallet: the address, groupless ones without :N"),
    Column("name", String(NAME_LENGTH), nullable=False),
    Column("scopes", String(SCOPES_LENGTH), nullable=False, comment="space-delimited, sorted"),
    Column("secret_digest", String(DIGEST_LENGTH), nullable=False),
    Column("key_type", String(12), nullable=False, comment="of the key that signed the minting"),
    Column("public_key", String(66), nullable=False, comment="compressed secp256k1, hex"),
    timestamp("created_at"),
    timestamp("last_used_at", nullable=True, comment="updated at most once a minute"),
    timestamp("revoked_at", nullable=True),
    one_of("key_type", ("default", "gl-secp256k1")),
    comment="Legacy API keys (svc_live_): a wallet credential with scopes; secret as digest.",
)

# GET /v1/auth/keys: a wallet's keys, newest first.
Index(None, api_key.c.wallet, api_key.c.created_at, api_key.c.id)

developer_key = Table(
    "developer_key",
    metadata,
    Column("id", String(KEY_ID_LENGTH), primary_key=True, comment="public id, part of the key"),
    address("owner", comment="canonical wallet of the session that created it"),
    Column(
        "builder_code",
        String(BUILDER_CODE_LENGTH),
        nullable=False,
        comment="public attribution identity; immutable, kept across rotation",
    ),
    Column("name", String(NAME_LENGTH), nullable=False),
    Column("scopes", String(SCOPES_LENGTH), nullable=False, comment="space-delimited, sorted"),
    Column("secret_digest", String(DIGEST_LENGTH), nullable=False, comment="current secret"),
    timestamp("created_at"),
    timestamp("rotated_at", nullable=True, comment="last rotation"),
    timestamp("last_used_at", nullable=True, comment="updated at most once a minute"),
    timestamp("revoked_at", nullable=True),
    comment="Developer keys (svc_dev_): identify an integration, never a wallet.",
)

Index(None, developer_key.c.builder_code, unique=True)
# GET /v1/developer/keys: an owner's keys, newest first.
Index(None, developer_key.c.owner, developer_key.c.created_at, developer_key.c.id)

developer_key_event = Table(
    "developer_key_event",
    metadata,
    big_id(),
    Column(
        "key_id",
        String(KEY_ID_LENGTH),
        ForeignKey("developer_key.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("event", String(16), nullable=False),
    timestamp("occurred_at"),
    address("actor", comment="the wallet whose session did it"),
    Column("request_id", String(64), nullable=True, comment="x-request-id of the request"),
    Column(
        "details",
        JsonDocument(),
        nullable=True,
        comment="what changed (name, scopes); never a secret",
    ),
    one_of("event", DEVELOPER_KEY_EVENTS),
    comment="Audit log of developer key events, append-only.",
)

# GET /v1/developer/keys/{id}/events: a key's events, newest first.
Index(None, developer_key_event.c.key_id, developer_key_event.c.id)
