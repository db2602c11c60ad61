"""Wallet sessions: open one from a signed challenge, authenticate its token, list, revoke.

Two modes, one row per sign-in (docs/auth.md):

- ``cookie``: the token travels in the HttpOnly ``svc_session`` cookie; every mutating request
  also carries the session's CSRF token in ``x-csrf-token``. The session ends after
  ``cookie_idle_days`` unused, or ``cookie_max_days`` after sign-in; use slides the idle expiry
  (written at most once a minute).
- ``bearer`` (``issueToken: true``): the token is sent as ``Authorization: Bearer``; CSRF-exempt;
  it lasts ``bearer_ttl_days`` (30 days) from issue and never slides. No cookie is set.

Revocation is ``revoked_at`` in the database, read on every request: it survives restarts and
holds across worker processes. Nothing about a session is cached in a process.

Every sign-in and revocation is announced on the wallet's ``user:{wallet}:notifications`` topic
(entity ``session``, source ``api``; docs/realtime.md) in the same transaction, so the wallet's
other tabs and devices learn of a new sign-in or of being signed out. No secret is in the event.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.auth import queries, tokens
from predmarket.auth.challenges import VerifiedWallet
from predmarket.kit.schemas import format_utc
from predmarket.settings import AuthSettings
from predmarket.store.uow import append_outbox

SESSION_PREFIX: Final = "svc_sess_"
CSRF_PREFIX: Final = "svc_csrf_"
COOKIE_NAME: Final = "svc_session"
CSRF_HEADER: Final = "x-csrf-token"
#: A cookie session's use is written at most this often (its expiry slides with it).
TOUCH_INTERVAL: Final = timedelta(minutes=1)
#: The session listing's cap (spec 8).
LIST_LIMIT: Final = 100

SessionMode = Literal["cookie", "bearer"]


@dataclass(frozen=True, slots=True)
class OpenedSession:
    """A new session; ``token`` and ``csrf_token`` are shown to the client once."""

    id: uuid.UUID
    wallet: str
    address: str
    key_type: str
    mode: SessionMode
    token: str
    csrf_token: str | None
    expires_at: datetime

    def __repr__(self) -> str:
        return f"OpenedSession(id={self.id}, wallet={self.wallet!r}, mode={self.mode!r})"


@dataclass(frozen=True, slots=True)
class SessionAuth:
    """A presented session token that verified: the live session it belongs to."""

    id: uuid.UUID
    wallet: str
    address: str
    mode: SessionMode
    token_id: str
    csrf_digest: str | None
    expires_at: datetime
    #: Whether this request slid a cookie session's expiry (the cookie is then set again).
    refreshed: bool = False


@dataclass(frozen=True, slots=True)
class SessionView:
    """One row of the session listing."""

    id: uuid.UUID
    mode: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


async def open_session(
    conn: AsyncConnection,
    signer: VerifiedWallet,
    *,
    bearer: bool,
    now: datetime,
    settings: AuthSettings,
) -> OpenedSession:
    """Open a session for a wallet that just signed a challenge."""
    token = tokens.new_secret(SESSION_PREFIX)
    mode: SessionMode = "bearer" if bearer else "cookie"
    csrf: tokens.IssuedSecret | None = None
    if bearer:
        expires_at = max_expires_at = now + timedelta(days=settings.bearer_ttl_days)
    else:
        csrf = tokens.new_secret(CSRF_PREFIX, id=token.id)
        max_expires_at = now + timedelta(days=settings.cookie_max_days)
        expires_at = min(now + timedelta(days=settings.cookie_idle_days), max_expires_at)
    session_id = uuid.uuid4()
    await queries.insert_session(
        conn,
        id=session_id,
        wallet=signer.wallet,
        address=signer.address,
        key_type=signer.key_type,
        public_key=signer.public_key,
        mode=mode,
        token_id=token.id,
        token_digest=token.digest,
        csrf_digest=csrf.digest if csrf else None,
        created_at=now,
        last_seen_at=now,
        expires_at=expires_at,
        max_expires_at=max_expires_at,
    )
    await _announce(
        conn,
        signer.wallet,
        session_id,
        "insert",
        {
            "mode": mode,
            "address": signer.address,
            "createdAt": format_utc(now),
            "expiresAt": format_utc(expires_at),
        },
    )
    return OpenedSession(
        id=session_id,
        wallet=signer.wallet,
        address=signer.address,
        key_type=signer.key_type,
        mode=mode,
        token=token.token,
        csrf_token=csrf.token if csrf else None,
        expires_at=expires_at,
    )


async def authenticate(
    conn: AsyncConnection,
    token: str,
    *,
    mode: SessionMode,
    now: datetime,
    settings: AuthSettings,
) -> SessionAuth | None:
    """The live session ``token`` opens in ``mode``, or None (malformed, unknown, wrong secret,
    other mode, expired or revoked). A cookie session's use is recorded and its expiry slides
    (at most once per :data:`TOUCH_INTERVAL`)."""
    parsed = tokens.parse(token, SESSION_PREFIX)
    if parsed is None:
        return None
    token_id, secret = parsed
    row = await queries.get_by_token_id(conn, token_id)
    if row is None or not tokens.verify(secret, row.token_digest):
        return None
    if row.mode != mode or row.revoked_at is not None or now >= row.expires_at:
        return None
    expires_at: datetime = row.expires_at
    refreshed = False
    if mode == "cookie" and now - row.last_seen_at >= TOUCH_INTERVAL:
        expires_at = min(now + timedelta(days=settings.cookie_idle_days), row.max_expires_at)
        await queries.touch(conn, row.id, now=now, expires_at=expires_at)
        refreshed = True
    return SessionAuth(
        id=row.id,
        wallet=row.wallet,
        address=row.address,
        mode=row.mode,
        token_id=token_id,
        csrf_digest=row.csrf_digest,
        expires_at=expires_at,
        refreshed=refreshed,
    )


def csrf_matches(session: SessionAuth, presented: str | None) -> bool:
    """Whether ``presented`` is the CSRF token issued with ``session`` (constant-time compare)."""
    if presented is None or session.csrf_digest is None:
        return False
    parsed = tokens.parse(presented, CSRF_PREFIX)
    if parsed is None:
        return False
    token_id, secret = parsed
    # The digest check runs whatever the id says, so timing tells nothing about either part.
    secret_ok = tokens.verify(secret, session.csrf_digest)
    return secret_ok and token_id == session.token_id


async def revoke(
    conn: AsyncConnection, wallet: str, session_id: uuid.UUID, *, now: datetime
) -> bool:
    """Revoke one of ``wallet``'s live sessions; False when it is missing, foreign or revoked."""
    revoked = await queries.revoke(conn, session_id, wallet=wallet, now=now) == 1
    if revoked:
        await _announce(conn, wallet, session_id, "update", {"revokedAt": format_utc(now)})
    return revoked


