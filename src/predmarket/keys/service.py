"""Minting, listing and revoking legacy API keys; the life of developer keys (docs/keys.md).

Secrets come from :mod:`predmarket.auth.tokens`: a row keeps the key's public id and the digest
of its secret; the value is returned once, by the call that made it.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.auth import challenges, tokens
from predmarket.auth.principal import API_KEY_SCOPES, DEVELOPER_SCOPES
from predmarket.keys import queries
from predmarket.keys.authn import API_KEY_PREFIX, DEVELOPER_KEY_PREFIX
from predmarket.keys.errors import (
    ApiKeyNotFound,
    DeveloperKeyNotFound,
    DeveloperKeyRevoked,
    KeyLimitReached,
)
from predmarket.keys.schemas import (
    DEFAULT_API_KEY_SCOPES,
    DEFAULT_DEVELOPER_SCOPES,
    ApiKey,
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyPage,
    DeveloperKey,
    DeveloperKeyCreated,
    DeveloperKeyEvent,
    DeveloperKeyEventPage,
    DeveloperKeyPage,
)
from predmarket.kit.pagination import Keyset, PageRequest, paginate
from predmarket.store.tables.keys import api_key, developer_key, developer_key_event

#: Live keys a wallet may hold at once (a bound on rows a signature can create).
MAX_LIVE_API_KEYS: Final = 50
MAX_LIVE_DEVELOPER_KEYS: Final = 20

BUILDER_CODE_PREFIX: Final = "bld_"
_BASE32: Final = "abcdefghijklmnopqrstuvwxyz234567"
_BUILDER_CODE_CHARS: Final = 12


def new_builder_code() -> str:
    """``bld_`` and 12 random base32 characters (60 bits)."""
    bits = secrets.randbits(5 * _BUILDER_CODE_CHARS)
    chars = [_BASE32[(bits >> (5 * i)) & 31] for i in range(_BUILDER_CODE_CHARS)]
    return BUILDER_CODE_PREFIX + "".join(chars)


def _ordered(scopes: frozenset[str], order: Sequence[str]) -> list[str]:
    return [s for s in order if s in scopes]


# -- legacy API keys ----------------------------------------------------------------------------


def _api_key(row: RowMapping) -> ApiKey:
    return ApiKey(
        id=row["id"],
        name=row["name"],
        scopes=_ordered(queries.scopes_of(row["scopes"]), API_KEY_SCOPES),
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
    )


async def create_api_key(
    db: AsyncConnection, body: ApiKeyCreate, *, now: datetime
) -> ApiKeyCreated:
    """Mint a key for the wallet that signed a challenge (not idempotent: one key per call)."""
    signer = await challenges.consume_signed_challenge(
        db,
        address=body.address,
        public_key=body.public_key,
        signature=body.signature,
        key_type=body.key_type,
        challenge=body.challenge,
        now=now,
    )
    if await queries.count_live_api_keys(db, signer.wallet) >= MAX_LIVE_API_KEYS:
        raise KeyLimitReached(details={"limit": MAX_LIVE_API_KEYS})
    scopes = list(body.scopes) if body.scopes is not None else list(DEFAULT_API_KEY_SCOPES)
    issued = tokens.new_secret(API_KEY_PREFIX)
    await queries.insert_api_key(
        db,
        id=issued.id,
        wallet=signer.wallet,
        name=body.name,
        scopes=queries.scopes_text(scopes),
        secret_digest=issued.digest,
        key_type=signer.key_type,
        public_key=signer.public_key,
        created_at=now,
    )
    return ApiKeyCreated(
        id=issued.id,
        key=issued.token,
        name=body.name,
        scopes=scopes,
        created_at=now,
        last_used_at=None,
    )


async def list_api_keys(db: AsyncConnection, wallet: str, page: PageRequest) -> ApiKeyPage:
    """The wallet's live keys, newest first."""
    stmt = queries.live_api_keys(wallet)
    result = await paginate(
        db, stmt, page, Keyset(api_key.c.created_at, api_key.c.id, descending=True)
    )
    return ApiKeyPage(keys=[_api_key(r) for r in result.items], pagination=result.pagination)


async def revoke_api_key(db: AsyncConnection, wallet: str, key_id: str, *, now: datetime) -> None:
    """Revoke one of the wallet's live keys; it stops working at once."""
    if not await queries.revoke_api_key(db, wallet=wallet, key_id=key_id, now=now):
        raise ApiKeyNotFound()


# -- developer keys -----------------------------------------------------------------------------


def _developer_key(row: RowMapping) -> DeveloperKey:
    return DeveloperKey(
        id=row["id"],
        builder_code=row["builder_code"],
        name=row["name"],
        scopes=_ordered(queries.scopes_of(row["scopes"]), DEVELOPER_SCOPES),
        created_at=row["created_at"],
        rotated_at=row["rotated_at"],
        revoked_at=row["revoked_at"],
        last_used_at=row["last_used_at"],
    )


def _with_secret(key: DeveloperKey, token: str) -> DeveloperKeyCreated:
    return DeveloperKeyCreated(**key.model_dump(by_alias=False), key=token)


async def _unique_builder_code(db: AsyncConnection) -> str:
    # 60 random bits: a collision is astronomically unlikely, but the index is unique, so check.
    while True:
        code = new_builder_code()
        if not await queries.builder_code_taken(db, code):
            return code


