"""Statements over ``api_key``, ``developer_key`` and ``developer_key_event``.

Listing statements never select ``secret_digest``; only the verification lookups do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, Select, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.keys import api_key, developer_key, developer_key_event


def scopes_text(scopes: Iterable[str]) -> str:
    """The stored form: distinct scope names, sorted, space-delimited."""
    return " ".join(sorted(set(scopes)))


def scopes_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- legacy API keys ----------------------------------------------------------------------------

_API_KEY_PUBLIC = (
    api_key.c.id,
    api_key.c.name,
    api_key.c.scopes,
    api_key.c.created_at,
    api_key.c.last_used_at,
)


async def insert_api_key(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(api_key).values(**values))


async def count_live_api_keys(conn: AsyncConnection, wallet: str) -> int:
    stmt = select(func.count()).where(api_key.c.wallet == wallet, api_key.c.revoked_at.is_(None))
    return int(await conn.scalar(stmt) or 0)


def live_api_keys(wallet: str) -> Select[Any]:
    """A wallet's live keys (page with the keyset ``created_at, id``)."""
    return select(*_API_KEY_PUBLIC).where(
        api_key.c.wallet == wallet, api_key.c.revoked_at.is_(None)
    )


async def api_key_for_auth(conn: AsyncConnection, key_id: str) -> RowMapping | None:
    stmt = select(
        api_key.c.id,
        api_key.c.wallet,
        api_key.c.scopes,
        api_key.c.secret_digest,
        api_key.c.last_used_at,
        api_key.c.revoked_at,
    ).where(api_key.c.id == key_id)
    return (await conn.execute(stmt)).mappings().first()


async def revoke_api_key(conn: AsyncConnection, *, wallet: str, key_id: str, now: datetime) -> bool:
    """Revoke the wallet's live key ``key_id``; False when there is none."""
    result = await conn.execute(
        update(api_key)
        .where(api_key.c.id == key_id, api_key.c.wallet == wallet, api_key.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return result.rowcount == 1


async def touch_api_key(
    conn: AsyncConnection, key_id: str, *, now: datetime, before: datetime
) -> None:
    """Set ``last_used_at`` unless it was set after ``before`` (at most one write a period)."""
    await conn.execute(
        update(api_key)
        .where(
            api_key.c.id == key_id,
            (api_key.c.last_used_at.is_(None)) | (api_key.c.last_used_at < before),
        )
        .values(last_used_at=now)
    )


# -- developer keys -----------------------------------------------------------------------------

_DEVELOPER_KEY_PUBLIC = (
    developer_key.c.id,
    developer_key.c.builder_code,
    developer_key.c.name,
    developer_key.c.scopes,
    developer_key.c.created_at,
    developer_key.c.rotated_at,
    developer_key.c.revoked_at,
    developer_key.c.last_used_at,
)


async def insert_developer_key(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(developer_key).values(**values))


async def builder_code_taken(conn: AsyncConnection, code: str) -> bool:
    stmt = select(developer_key.c.id).where(developer_key.c.builder_code == code)
    return (await conn.scalar(stmt)) is not None


async def count_live_developer_keys(conn: AsyncConnection, owner: str) -> int:
    stmt = select(func.count()).where(
        developer_key.c.owner == owner, developer_key.c.revoked_at.is_(None)
    )
    return int(await conn.scalar(stmt) or 0)


def developer_keys_of(owner: str) -> Select[Any]:
    """An owner's keys, revoked ones included (page with the keyset ``created_at, id``)."""
    return select(*_DEVELOPER_KEY_PUBLIC).where(developer_key.c.owner == owner)


async def get_developer_key(conn: AsyncConnection, *, owner: str, key_id: str) -> RowMapping | None:
    stmt = select(*_DEVELOPER_KEY_PUBLIC).where(
        developer_key.c.id == key_id, developer_key.c.owner == owner
    )
    return (await conn.execute(stmt)).mappings().first()


async def developer_key_for_auth(conn: AsyncConnection, key_id: str) -> RowMapping | None:
    stmt = select(
        developer_key.c.id,
        developer_key.c.owner,
        developer_key.c.builder_code,
        developer_key.c.scopes,
        developer_key.c.secret_digest,
        developer_key.c.last_used_at,
        developer_key.c.revoked_at,
    ).where(developer_key.c.id == key_id)
    return (await conn.execute(stmt)).mappings().first()


async def update_live_developer_key(
    conn: AsyncConnection, *, owner: str, key_id: str, values: Mapping[str, Any]
) -> bool:
    """Change the owner's live key ``key_id``; False when there is none."""
    result = await conn.execute(
        update(developer_key)
        .where(
            developer_key.c.id == key_id,
            developer_key.c.owner == owner,
            developer_key.c.revoked_at.is_(None),
        )
        .values(**values)
    )
    return result.rowcount == 1


async def touch_developer_key(
    conn: AsyncConnection, key_id: str, *, now: datetime, before: datetime
) -> None:
    await conn.execute(
        update(developer_key)
        .where(
            developer_key.c.id == key_id,
            (developer_key.c.last_used_at.is_(None)) | (developer_key.c.last_used_at < before),
        )
        .values(last_used_at=now)
    )


async def insert_event(
    conn: AsyncConnection,
    *,
    key_id: str,
    event: str,
    occurred_at: datetime,
    actor: str,
    request_id: str | None,
    details: Mapping[str, object] | None = None,
) -> None:
    await conn.execute(
        insert(developer_key_event).values(
            key_id=key_id,
            event=event,
            occurred_at=occurred_at,
            actor=actor,
            request_id=request_id,
            details=dict(details) if details else None,
        )
    )


def events_of(key_id: str) -> Select[Any]:
    """A key's audit log (page with the keyset ``id, id``)."""
    c = developer_key_event.c
    return select(c.id, c.event, c.occurred_at, c.actor, c.request_id, c.details).where(
        c.key_id == key_id
    )
