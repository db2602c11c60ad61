"""The auth middleware: who is calling, resolved once per request (docs/auth.md).

It runs inside the error middlewares and outside the rate limiter, and never rejects a request by
itself, with one exception: a query-string value that looks like a credential (``svc_…``) is a
400 ``INVALID_REQUEST`` naming the parameter, before anything else, since a secret in a URL ends
up in proxy and server logs.

Resolution (no database work for a request that presents no credential):

- ``Authorization: Bearer svc_live_…``: a legacy API key (:mod:`predmarket.keys.authn`);
- ``Authorization: Bearer svc_sess_…``: a bearer wallet session;
- otherwise the ``svc_session`` cookie: a cookie wallet session, with ``csrf_ok`` telling whether
  ``x-csrf-token`` carries the session's CSRF token;
- independently, ``x-svc-developer-key``: a developer key.

A presented header credential that does not verify is recorded in
:attr:`Principal.credential_error`, which the policy dependency turns into a 401. A cookie that
does not verify (expired, revoked, from an old deployment) is ignored: a browser sends it on every
request and it must not break public reads; routes that need a wallet still answer 401.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Final
from urllib.parse import parse_qsl

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from predmarket.auth import cookies, sessions
from predmarket.auth.principal import ANONYMOUS, DeveloperIdentity, Principal, set_principal
from predmarket.keys import authn
from predmarket.kit.errors import InvalidRequest, render
from predmarket.kit.requestid import request_id_from_scope
from predmarket.settings import AuthSettings, Settings

#: Every credential this service issues starts with this.
CREDENTIAL_MARK: Final = "svc_"

INVALID_TOKEN: Final = ("UNAUTHORIZED", "the bearer token is invalid, expired or revoked")
BAD_SCHEME: Final = ("UNAUTHORIZED", "the Authorization header must be 'Bearer <token>'")
DEVKEY_AS_BEARER: Final = (
    "UNAUTHORIZED",
    f"a developer key goes in the {authn.DEVELOPER_KEY_HEADER} header, never in Authorization",
)
INVALID_DEVKEY: Final = ("UNAUTHORIZED", "the developer key is invalid or revoked")


def now_of(scope: Scope) -> datetime:
    """The app's clock (``app.state.clock``, a callable returning an aware datetime; tests set
    it) or the system's."""
    app = scope.get("app")
    clock = getattr(getattr(app, "state", None), "clock", None)
    return clock() if callable(clock) else datetime.now(UTC)


def credential_in_query(query_string: bytes) -> str | None:
    """The name of the first query parameter whose value looks like a credential, if any."""
    if b"svc" not in query_string.lower():
        return None
    for name, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if value.lower().startswith(CREDENTIAL_MARK) or name.lower().startswith(CREDENTIAL_MARK):
            return name
    return None


class AuthMiddleware:
    """Pure ASGI middleware setting ``request.state.principal``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bad = credential_in_query(scope.get("query_string", b""))
        if bad is not None:
            error = InvalidRequest.for_field(
                f"query.{bad}",
                "credentials are never accepted in a URL: send a token in the Authorization "
                "header or the session cookie, a developer key in its header",
                type="credential_in_url",
            )
            await render(request_id_from_scope(scope), error)(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        authorization = conn.headers.get("authorization")
        cookie = conn.cookies.get(sessions.COOKIE_NAME) if authorization is None else None
        developer_key = conn.headers.get(authn.DEVELOPER_KEY_HEADER)
        if authorization is None and not cookie and developer_key is None:
            set_principal(scope, ANONYMOUS)
        else:
            app = scope["app"]
            settings: Settings = app.state.settings
            engine: AsyncEngine = app.state.engine
            async with engine.begin() as db:
                principal, refreshed = await resolve(
                    db,
                    authorization=authorization,
                    cookie=cookie,
                    csrf=conn.headers.get(sessions.CSRF_HEADER),
                    developer_key=developer_key,
                    now=now_of(scope),
                    settings=settings.auth,
                )
            set_principal(scope, principal)
            if refreshed is not None and cookie:
                # The session slid: the cookie's Max-Age follows, unless the route itself set
                # or cleared the cookie (sign-in, logout, revocation).
                header = cookies.session_cookie_header(conn, settings, cookie, refreshed)
                send = _adding_cookie(send, header)
        await self.app(scope, receive, send)


def _adding_cookie(send: Send, header: tuple[bytes, bytes]) -> Send:
    marker = sessions.COOKIE_NAME.encode("ascii") + b"="

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            if not any(n.lower() == b"set-cookie" and v.startswith(marker) for n, v in headers):
                headers.append(header)
                message["headers"] = headers
        await send(message)

    return wrapped


async def resolve(
    db: AsyncConnection,
    *,
    authorization: str | None,
    cookie: str | None,
    csrf: str | None,
    developer_key: str | None,
    now: datetime,
    settings: AuthSettings,
) -> tuple[Principal, int | None]:
    """The principal of the presented credentials (see the module's docstring), and the new
    Max-Age of the session cookie when this request slid the cookie session's expiry."""
    principal = ANONYMOUS
    refreshed: int | None = None
    error: tuple[str, str] | None = None
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            error = BAD_SCHEME
        elif token.startswith(authn.API_KEY_PREFIX):
            key = await authn.authenticate_api_key(db, token, now)
            if key is None:
                error = INVALID_TOKEN
            else:
                principal = Principal(
                    wallet=key.wallet,
                    auth="api_key",
                    api_key_id=key.key_id,
                    api_key_scopes=key.scopes,
                )
        elif token.startswith(authn.DEVELOPER_KEY_PREFIX):
            error = DEVKEY_AS_BEARER
        else:
            session = await sessions.authenticate(
                db, token, mode="bearer", now=now, settings=settings
            )
            if session is None:
                error = INVALID_TOKEN
            else:
                principal = Principal(wallet=session.wallet, auth="bearer", session_id=session.id)
    elif cookie:
        session = await sessions.authenticate(db, cookie, mode="cookie", now=now, settings=settings)
        if session is not None:
            principal = Principal(
                wallet=session.wallet,
                auth="cookie",
                session_id=session.id,
                csrf_ok=sessions.csrf_matches(session, csrf),
            )
            if session.refreshed:
                refreshed = int((session.expires_at - now).total_seconds())
    developer: DeveloperIdentity | None = None
    if developer_key is not None:
        developer = await authn.authenticate_developer_key(db, developer_key.strip(), now)
        if developer is None and error is None:
            error = INVALID_DEVKEY
    if developer is not None or error is not None:
        principal = replace(principal, developer=developer, credential_error=error)
    return principal, refreshed