async def revoke_all(conn: AsyncConnection, wallet: str, *, now: datetime) -> int:
    """Revoke every session of ``wallet``, cookie and bearer; how many were not revoked yet."""
    revoked = await queries.revoke_all(conn, wallet=wallet, now=now)
    for session_id in sorted(revoked):
        await _announce(conn, wallet, session_id, "update", {"revokedAt": format_utc(now)})
    return len(revoked)


async def _announce(
    conn: AsyncConnection,
    wallet: str,
    session_id: uuid.UUID,
    operation: Literal["insert", "update"],
    payload: dict[str, str],
) -> None:
    await append_outbox(
        conn,
        topic=f"user:{wallet}:notifications",
        operation=operation,
        entity="session",
        key={"sessionId": str(session_id)},
        payload=payload,
        source="api",
    )


async def list_sessions(conn: AsyncConnection, wallet: str) -> Sequence[SessionView]:
    """The :data:`LIST_LIMIT` most recent sessions of ``wallet``, newest first."""
    rows = await queries.list_recent(conn, wallet=wallet, limit=LIST_LIMIT)
    return [
        SessionView(
            id=row.id,
            mode=row.mode,
            created_at=row.created_at,
            last_seen_at=row.last_seen_at,
            expires_at=row.expires_at,
            revoked_at=row.revoked_at,
        )
        for row in rows
    ]
