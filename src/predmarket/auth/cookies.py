"""The session cookie: ``svc_session``, HttpOnly, SameSite=Lax, Path=/, Secure over https."""

from __future__ import annotations

from starlette.requests import HTTPConnection
from starlette.responses import Response

from predmarket.auth.sessions import COOKIE_NAME
from predmarket.settings import Settings


def secure(conn: HTTPConnection, settings: Settings) -> bool:
    """Secure when configured, or when the request came over https (behind a proxy, the server
    must trust its forwarded headers for the scheme to say so)."""
    return settings.auth.cookie_secure or conn.url.scheme == "https"


def set_session_cookie(
    response: Response, conn: HTTPConnection, settings: Settings, token: str, max_age: int
) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        max_age=max(0, max_age),
        path="/",
        httponly=True,
        samesite="lax",
        secure=secure(conn, settings),
    )


def clear_session_cookie(response: Response, conn: HTTPConnection, settings: Settings) -> None:
    response.delete_cookie(
        COOKIE_NAME, path="/", httponly=True, samesite="lax", secure=secure(conn, settings)
    )


def session_cookie_header(
    conn: HTTPConnection, settings: Settings, token: str, max_age: int
) -> tuple[bytes, bytes]:
    """The raw ``set-cookie`` header (name, value) that re-sets the cookie with a new Max-Age."""
    response = Response()
    set_session_cookie(response, conn, settings, token, max_age)
    for name, value in response.raw_headers:
        if name == b"set-cookie":
            return name, value
    raise AssertionError("set_cookie produced no header")
