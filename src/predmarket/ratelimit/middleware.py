"""The rate-limit middleware and the stream-connection check (spec part 8; docs/rate-limits.md).

:class:`RateLimitMiddleware` runs inside the auth middleware, so the request's
:class:`~predmarket.auth.principal.Principal` is known; it counts the request against its
subject's reads or writes budget, answers 429 ``RATE_LIMITED`` (with ``Retry-After``) before
routing when the budget is spent, and adds the ``RateLimit-*`` headers to every response it
passes on — 2xx, 4xx, 429 and the 500 of an unhandled error alike.
"""

from __future__ import annotations

import logging
from typing import Final

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from predmarket.kit.errors import InternalError, RateLimited, render
from predmarket.kit.requestid import request_id_from_scope
from predmarket.ratelimit.limiter import Decision, RateLimiter
from predmarket.ratelimit.policy import is_counted, kind_of

log = logging.getLogger("predmarket.errors")

#: Where the decision that the response's headers report is kept (``scope["state"]``).
DECISION_KEY: Final = "rate_limit"

_COUNTED_PER: Final = {
    "anonymous": "IP",
    "ip": "IP",
    "signed-in": "wallet",
    "elevated": "wallet",
    "developer": "developer key",
}


def rate_limited(decision: Decision) -> RateLimited:
    """The 429 for a spent budget (its ``RateLimit-*`` headers are added by the middleware)."""
    who = _COUNTED_PER.get(decision.tier, "caller")
    return RateLimited(
        f"rate limit exceeded: {decision.limit} {decision.policy} per {decision.window} s "
        f"per {who}; retry in {decision.reset} s",
        retry_after=decision.reset,
        details={
            "policy": decision.policy,
            "tier": decision.tier,
            "limit": decision.limit,
            "windowSeconds": decision.window,
            "retryAfterSeconds": decision.reset,
        },
    )


class RateLimitMiddleware:
    """Pure ASGI; cheap on purpose (no database, one store call per request)."""

    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limiter = self.limiter
        subject = limiter.subject(scope)
        state = scope.setdefault("state", {})
        if is_counted(scope):
            decision = await limiter.hit(subject, kind_of(scope["method"]))
            if not decision.allowed:
                response = render(request_id_from_scope(scope), rate_limited(decision))
                response.raw_headers.extend(decision.header_list())
                await response(scope, receive, send)
                return
            state[DECISION_KEY] = decision
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                # A route may have spent another budget (a stream connection): report that one.
                reported = state.get(DECISION_KEY)
                if not isinstance(reported, Decision):
                    reported = await limiter.peek(subject)
                message["headers"] = [*message.get("headers", ()), *reported.header_list()]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            # Rendered here rather than by the outer last-resort middleware so that the 500
            # carries the headers too.
            if started:
                raise
            rid = request_id_from_scope(scope)
            log.exception(
                "unhandled error in %s %s [%s]", scope.get("method"), scope.get("path"), rid
            )
            await render(rid, InternalError())(scope, receive, send_with_headers)


async def stream_connection(conn: HTTPConnection) -> None:
    """Count one realtime stream connection against its client IP's budget (600 per minute by
    default); raises the 429 when it is spent. A FastAPI dependency of the stream route:
    ``@router.get("/v1/realtime/stream", dependencies=[Depends(stream_connection)])``.

    The stream's responses then report this budget (``"streams";q=600;w=60``) in their headers
    instead of the reads budget; stream requests never spend reads.
    """
    limiter: RateLimiter = conn.app.state.rate_limiter
    decision = await limiter.stream_connection(conn.scope)
    conn.scope.setdefault("state", {})[DECISION_KEY] = decision
    if not decision.allowed:
        raise rate_limited(decision)
