"""``GET /v1/realtime/stream`` (SSE), ``GET /v1/platform/banner`` and the private operator
route ``PUT|DELETE /v1/admin/banner`` (docs/realtime.md)."""

from __future__ import annotations

import hashlib
import hmac
from typing import Annotated, Final

from fastapi import APIRouter, Depends, Header, Query
from starlette.requests import Request
from starlette.responses import Response

from predmarket.auth.deps import PrincipalDep
from predmarket.kit.deps import DbDep, EngineDep, SettingsDep
from predmarket.kit.errors import InvalidRequest, RateLimited
from predmarket.openapi import public
from predmarket.ratelimit import stream_connection
from predmarket.realtime import service
from predmarket.realtime.broker import Broker
from predmarket.realtime.errors import (
    InvalidRealtimeCursor,
    OperatorTokenRequired,
    RealtimeTopicForbidden,
    RealtimeUnavailable,
)
from predmarket.realtime.schemas import Banner, BannerUpdate
from predmarket.realtime.stream import StreamResponse
from predmarket.realtime.topics import authorize, parse_topics

router = APIRouter()

OPERATOR_HEADER: Final = "x-svc-operator-token"
#: Event ids are 64-bit; a cursor is a positive integer that fits.
_MAX_CURSOR: Final = 2**63 - 1

_STREAM_DOC: Final = {
    200: {
        "description": "An event stream (text/event-stream): `svc` data frames, `svc-reset` and "
        "`svc-error` frames and `:` heartbeat comments; see docs/realtime.md.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def _cursor(value: str | None, field: str) -> int | None:
    if value is None:
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or text.startswith("0") or int(text) > _MAX_CURSOR:
        raise InvalidRealtimeCursor(
            f"{field.split('.', 1)[1]} must be a positive integer",
            details={
                "fields": [
                    {
                        "field": field,
                        "message": "not a positive integer",
                        "type": "invalid_realtime_cursor",
                    }
                ]
            },
        )
    return int(text)


async def get_broker(request: Request, settings: SettingsDep) -> Broker:
    """The process's broker; 503 ``realtime_unavailable`` when realtime is off or not ready."""
    broker = getattr(request.app.state, "broker", None)
    if not settings.realtime.enabled or not isinstance(broker, Broker):
        raise RealtimeUnavailable()
    if not broker.ready:
        raise RealtimeUnavailable("realtime is starting; retry shortly")
    return broker


@router.get(
    "/v1/realtime/stream",
    tags=["Realtime"],
    dependencies=[Depends(stream_connection)],
    **public(
        "stream",
        errors=[
            InvalidRequest,
            InvalidRealtimeCursor,
            RealtimeTopicForbidden,
            RateLimited,
            RealtimeUnavailable,
        ],
        responses=_STREAM_DOC,
    ),
)
async def stream(
    principal: PrincipalDep,
    settings: SettingsDep,
    engine: EngineDep,
    broker: Annotated[Broker, Depends(get_broker)],
    topics: Annotated[
        str | None,
        Query(description="comma-separated topics of spec 6.1, e.g. `market:{address}:orders`"),
    ] = None,
    last_event_id: Annotated[
        str | None,
        Query(alias="lastEventId", description="resume after this event id (positive integer)"),
    ] = None,
    last_event_header: Annotated[
        str | None,
        Header(
            alias="Last-Event-ID", description="resume after this event id; wins over the query"
        ),
    ] = None,
) -> Response:
    """Server-Sent Events of the given topics. Public topics need no credentials; `user:`
    topics need the session of that wallet (cookie or bearer). Replays from `Last-Event-ID` /
    `lastEventId` within the retention window, then continues live."""
    wanted = parse_topics(topics)
    # The browser's EventSource resends the header with the last id it saw on reconnection,
    # while the URL keeps the first cursor: the header is the newer one.
    cursor = _cursor(last_event_header, "header.Last-Event-ID")
    if cursor is None:
        cursor = _cursor(last_event_id, "query.lastEventId")
    rt = settings.realtime
    sub = authorize(
        wanted, principal, anonymous_cap=rt.topics_anonymous, signed_in_cap=rt.topics_signed_in
    )
    # A stream of private topics lives only as long as the session that opened it.
    private = any(topic.startswith("user:") for topic in sub.requested)
    session_id = str(principal.session_id) if private and principal.session_id else None
    return StreamResponse(
        broker,
        engine,
        rt,
        topics=sub.requested,
        outbox_topics=sub.outbox_topics,
        cursor=cursor,
        session_id=session_id,
    )


@router.get(
    "/v1/platform/banner",
    tags=["Platform"],
    response_model=Banner,
    **public("banner"),
)
async def get_banner(db: DbDep) -> Banner:
    """The platform banner (all fields null when none is shown); changes are announced on the
    `settings:banner` realtime topic."""
    return await service.get_banner(db)


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


async def require_operator(
    settings: SettingsDep,
    token: Annotated[str | None, Header(alias=OPERATOR_HEADER)] = None,
) -> None:
    """401 unless the request carries the configured operator token (constant-time compare)."""
    configured = settings.operator_token
    if configured is None or token is None:
        raise OperatorTokenRequired()
    if not hmac.compare_digest(_digest(token), _digest(configured.get_secret_value())):
        raise OperatorTokenRequired()


@router.put("/v1/admin/banner", response_model=Banner, dependencies=[Depends(require_operator)])
async def put_banner(body: BannerUpdate, engine: EngineDep, request: Request) -> Banner:
    """Operator: show a banner (announced on `settings:banner`)."""
    banner = await service.publish_banner(engine, message=body.message, level=body.level)
    _notify(request)
    return banner


@router.delete("/v1/admin/banner", status_code=204, dependencies=[Depends(require_operator)])
async def delete_banner(engine: EngineDep, request: Request) -> Response:
    """Operator: remove the banner (announced on `settings:banner` as a delete)."""
    await service.withdraw_banner(engine)
    _notify(request)
    return Response(status_code=204)


def _notify(request: Request) -> None:
    """The event is committed: this process's outbox followers read it now (other processes
    learn of it through PostgreSQL's notification or their poll)."""
    notify = getattr(request.app.state, "notify_outbox", None)
    if callable(notify):
        notify()
