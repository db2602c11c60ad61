"""SQL of wallet sessions (table ``auth_session``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.auth import auth_session

s = auth_session.c

#: What a request needs to authenticate a token (digests stay inside the auth package).
_AUTH_COLUMNS = (
    s.id,
    s.wallet,
    s.address,
    s.key_type,
    s.mode,
    s.token_digest,
    s.csrf_digest,
    s.last_seen_at,
    s.expires_at,
    s.max_expires_at,
    s.revoked_at,
)
#: What the session listing shows: never a token, CSRF secret, digest or fingerprint.
_LIST_COLUMNS = (
    s.id,
    s.mode,
    s.created_at,
    s.last_seen_at,
    s.expires_at,
    s.revoked_at,
)


async def insert_session(conn: AsyncConnection, **values: object) -> None:
    await conn.execute(insert(auth_session).values(**values))


async def get_by_token_id(conn: AsyncConnection, token_id: str) -> Any:
    row = (await conn.execute(select(*_AUTH_COLUMNS).where(s.token_id == token_id))).one_or_none()
    return row


async def touch(
    conn: AsyncConnection, session_id: uuid.UUID, *, now: datetime, expires_at: datetime
) -> None:
    """Record use of a live cookie session and slide its expiry."""
    await conn.execute(
        update(auth_session)
        .where(s.id == session_id, s.revoked_at.is_(None))
        .values(last_seen_at=now, expires_at=expires_at)
    )


async def revoke(
    conn: AsyncConnection, session_id: uuid.UUID, *, wallet: str, now: datetime
) -> int:
    """Revoke one live session of ``wallet``; the number of rows revoked (0 or 1)."""
    result = await conn.execute(
        update(auth_session)
        .where(s.id == session_id, s.wallet == wallet, s.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return result.rowcount


async def revoke_all(conn: AsyncConnection, *, wallet: str, now: datetime) -> list[uuid.UUID]:
    """Revoke every unrevoked session of ``wallet`` (expired ones too: nothing to gain); the ids
    revoked."""
    result = await conn.execute(
        update(auth_session)
        .where(s.wallet == wallet, s.revoked_at.is_(None))
        .values(revoked_at=now)
        .returning(s.id)
    )
    return list(result.scalars())


async def list_recent(conn: AsyncConnection, *, wallet: str, limit: int) -> Sequence[Any]:
    query = (
        select(*_LIST_COLUMNS)
        .where(s.wallet == wallet)
        .order_by(s.created_at.desc(), s.id.desc())
        .limit(limit)
    )
    return (await conn.execute(query)).all()
