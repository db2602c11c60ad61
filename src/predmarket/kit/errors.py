"""The error model: one :class:`AppError` base, one envelope, one set of handlers.

Every error response has this body (both shapes of spec 7.1 at once)::

    {"statusCode": 404, "code": "NOT_FOUND", "message": "...", "requestId": "...", "details": {},
     "error": {"code": "NOT_FOUND", "message": "...", "requestId": "...", "details": {}}}

``details`` is always an object. Validation problems name the fields in one shape everywhere:
``{"fields": [{"field": "query.limit", "message": "...", "type": "less_than_equal"}]}``. A 500
carries the request id in ``details.requestId`` too and never the exception's text.

Domains subclass the classes here in their own ``errors.py`` (``class MarketNotFound(NotFound)``)
and raise them from services; routers never build error responses themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from http import HTTPStatus
from typing import Any, TypedDict

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from predmarket.kit.requestid import request_id_from_scope, request_id_of
from predmarket.kit.schemas import BaseSchema, example

log = logging.getLogger("predmarket.errors")


class FieldProblem(TypedDict):
    """One invalid input: where (``query.limit``, ``body.price``, ``path.x``) and why."""

    field: str
    message: str
    type: str


class AppError(Exception):
    """Base of every error the service reports on purpose.

    Subclasses set ``status``, ``code`` and a default ``message``; an instance may override any
    of them. ``details`` must be JSON-serializable; ``headers`` are added to the response.
    """

    status: int = 500
    code: str = "INTERNAL_ERROR"
    message: str = "internal server error"

    def __init__(
        self,
        message: str | None = None,
        *,
        details: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
        status: int | None = None,
        code: str | None = None,
    ) -> None:
        if message is not None:
            self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code
        self.details: dict[str, object] = dict(details or {})
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status}, {self.code!r}, {self.message!r})"


class InvalidRequest(AppError):
    status = 400
    code = "INVALID_REQUEST"
    message = "invalid request"

    @classmethod
    def for_fields(cls, problems: Sequence[FieldProblem]) -> InvalidRequest:
        """An error naming each field; the message quotes the first."""
        if not problems:
            return cls()
        return cls(_summary(problems), details={"fields": list(problems)})

    @classmethod
    def for_field(cls, field: str, message: str, *, type: str = "invalid") -> InvalidRequest:
        """``InvalidRequest.for_field("body.price", "price must be a tick 1..999")``."""
        return cls.for_fields([FieldProblem(field=field, message=message, type=type)])


class Unauthorized(AppError):
    status = 401
    code = "UNAUTHORIZED"
    message = "credentials are missing, malformed or expired"


class InsufficientScope(AppError):
    status = 403
    code = "INSUFFICIENT_SCOPE"
    message = "the credentials lack the required scope"


class NotFound(AppError):
    status = 404
    code = "NOT_FOUND"
    message = "resource not found"


class Conflict(AppError):
    status = 409
    code = "CONFLICT"
    message = "the request conflicts with the current state"


class MarketClosed(Conflict):
    code = "MARKET_CLOSED"
    message = "the market is closed or resolved"


class InsufficientBalance(AppError):
    status = 422
    code = "INSUFFICIENT_BALANCE"
    message = "the wallet lacks enough funds for this transaction"


class RateLimited(AppError):
    status = 429
    code = "RATE_LIMITED"
    message = "rate limit exceeded"

    def __init__(
        self,
        message: str | None = None,
        *,
        retry_after: int | None = None,
        details: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        merged = dict(headers or {})
        if retry_after is not None:
            merged["Retry-After"] = str(max(0, retry_after))
        super().__init__(message, details=details, headers=merged)


class InternalError(AppError):
    """What an unexpected exception becomes on the wire."""


class UpstreamError(AppError):
    """The chain node (or indexer) refused or failed; usually transient."""

    status = 502
    code = "UPSTREAM_ERROR"
    message = "the chain node failed or refused the request"


class UpstreamTimeout(UpstreamError):
    """The chain node did not answer in time (502, as the service issue states; not 504)."""

    code = "UPSTREAM_TIMEOUT"
    message = "the chain node did not respond in time"


class Unavailable(AppError):
    status = 503
    code = "UNAVAILABLE"
    message = "the service is unavailable; retry with backoff"


# Codes for errors raised by the framework itself (unknown route, bad method, oversized body).
_HTTP_CODES = {
    400: "INVALID_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "UNPROCESSABLE",
    429: "RATE_LIMITED",
    500: "INTERNAL_ERROR",
    502: "UPSTREAM_ERROR",
    503: "UNAVAILABLE",
}


# -- the envelope ------------------------------------------------------------------------------


class ErrorBody(BaseSchema):
    """The nested shape of spec 7.1."""

    model_config = example(
        {"code": "NOT_FOUND", "message": "market not found", "requestId": "3f2a…", "details": {}}
    )

    code: str
    message: str
    request_id: str
    details: dict[str, Any]


class ErrorEnvelope(BaseSchema):
    """Every error response: the flat shape of spec 7.1 and the nested one under ``error``."""

    model_config = example(
        {
            "statusCode": 400,
            "code": "INVALID_REQUEST",
            "message": "query.limit: Input should be less than or equal to 200",
            "requestId": "0b7d1c5e9f2a4e19a1f3c2d4e5f60718",
            "details": {
                "fields": [
                    {
                        "field": "query.limit",
                        "message": "Input should be less than or equal to 200",
                        "type": "less_than_equal",
                    }
                ]
            },
            "error": {
                "code": "INVALID_REQUEST",
                "message": "query.limit: Input should be less than or equal to 200",
                "requestId": "0b7d1c5e9f2a4e19a1f3c2d4e5f60718",
                "details": {
                    "fields": [
                        {
                            "field": "query.limit",
                            "message": "Input should be less than or equal to 200",
                            "type": "less_than_equal",
                        }
                    ]
                },
            },
        }
    )

    status_code: int
    code: str
    message: str
    request_id: str
    details: dict[str, Any]
    error: ErrorBody


def error_body(
    status: int, code: str, message: str, request_id: str, details: Mapping[str, object]
) -> dict[str, object]:
    """The envelope as a JSON-ready dict (the one place its shape is written)."""
    detail_obj = dict(details)
    if status >= 500:
        detail_obj.setdefault("requestId", request_id)
    inner = {"code": code, "message": message, "requestId": request_id, "details": detail_obj}
    return {"statusCode": status, **inner, "error": inner}


def error_response(
    request_id: str,
    status: int,
    code: str,
    message: str,
    details: Mapping[str, object] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        error_body(status, code, message, request_id, details or {}),
        status_code=status,
        headers=dict(headers) if headers else None,
    )


def render(request_id: str, exc: AppError) -> JSONResponse:
    return error_response(request_id, exc.status, exc.code, exc.message, exc.details, exc.headers)


# -- validation problems -----------------------------------------------------------------------


def field_path(loc: Iterable[int | str]) -> str:
    """``("body", "tokens", 0, "amount")`` → ``body.tokens[0].amount``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def problems_from_errors(
    errors: Iterable[Mapping[str, object]], *, prefix: Sequence[str] = ()
) -> list[FieldProblem]:
    """Pydantic/FastAPI error dicts → :class:`FieldProblem` s (never echoing the input).

    For input a service validates itself (``prefix=("body", "metadata")``):
    ``raise InvalidRequest.for_fields(problems_from_errors(e.errors(), prefix=...))``.
    """
    problems: list[FieldProblem] = []
    for err in errors:
        raw_loc = err.get("loc", ())
        loc = (
            tuple(p for p in raw_loc if isinstance(p, int | str))
            if isinstance(raw_loc, tuple | list)
            else ()
        )
        kind = str(err.get("type", "invalid"))
        message = str(err.get("msg", "invalid value"))
        if kind == "json_invalid":
            # FastAPI puts the byte offset in loc; it is not a field.
            ctx = err.get("ctx")
            reason = ctx.get("error", "malformed") if isinstance(ctx, dict) else "malformed"
            position = loc[1] if len(loc) > 1 else "?"
            problems.append(
                FieldProblem(
                    field="body", message=f"invalid JSON: {reason} at {position}", type=kind
                )
            )
            continue
        problems.append(
            FieldProblem(field=field_path((*prefix, *loc)) or "request", message=message, type=kind)
        )
    return problems


