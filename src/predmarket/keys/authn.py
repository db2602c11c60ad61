"""Verifying a presented legacy API key or developer key (used by the auth middleware).

A key is ``<prefix><id>_<secret>`` (:mod:`predmarket.auth.tokens`): the id finds the row, the
secret's SHA-256 is compared with the stored digest in constant time, and a revoked key is
refused. ``last_used_at`` is written at most once per :data:`TOUCH_PERIOD` per key, so a busy key
costs one write a minute, not one per request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.auth import tokens
from predmarket.auth.principal import DeveloperIdentity
from predmarket.keys import queries

#: Prefix of a legacy API key (sent as ``Authorization: Bearer svc_live_…``).
API_KEY_PREFIX: Final = "svc_live_"
#: Prefix of a developer key, and the one header that carries it (never a URL).
DEVELOPER_KEY_PREFIX: Final = "svc_dev_"
DEVELOPER_KEY_HEADER: Final = "x-svc-developer-key"
#: How stale ``last_used_at`` may get (it is shown "to the minute").
TOUCH_PERIOD: Final = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class ApiKeyAuth:
    key_id: str
    wallet: str
    scopes: frozenset[str]


def _stale(last_used_at: datetime | None, now: datetime) -> bool:
    return last_used_at is None or last_used_at < now - TOUCH_PERIOD


async def authenticate_api_key(
    conn: AsyncConnection, token: str, now: datetime
) -> ApiKeyAuth | None:
    """The live legacy key ``token`` names, or None (unknown, malformed, revoked)."""
    parsed = tokens.parse(token, API_KEY_PREFIX)
    if parsed is None:
        return None
    key_id, secret = parsed
    row = await queries.api_key_for_auth(conn, key_id)
    if row is None or not tokens.verify(secret, row["secret_digest"]):
        return None
    if row["revoked_at"] is not None:
        return None
    if _stale(row["last_used_at"], now):
        await queries.touch_api_key(conn, key_id, now=now, before=now - TOUCH_PERIOD)
    return ApiKeyAuth(key_id=key_id, wallet=row["wallet"], scopes=queries.scopes_of(row["scopes"]))


async def authenticate_developer_key(
    conn: AsyncConnection, token: str, now: datetime
) -> DeveloperIdentity | None:
    """The live developer key ``token`` names, or None (unknown, malformed, revoked)."""
    parsed = tokens.parse(token, DEVELOPER_KEY_PREFIX)
    if parsed is None:
        return None
    key_id, secret = parsed
    row = await queries.developer_key_for_auth(conn, key_id)
    if row is None or not tokens.verify(secret, row["secret_digest"]):
        return None
    if row["revoked_at"] is not None:
        return None
    if _stale(row["last_used_at"], now):
        await queries.touch_developer_key(conn, key_id, now=now, before=now - TOUCH_PERIOD)
    return DeveloperIdentity(
        key_id=key_id,
        builder_code=row["builder_code"],
        owner=row["owner"],
        scopes=queries.scopes_of(row["scopes"]),
    )
