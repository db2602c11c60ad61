"""Wallet sign-in routes (spec 3.1, 4.2, 5.2): challenge, session, logout, sessions, revocation."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Response
from starlette.requests import Request

from predmarket.auth import challenges, sessions
from predmarket.auth.cookies import clear_session_cookie, set_session_cookie
from predmarket.auth.deps import NowDep, PrincipalDep, SessionDep, check_csrf
from predmarket.auth.errors import ChallengeExpired, CsrfFailed, InvalidSignature, SessionRequired
from predmarket.auth.schemas import (
    Challenge,
    ChallengeCreate,
    SessionCreate,
    SessionItem,
    SessionList,
    SessionOpened,
)
from predmarket.kit.deps import DbDep, SettingsDep
from predmarket.kit.pagination import Pagination
from predmarket.openapi import public

router = APIRouter(prefix="/v1/auth", tags=["Auth"])

_NO_CONTENT: dict[int, dict[str, Any]] = {
    204: {"description": "Done (also when there was nothing to do)."}
}


@router.post("/challenge", response_model=Challenge, **public("createChallenge"))
async def create_challenge(
    body: ChallengeCreate, db: DbDep, settings: SettingsDep, now: NowDep
) -> Challenge:
    """A single-use sign-in challenge, valid five minutes, for `address` or (without one) for
    any wallet. Sign its exact text with the `alephium` message hasher."""
    issued = await challenges.issue_challenge(
        db, address=body.address, now=now, ttl_seconds=settings.auth.challenge_ttl_seconds
    )
    return Challenge(challenge=issued.text, expires_at=issued.expires_at, nonce=issued.nonce)


@router.post(
    "/session",
    response_model=SessionOpened,
    **public("createSession", errors=[InvalidSignature, ChallengeExpired]),
)
async def create_session(
    body: SessionCreate,
    request: Request,
    response: Response,
    db: DbDep,
    settings: SettingsDep,
    now: NowDep,
) -> SessionOpened:
    """Exchange a signed challenge for a session: a cookie session (HttpOnly `svc_session`,
    CSRF token in `csrfToken`) or, with `issueToken: true`, a 30-day bearer token in `token`.
    Each challenge opens at most one session."""
    signer = await challenges.consume_signed_challenge(
        db,
        address=body.address,
        public_key=body.public_key,
        signature=body.signature,
        key_type=body.key_type,
        challenge=body.challenge,
        now=now,
    )
    opened = await sessions.open_session(
        db, signer, bearer=body.issue_token, now=now, settings=settings.auth
    )
    if opened.mode == "cookie":
        max_age = int((opened.expires_at - now).total_seconds())
        set_session_cookie(response, request, settings, opened.token, max_age)
    return SessionOpened(
        session_id=opened.id,
        address=opened.address,
        key_type=signer.key_type,
        mode=opened.mode,
        csrf_token=opened.csrf_token,
        token=opened.token if opened.mode == "bearer" else None,
        expires_at=opened.expires_at,
    )


@router.post(
    "/logout", status_code=204, **public("logout", errors=[CsrfFailed], responses=_NO_CONTENT)
)
async def logout(
    request: Request, principal: PrincipalDep, db: DbDep, settings: SettingsDep, now: NowDep
) -> Response:
    """Revoke exactly the presented session and clear the cookie; 204 even when no session was
    presented. Cookie callers send `x-csrf-token`."""
    check_csrf(request, principal)
    if principal.session_id is not None and principal.wallet is not None:
        await sessions.revoke(db, principal.wallet, principal.session_id, now=now)
    response = Response(status_code=204)
    clear_session_cookie(response, request, settings)
    return response


@router.get(
    "/sessions", response_model=SessionList, **public("listSessions", errors=[SessionRequired])
)
async def list_sessions(principal: SessionDep, db: DbDep) -> SessionList:
    """The 100 most recent sessions of the wallet, revoked and expired ones included, newest
    first; `current` marks the one of this request. Never a token or secret."""
    assert principal.wallet is not None
    rows = await sessions.list_sessions(db, principal.wallet)
    return SessionList(
        sessions=[
            SessionItem(
                id=row.id,
                mode="bearer" if row.mode == "bearer" else "cookie",
                created_at=row.created_at,
                last_seen_at=row.last_seen_at,
                expires_at=row.expires_at,
                revoked_at=row.revoked_at,
                current=row.id == principal.session_id,
            )
            for row in rows
        ],
        pagination=Pagination(limit=sessions.LIST_LIMIT, next_cursor=None),
    )


@router.delete(
    "/sessions/{session_id}",
    status_code=204,
    **public("revokeSession", errors=[SessionRequired, CsrfFailed], responses=_NO_CONTENT),
)
async def revoke_session(
    session_id: Annotated[str, Path(max_length=64, description="the session's id (UUID)")],
    request: Request,
    principal: SessionDep,
    db: DbDep,
    settings: SettingsDep,
    now: NowDep,
) -> Response:
    """Revoke one of the wallet's sessions. Always 204: an unknown, foreign, already revoked or
    malformed id changes nothing and looks the same. Revoking the current session clears its
    cookie."""
    assert principal.wallet is not None
    response = Response(status_code=204)
    try:
        target = uuid.UUID(session_id)
    except ValueError:
        return response
    await sessions.revoke(db, principal.wallet, target, now=now)
    if target == principal.session_id and principal.auth == "cookie":
        clear_session_cookie(response, request, settings)
    return response


@router.post(
    "/sessions/revoke-all",
    status_code=204,
    **public("revokeAllSessions", errors=[SessionRequired, CsrfFailed], responses=_NO_CONTENT),
)
async def revoke_all_sessions(
    request: Request, principal: SessionDep, db: DbDep, settings: SettingsDep, now: NowDep
) -> Response:
    """Revoke every cookie and bearer session of the wallet, the presented one included, and
    clear the cookie."""
    assert principal.wallet is not None
    await sessions.revoke_all(db, principal.wallet, now=now)
    response = Response(status_code=204)
    clear_session_cookie(response, request, settings)
    return response
