"""The app class: FastAPI with the server's own ``send`` kept on the scope for streams.

A long-lived stream (the realtime SSE route) sends its response START through the whole
middleware chain (request id, rate-limit headers, error rendering) and its BODY chunks straight
to the server: the middlewares act on the start only, and at a fan-out of 100k chunks a second
each wrapper layer is a measurable share of a core (docs/benchmarks.md, realtime fan-out).
"""

from __future__ import annotations

from typing import Final

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

#: Scope key of the ``send`` the server handed to the app, outside every middleware.
BODY_SEND_KEY: Final = "predmarket.body_send"


class App(FastAPI):
    """FastAPI that records the server's ``send`` on each HTTP scope (:func:`body_send`)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[BODY_SEND_KEY] = send
        await super().__call__(scope, receive, send)


def body_send(scope: Scope, send: Send) -> Send:
    """Where to send the BODY chunks of a response whose start went through ``send``: the
    server's own ``send`` when :class:`App` recorded it, else ``send``. Only for responses that
    no middleware alters after the start (ours add headers and render errors; none transforms
    a body: no compression middleware runs in this app)."""
    outer = scope.get(BODY_SEND_KEY)
    return outer if outer is not None else send
