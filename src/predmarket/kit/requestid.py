"""A request id on every request and response (``x-request-id``).

An incoming ``x-request-id`` is kept when it is a sane token (1..64 characters of
``[A-Za-z0-9._-]``), so a caller's or a proxy's id follows the request through our logs; anything
else is replaced by a fresh id rather than echoed. The id is stored in the request state
(``request.state.request_id``) and quoted in every error envelope.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = "x-request-id"
_HEADER_BYTES = HEADER.encode("ascii")
_SANE = re.compile(r"[A-Za-z0-9._-]{1,64}")
_STATE_KEY = "request_id"


def new_request_id() -> str:
    return uuid.uuid4().hex


def is_sane(value: str) -> bool:
    return _SANE.fullmatch(value) is not None


def request_id_from_scope(scope: Scope) -> str:
    """The id the middleware gave this request (a fresh one if it did not run)."""
    state: dict[str, Any] = scope.setdefault("state", {})
    rid = state.get(_STATE_KEY)
    if not isinstance(rid, str):
        rid = new_request_id()
        state[_STATE_KEY] = rid
    return rid


def request_id_of(request: Request) -> str:
    return request_id_from_scope(request.scope)


class RequestIdMiddleware:
    """Pure ASGI middleware; the outermost of the app's own so every response carries the id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _incoming(scope) or new_request_id()
        scope.setdefault("state", {})[_STATE_KEY] = rid
        header = (_HEADER_BYTES, rid.encode("ascii"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", ()) if h[0].lower() != _HEADER_BYTES]
                headers.append(header)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_id)


def _incoming(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == _HEADER_BYTES:  # ASGI servers lower-case header names
            try:
                text = value.decode("ascii")
            except UnicodeDecodeError:
                return None
            return text if is_sane(text) else None
    return None