async def create_developer_key(
    db: AsyncConnection,
    owner: str,
    *,
    name: str,
    scopes: Sequence[str] | None,
    now: datetime,
    request_id: str | None,
) -> DeveloperKeyCreated:
    """A new developer key of the session's wallet, with a fresh immutable builder code."""
    if await queries.count_live_developer_keys(db, owner) >= MAX_LIVE_DEVELOPER_KEYS:
        raise KeyLimitReached(details={"limit": MAX_LIVE_DEVELOPER_KEYS})
    chosen = list(scopes) if scopes is not None else list(DEFAULT_DEVELOPER_SCOPES)
    issued = tokens.new_secret(DEVELOPER_KEY_PREFIX)
    code = await _unique_builder_code(db)
    await queries.insert_developer_key(
        db,
        id=issued.id,
        owner=owner,
        builder_code=code,
        name=name,
        scopes=queries.scopes_text(chosen),
        secret_digest=issued.digest,
        created_at=now,
    )
    await queries.insert_event(
        db,
        key_id=issued.id,
        event="created",
        occurred_at=now,
        actor=owner,
        request_id=request_id,
        details={"name": name, "scopes": chosen},
    )
    return _with_secret(await get_developer_key(db, owner, issued.id), issued.token)


async def list_developer_keys(
    db: AsyncConnection, owner: str, page: PageRequest
) -> DeveloperKeyPage:
    """The owner's developer keys, revoked ones included, newest first."""
    result = await paginate(
        db,
        queries.developer_keys_of(owner),
        page,
        Keyset(developer_key.c.created_at, developer_key.c.id, descending=True),
    )
    return DeveloperKeyPage(
        keys=[_developer_key(r) for r in result.items], pagination=result.pagination
    )


async def get_developer_key(db: AsyncConnection, owner: str, key_id: str) -> DeveloperKey:
    """One of the owner's keys; 404 for any other id (unknown or another wallet's)."""
    row = await queries.get_developer_key(db, owner=owner, key_id=key_id)
    if row is None:
        raise DeveloperKeyNotFound()
    return _developer_key(row)


async def _change_live(
    db: AsyncConnection, owner: str, key_id: str, values: Mapping[str, object]
) -> None:
    if not await queries.update_live_developer_key(db, owner=owner, key_id=key_id, values=values):
        await get_developer_key(db, owner, key_id)  # 404 when it is not the owner's
        raise DeveloperKeyRevoked()


async def rotate_developer_key(
    db: AsyncConnection, owner: str, key_id: str, *, now: datetime, request_id: str | None
) -> DeveloperKeyCreated:
    """A new secret for the same key (same id, builder code and scopes); the old one dies now."""
    issued = tokens.new_secret(DEVELOPER_KEY_PREFIX, id=key_id)
    await _change_live(db, owner, key_id, {"secret_digest": issued.digest, "rotated_at": now})
    await queries.insert_event(
        db, key_id=key_id, event="rotated", occurred_at=now, actor=owner, request_id=request_id
    )
    return _with_secret(await get_developer_key(db, owner, key_id), issued.token)


async def update_developer_key(
    db: AsyncConnection,
    owner: str,
    key_id: str,
    *,
    name: str | None,
    scopes: Sequence[str] | None,
    now: datetime,
    request_id: str | None,
) -> DeveloperKey:
    """Rename a live key and/or replace its scopes; a change is logged as ``updated``."""
    current = await get_developer_key(db, owner, key_id)
    if current.revoked_at is not None:
        raise DeveloperKeyRevoked()
    values: dict[str, object] = {}
    details: dict[str, object] = {}
    if name is not None and name != current.name:
        values["name"] = name
        details["name"] = {"from": current.name, "to": name}
    if scopes is not None and sorted(scopes) != sorted(current.scopes):
        values["scopes"] = queries.scopes_text(scopes)
        details["scopes"] = {"from": current.scopes, "to": list(scopes)}
    if not values:
        return current
    await _change_live(db, owner, key_id, values)
    await queries.insert_event(
        db,
        key_id=key_id,
        event="updated",
        occurred_at=now,
        actor=owner,
        request_id=request_id,
        details=details,
    )
    return await get_developer_key(db, owner, key_id)


async def revoke_developer_key(
    db: AsyncConnection, owner: str, key_id: str, *, now: datetime, request_id: str | None
) -> None:
    """Revoke the owner's key (idempotent: revoking a revoked key changes and logs nothing)."""
    if await queries.update_live_developer_key(
        db, owner=owner, key_id=key_id, values={"revoked_at": now}
    ):
        await queries.insert_event(
            db, key_id=key_id, event="revoked", occurred_at=now, actor=owner, request_id=request_id
        )
        return
    await get_developer_key(db, owner, key_id)  # 404 when it is not the owner's


def _event(row: RowMapping) -> DeveloperKeyEvent:
    return DeveloperKeyEvent(
        id=str(row["id"]),
        event=row["event"],
        occurred_at=row["occurred_at"],
        actor=row["actor"],
        request_id=row["request_id"],
        details=dict(row["details"] or {}),
    )


async def list_developer_key_events(
    db: AsyncConnection, owner: str, key_id: str, page: PageRequest
) -> DeveloperKeyEventPage:
    """The key's audit log, newest first."""
    await get_developer_key(db, owner, key_id)
    c = developer_key_event.c
    result = await paginate(
        db, queries.events_of(key_id), page, Keyset(c.id, c.id, descending=True)
    )
    return DeveloperKeyEventPage(
        events=[_event(r) for r in result.items], pagination=result.pagination
    )
