"""Route dependencies: what a route needs of the caller (docs/auth.md).

- :data:`WalletDep`: any authenticated wallet: a cookie or bearer session, or a legacy API key.
- :data:`SessionDep`: a wallet *session* only (legacy keys are not sessions).
- :data:`PrincipalDep`: whoever is calling, possibly anonymous.
- :data:`NowDep`: the request's clock.

Both wallet dependencies answer 401 ``UNAUTHORIZED`` without a wallet credential and 403
``CSRF_FAILED`` for a cookie session on a mutating method (POST, PUT, PATCH, DELETE) whose
``x-csrf-token`` is missing or wrong. Bearer sessions and keys are CSRF-exempt.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final

from fastapi import Depends
from starlette.requests import Request

from predmarket.auth.errors import CsrfFailed, SessionRequired
from predmarket.auth.middleware import now_of
from predmarket.auth.principal import Principal, principal_of
from predmarket.kit.errors import Unauthorized

MUTATING_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def get_principal(request: Request) -> Principal:
    return principal_of(request)


def get_now(request: Request) -> datetime:
    return now_of(request.scope)


def check_csrf(request: Request, principal: Principal) -> None:
    """403 ``CSRF_FAILED`` for a cookie session's mutating request without its CSRF token."""
    if principal.auth == "cookie" and request.method in MUTATING_METHODS and not principal.csrf_ok:
        raise CsrfFailed()


def _unauthenticated(principal: Principal, message: str) -> Unauthorized:
    if principal.credential_error is not None:
        code, text = principal.credential_error
        return Unauthorized(text, code=code)
    return SessionRequired(message)


def require_wallet(request: Request) -> Principal:
    """The calling wallet (session or legacy key); 401 / 403 as the module says."""
    principal = principal_of(request)
    if principal.wallet is None:
        raise _unauthenticated(
            principal,
            "a wallet credential is required: a session (cookie svc_session or "
            "Authorization: Bearer svc_sess_…) or an API key (Bearer svc_live_…)",
        )
    check_csrf(request, principal)
    return principal


def require_session(request: Request) -> Principal:
    """The calling wallet session (cookie or bearer); legacy keys are refused with 401."""
    principal = principal_of(request)
    if principal.wallet is None or principal.auth not in ("cookie", "bearer"):
        raise _unauthenticated(
            principal,
            "a wallet session is required: the svc_session cookie or "
            "Authorization: Bearer svc_sess_…",
        )
    check_csrf(request, principal)
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]
WalletDep = Annotated[Principal, Depends(require_wallet)]
SessionDep = Annotated[Principal, Depends(require_session)]
NowDep = Annotated[datetime, Depends(get_now)]
