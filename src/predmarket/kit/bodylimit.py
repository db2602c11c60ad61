"""A cap on request bodies, answered with the error envelope (413 ``PAYLOAD_TOO_LARGE``).

Starlette's own limit answers in plain text, so the app uses this one instead: a declared
``content-length`` over the cap is refused before the app runs; a body that grows past it while
streaming fails the read with an ``HTTPException(413)``, which the error handlers render.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from predmarket.kit.errors import error_response
from predmarket.kit.requestid import request_id_from_scope

CODE = "PAYLOAD_TOO_LARGE"


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _message(self) -> str:
        return f"request body larger than {self.max_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            response = error_response(request_id_from_scope(scope), 413, CODE, self._message())
            await response(scope, receive, send)
            return
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, self._message())
            return message

        await self.app(scope, limited_receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
