"""Legacy API keys (``/v1/auth/keys``, spec 2.7, 5.3) and developer keys (``/v1/developer/keys``,
spec 2.8, 5.4). See docs/keys.md."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from starlette.requests import Request
from starlette.responses import Response

from predmarket.auth.deps import NowDep, SessionDep, WalletDep
from predmarket.auth.errors import ChallengeExpired, CsrfFailed, InvalidSignature, SessionRequired
from predmarket.keys import service
from predmarket.keys.errors import (
    ApiKeyNotFound,
    DeveloperKeyNotFound,
    DeveloperKeyRevoked,
    KeyLimitReached,
    ScopeRequired,
    SessionOnly,
)
from predmarket.keys.schemas import (
    LIST_DEFAULT_LIMIT,
    LIST_MAX_LIMIT,
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyPage,
    DeveloperKey,
    DeveloperKeyCreate,
    DeveloperKeyCreated,
    DeveloperKeyEventPage,
    DeveloperKeyPage,
    DeveloperKeyUpdate,
)
from predmarket.kit.deps import DbDep
from predmarket.kit.pagination import PageRequest, page_params
from predmarket.kit.requestid import request_id_of
from predmarket.openapi import public

router = APIRouter()

ListPageDep = Annotated[
    PageRequest, Depends(page_params(default_limit=LIST_DEFAULT_LIMIT, max_limit=LIST_MAX_LIMIT))
]
# Any id that is not one of the caller's keys is a 404, malformed ones included.
KeyId = Annotated[str, Path(max_length=64, description="the key's id")]

_NO_CONTENT: dict[int, dict[str, Any]] = {204: {"description": "Revoked."}}
_SESSION_ERRORS = [SessionRequired, CsrfFailed, SessionOnly]


# -- legacy API keys ----------------------------------------------------------------------------


@router.post(
    "/v1/auth/keys",
    status_code=201,
    response_model=ApiKeyCreated,
    tags=["Auth"],
    **public("createApiKey", errors=[InvalidSignature, ChallengeExpired, KeyLimitReached]),
)
async def create_api_key(body: ApiKeyCreate, db: DbDep, now: NowDep) -> ApiKeyCreated:
    """Mint a legacy API key (`svc_live_…`) with a signed challenge from
    `POST /v1/auth/challenge`. The key is shown once; minting is not idempotent."""
    return await service.create_api_key(db, body, now=now)


@router.get(
    "/v1/auth/keys",
    response_model=ApiKeyPage,
    tags=["Auth"],
    **public("listApiKeys", errors=[SessionRequired, ScopeRequired]),
)
async def list_api_keys(principal: WalletDep, db: DbDep, page: ListPageDep) -> ApiKeyPage:
    """The calling wallet's live API keys, newest first (a key with `read`, or a session).
    Never a key's value."""
    assert principal.wallet is not None
    return await service.list_api_keys(db, principal.wallet, page)


@router.delete(
    "/v1/auth/keys/{key_id}",
    status_code=204,
    tags=["Auth"],
    **public(
        "deleteApiKey",
        errors=[SessionRequired, CsrfFailed, ApiKeyNotFound],
        responses=_NO_CONTENT,
    ),
)
async def delete_api_key(key_id: KeyId, principal: WalletDep, db: DbDep, now: NowDep) -> Response:
    """Revoke one of the calling wallet's API keys; it stops working at once. Unknown,
    revoked or another wallet's ids are 404."""
    assert principal.wallet is not None
    await service.revoke_api_key(db, principal.wallet, key_id, now=now)
    return Response(status_code=204)


# -- developer keys -----------------------------------------------------------------------------


@router.post(
    "/v1/developer/keys",
    status_code=201,
    response_model=DeveloperKeyCreated,
    tags=["Developer keys"],
    **public("createKey", errors=[*_SESSION_ERRORS, KeyLimitReached]),
)
async def create_developer_key(
    body: DeveloperKeyCreate, request: Request, principal: SessionDep, db: DbDep, now: NowDep
) -> DeveloperKeyCreated:
    """Create a developer key (`svc_dev_…`, shown once) with a new public `builderCode`.
    Needs the owner's wallet session. Send the key only in the `x-svc-developer-key` header."""
    assert principal.wallet is not None
    return await service.create_developer_key(
        db,
        principal.wallet,
        name=body.name,
        scopes=body.scopes,
        now=now,
        request_id=request_id_of(request),
    )


