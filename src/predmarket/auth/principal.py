"""Who is calling: the credentials a request presented, resolved once per request.

The auth middleware (:mod:`predmarket.auth.middleware`) builds a :class:`Principal` before routing
and keeps it on the ASGI scope's state (``request.state.principal``); the rate limiter reads it to
pick the caller's tier and budget key, and the route dependencies of :mod:`predmarket.auth.deps`
read it to decide 401/403. Resolution never rejects a request by itself: a presented credential
that does not verify is recorded in :attr:`Principal.credential_error` and turned into a 401 by
the dependencies, so every response (401s included) still passes the rate limiter.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Final, Literal

from starlette.requests import HTTPConnection
from starlette.types import Scope

#: How the wallet of a request was authenticated.
#: ``cookie`` and ``bearer`` are wallet sessions (5.2), ``api_key`` a legacy key (5.3).
WalletAuth = Literal["cookie", "bearer", "api_key"]

#: Legacy API key scopes (5.3).
API_KEY_SCOPES: Final = ("read", "write:tx")
#: Developer key scopes (5.4).
DEVELOPER_SCOPES: Final = (
    "public:read",
    "market:read",
    "realtime:public",
    "account:read",
    "transactions:read",
    "trade:place",
    "trade:cancel",
    "webhooks:manage",
)

STATE_KEY: Final = "principal"


@dataclass(frozen=True, slots=True)
class DeveloperIdentity:
    """A verified developer key: identifies and rate-limits an integration, never a wallet."""

    key_id: str
    builder_code: str
    owner: str
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class Principal:
    """The verified credentials of one request; :data:`ANONYMOUS` when it presented none.

    - ``wallet``: the wallet address a session or legacy API key authenticates, else None.
    - ``auth``: how ``wallet`` was authenticated.
    - ``session_id``: the session row (cookie and bearer modes).
    - ``api_key_id`` / ``api_key_scopes``: the legacy key (``api_key`` mode); a session has every
      authority of its wallet and no scope list.
    - ``developer``: the developer key presented in its header, independent of the wallet.
    - ``credential_error``: a presented credential that did not verify: ``(code, message)``,
      answered with 401 by the auth dependencies.
    - ``csrf_ok``: for cookie sessions, whether ``x-csrf-token`` matched the session's token.
    """

    wallet: str | None = None
    auth: WalletAuth | None = None
    session_id: uuid.UUID | None = None
    api_key_id: str | None = None
    api_key_scopes: frozenset[str] = field(default_factory=frozenset)
    developer: DeveloperIdentity | None = None
    credential_error: tuple[str, str] | None = None
    csrf_ok: bool = False

    @property
    def signed_in(self) -> bool:
        """A wallet is authenticated (session or legacy key): the signed-in rate-limit tier."""
        return self.wallet is not None


ANONYMOUS: Final = Principal()


def principal_of(conn: HTTPConnection) -> Principal:
    """The request's principal; :data:`ANONYMOUS` when the middleware did not run or found none."""
    value = conn.scope.get("state", {}).get(STATE_KEY)
    return value if isinstance(value, Principal) else ANONYMOUS


def set_principal(scope: Scope, principal: Principal) -> None:
    scope.setdefault("state", {})[STATE_KEY] = principal
