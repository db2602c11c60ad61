"""Webhook management routes ``/v1/webhooks`` (spec 6.2; docs/webhooks.md).

Every route needs a developer key with ``webhooks:manage`` in ``x-svc-developer-key`` and acts
for that key's owner wallet. ``user:`` topics also need the wallet's own session.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, Path, Query
from starlette.requests import Request
from starlette.responses import Response

from predmarket.auth.deps import NowDep
from predmarket.auth.errors import CsrfFailed
from predmarket.keys.errors import ScopeRequired
from predmarket.kit.deps import DbDep
from predmarket.kit.pagination import PageRequest, page_params
from predmarket.openapi import public
from predmarket.realtime.errors import RealtimeTopicForbidden
from predmarket.webhooks import service
from predmarket.webhooks.deps import ContextDep, ManagerDep
from predmarket.webhooks.errors import (
    DeliveryNotFound,
    DeveloperKeyRequired,
    WebhookDisabled,
    WebhookLimitReached,
    WebhookNotFound,
    WebhookUrlRejected,
)
from predmarket.webhooks.schemas import (
    LIST_DEFAULT_LIMIT,
    LIST_MAX_LIMIT,
    Delivery,
    DeliveryPage,
    DeliveryStatus,
    Webhook,
    WebhookCreate,
    WebhookPage,
    WebhookUpdate,
    WebhookWithSecret,
)

router = APIRouter(tags=["Webhooks"])

ListPageDep = Annotated[
    PageRequest, Depends(page_params(default_limit=LIST_DEFAULT_LIMIT, max_limit=LIST_MAX_LIMIT))
]
# Any id that is not one of the owner's is a 404, malformed ones included.
WebhookId = Annotated[str, Path(max_length=64, description="the webhook's id (`wh_…`)")]
DeliveryId = Annotated[str, Path(max_length=64, description="the delivery's id (`msg_…`)")]

_AUTH_ERRORS = [DeveloperKeyRequired, ScopeRequired, CsrfFailed]
_NO_CONTENT: dict[int, dict[str, Any]] = {204: {"description": "Deleted."}}


def _wake_worker(request: Request) -> None:
    runner = getattr(request.app.state, "webhooks", None)
    if runner is not None:
        runner.notify_worker()


@router.post(
    "/v1/webhooks",
    status_code=201,
    response_model=WebhookWithSecret,
    **public(
        "create",
        errors=[*_AUTH_ERRORS, WebhookUrlRejected, RealtimeTopicForbidden, WebhookLimitReached],
    ),
)
async def create_webhook(
    body: WebhookCreate, principal: ManagerDep, db: DbDep, ctx: ContextDep, now: NowDep
) -> WebhookWithSecret:
    """Subscribe a URL to topics. The `secret` (`whsec_…`) is shown once: keep it to verify
    the `webhook-signature` of each delivery."""
    return await service.create_webhook(db, principal, body, ctx=ctx, now=now)


@router.get(
    "/v1/webhooks",
    response_model=WebhookPage,
    **public("list", errors=_AUTH_ERRORS),
)
async def list_webhooks(principal: ManagerDep, db: DbDep, page: ListPageDep) -> WebhookPage:
    """The developer key owner's webhooks, newest first. Never a secret."""
    return await service.list_webhooks(db, principal, page)


@router.get(
    "/v1/webhooks/{webhook_id}",
    response_model=Webhook,
    **public("get", errors=[*_AUTH_ERRORS, WebhookNotFound]),
)
async def get_webhook(webhook_id: WebhookId, principal: ManagerDep, db: DbDep) -> Webhook:
    """One webhook, with whether it is enabled and why it was disabled."""
    return await service.get_webhook(db, principal, webhook_id)


@router.patch(
    "/v1/webhooks/{webhook_id}",
    response_model=Webhook,
    **public(
        "update",
        errors=[*_AUTH_ERRORS, WebhookNotFound, WebhookUrlRejected, RealtimeTopicForbidden],
    ),
)
async def update_webhook(
    webhook_id: WebhookId,
    body: WebhookUpdate,
    request: Request,
    background: BackgroundTasks,
    principal: ManagerDep,
    db: DbDep,
    ctx: ContextDep,
    now: NowDep,
) -> Webhook:
    """Change the URL, topics or description; `enabled: true` re-enables a disabled webhook
    and sends its waiting deliveries at once."""
    webhook = await service.update_webhook(db, principal, webhook_id, body, ctx=ctx, now=now)
    background.add_task(_wake_worker, request)
    return webhook


@router.delete(
    "/v1/webhooks/{webhook_id}",
    status_code=204,
    **public("delete", errors=[*_AUTH_ERRORS, WebhookNotFound], responses=_NO_CONTENT),
)
async def delete_webhook(webhook_id: WebhookId, principal: ManagerDep, db: DbDep) -> Response:
    """Delete a webhook with its delivery history; nothing more is sent to it."""
    await service.delete_webhook(db, principal, webhook_id)
    return Response(status_code=204)


@router.post(
    "/v1/webhooks/{webhook_id}/rotate-secret",
    response_model=WebhookWithSecret,
    **public("rotateSecret", errors=[*_AUTH_ERRORS, WebhookNotFound]),
)
async def rotate_secret(
    webhook_id: WebhookId, principal: ManagerDep, db: DbDep, ctx: ContextDep, now: NowDep
) -> WebhookWithSecret:
    """A new secret, shown once. Until `previousSecretExpiresAt` deliveries carry a signature
    with each secret, so receivers can switch without losing events."""
    return await service.rotate_secret(db, principal, webhook_id, ctx=ctx, now=now)


@router.get(
    "/v1/webhooks/{webhook_id}/deliveries",
    response_model=DeliveryPage,
    **public("listDeliveries", errors=[*_AUTH_ERRORS, WebhookNotFound]),
)
async def list_deliveries(
    webhook_id: WebhookId,
    principal: ManagerDep,
    db: DbDep,
    page: ListPageDep,
    status: Annotated[
        DeliveryStatus | None, Query(description="only deliveries in this state")
    ] = None,
) -> DeliveryPage:
    """The webhook's deliveries, newest first, each with every attempt (status code,
    duration, error, the retry it scheduled)."""
    return await service.list_deliveries(db, principal, webhook_id, page, status=status)


@router.post(
    "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
    status_code=202,
    response_model=Delivery,
    **public(
        "redeliver", errors=[*_AUTH_ERRORS, WebhookNotFound, DeliveryNotFound, WebhookDisabled]
    ),
)
async def redeliver(
    webhook_id: WebhookId,
    delivery_id: DeliveryId,
    request: Request,
    background: BackgroundTasks,
    principal: ManagerDep,
    db: DbDep,
    now: NowDep,
) -> Delivery:
    """Send a delivery again now (same `webhook-id`, a fresh retry schedule)."""
    delivery = await service.redeliver(db, principal, webhook_id, delivery_id, now=now)
    background.add_task(_wake_worker, request)
    return delivery