def _summary(problems: Sequence[FieldProblem]) -> str:
    first = problems[0]
    text = f"{first['field']}: {first['message']}"
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more)"
    return text


# -- handlers ----------------------------------------------------------------------------------


async def _app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    if exc.status >= 500:
        log.warning("%s %s: %r", request.method, request.url.path, exc)
    return render(request_id_of(request), exc)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return render(
        request_id_of(request), InvalidRequest.for_fields(problems_from_errors(exc.errors()))
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    code = _HTTP_CODES.get(status) or (
        "INTERNAL_ERROR" if status >= 500 else HTTPStatus(status).phrase.upper().replace(" ", "_")
    )
    details: dict[str, object] = {}
    headers = dict(exc.headers or {})
    default_phrase = HTTPStatus(status).phrase
    message = exc.detail if isinstance(exc.detail, str) and exc.detail != default_phrase else ""
    if status == 404 and not message:
        message = f"no route matches {request.url.path}"
    elif status == 405:
        allowed = [m.strip() for m in headers.get("Allow", "").split(",") if m.strip()]
        message = f"method {request.method} is not allowed on {request.url.path}"
        details["allowed"] = allowed
    elif status == 400:
        details["fields"] = [
            FieldProblem(field="body", message=message or "bad request", type="invalid")
        ]
    return error_response(
        request_id_of(request), status, code, message or default_phrase.lower(), details, headers
    )


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers and the last-resort middleware on ``app``."""
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)


class UnhandledErrorMiddleware:
    """Turns any exception nobody handled into a 500 envelope, logged with the request id.

    It sits inside the request-id middleware, so the 500 carries ``x-request-id`` like any other
    response. Once a response has started nothing can be sent instead, so the error re-raises.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            rid = request_id_from_scope(scope)
            log.exception(
                "unhandled error in %s %s [%s]", scope.get("method"), scope.get("path"), rid
            )
            if started:
                raise
            await render(rid, InternalError())(scope, receive, send)