@router.get(
    "/v1/developer/keys",
    response_model=DeveloperKeyPage,
    tags=["Developer keys"],
    **public("listKeys", errors=_SESSION_ERRORS),
)
async def list_developer_keys(
    principal: SessionDep, db: DbDep, page: ListPageDep
) -> DeveloperKeyPage:
    """The session wallet's developer keys, revoked ones included, newest first."""
    assert principal.wallet is not None
    return await service.list_developer_keys(db, principal.wallet, page)


@router.get(
    "/v1/developer/keys/{key_id}",
    response_model=DeveloperKey,
    tags=["Developer keys"],
    **public("getKey", errors=[*_SESSION_ERRORS, DeveloperKeyNotFound]),
)
async def get_developer_key(key_id: KeyId, principal: SessionDep, db: DbDep) -> DeveloperKey:
    """One of the session wallet's developer keys."""
    assert principal.wallet is not None
    return await service.get_developer_key(db, principal.wallet, key_id)


@router.patch(
    "/v1/developer/keys/{key_id}",
    response_model=DeveloperKey,
    tags=["Developer keys"],
    **public("updateKey", errors=[*_SESSION_ERRORS, DeveloperKeyNotFound, DeveloperKeyRevoked]),
)
async def update_developer_key(
    key_id: KeyId,
    body: DeveloperKeyUpdate,
    request: Request,
    principal: SessionDep,
    db: DbDep,
    now: NowDep,
) -> DeveloperKey:
    """Rename a live key or replace its scopes (logged as an `updated` event). The builder
    code never changes."""
    assert principal.wallet is not None
    return await service.update_developer_key(
        db,
        principal.wallet,
        key_id,
        name=body.name,
        scopes=body.scopes,
        now=now,
        request_id=request_id_of(request),
    )


@router.post(
    "/v1/developer/keys/{key_id}/rotate",
    response_model=DeveloperKeyCreated,
    tags=["Developer keys"],
    **public("rotateKey", errors=[*_SESSION_ERRORS, DeveloperKeyNotFound, DeveloperKeyRevoked]),
)
async def rotate_developer_key(
    key_id: KeyId, request: Request, principal: SessionDep, db: DbDep, now: NowDep
) -> DeveloperKeyCreated:
    """A new secret for the key (shown once): same id, builder code and scopes; the previous
    secret stops working at once."""
    assert principal.wallet is not None
    return await service.rotate_developer_key(
        db, principal.wallet, key_id, now=now, request_id=request_id_of(request)
    )


@router.delete(
    "/v1/developer/keys/{key_id}",
    status_code=204,
    tags=["Developer keys"],
    **public("revokeKey", errors=[*_SESSION_ERRORS, DeveloperKeyNotFound], responses=_NO_CONTENT),
)
async def revoke_developer_key(
    key_id: KeyId, request: Request, principal: SessionDep, db: DbDep, now: NowDep
) -> Response:
    """Revoke the key: it stops working at once; its record and audit log stay. Revoking a
    revoked key is a no-op (204)."""
    assert principal.wallet is not None
    await service.revoke_developer_key(
        db, principal.wallet, key_id, now=now, request_id=request_id_of(request)
    )
    return Response(status_code=204)


@router.get(
    "/v1/developer/keys/{key_id}/events",
    response_model=DeveloperKeyEventPage,
    tags=["Developer keys"],
    **public("listEvents", errors=[*_SESSION_ERRORS, DeveloperKeyNotFound]),
)
async def list_developer_key_events(
    key_id: KeyId, principal: SessionDep, db: DbDep, page: ListPageDep
) -> DeveloperKeyEventPage:
    """The key's audit log, newest first: created, rotated, updated, revoked, with the time,
    the acting wallet and the request id. Never a secret."""
    assert principal.wallet is not None
    return await service.list_developer_key_events(db, principal.wallet, key_id, page)
