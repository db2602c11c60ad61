"""Request and response bodies of webhook management (docs/webhooks.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from predmarket.kit.pagination import Pagination
from predmarket.kit.schemas import BaseSchema, InputSchema, UtcDateTime, example
from predmarket.store.tables.webhooks import DESCRIPTION_LENGTH, URL_LENGTH

LIST_DEFAULT_LIMIT = 50
LIST_MAX_LIMIT = 200

_ID = "wh_0f1e2d3c4b5a69788796a5b4c3d2e1f0"
_MSG = "msg_8c1d2e3f4a5b69788796a5b4c3d2e1f0"
_MARKET = "2AHRz3Xv3AT1cZcVPtJEWQnEqNP4FECtPhDGcH4bEUJBG"
_WEBHOOK_EXAMPLE: dict[str, Any] = {
    "id": _ID,
    "url": "https://example.com/hooks/predmarket",
    "topics": [f"market:{_MARKET}:fills"],
    "description": "fills feed",
    "enabled": True,
    "disabledAt": None,
    "disabledReason": None,
    "consecutiveFailures": 0,
    "createdAt": "2026-11-23T10:00:00.000Z",
    "updatedAt": "2026-11-23T10:00:00.000Z",
    "secretRotatedAt": None,
}

WebhookUrl = Annotated[
    str,
    Field(
        min_length=1,
        max_length=URL_LENGTH,
        description="http(s) URL the events are POSTed to; must resolve to a public address",
    ),
]
Topics = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=255)]],
    Field(min_length=1, description="spec 6.1 topics; `user:` topics need the wallet's session"),
]
Description = Annotated[str, Field(max_length=DESCRIPTION_LENGTH)]


class WebhookCreate(InputSchema):
    model_config = example(
        {
            "url": "https://example.com/hooks/predmarket",
            "topics": [f"market:{_MARKET}:fills"],
            "description": "fills feed",
        }
    )

    url: WebhookUrl
    topics: Topics
    description: Description | None = None


class WebhookUpdate(InputSchema):
    """Any of the fields; ``enabled: true`` re-enables a disabled webhook."""

    model_config = example({"enabled": True}, {"topics": [f"market:{_MARKET}:orders"]})

    url: WebhookUrl | None = None
    topics: Topics | None = None
    description: Description | None = None
    enabled: bool | None = None


class Webhook(BaseSchema):
    model_config = example(_WEBHOOK_EXAMPLE)

    id: str = Field(description="`wh_…`")
    url: str
    topics: list[str]
    description: str | None
    enabled: bool = Field(description="false once disabled for failing (see disabledReason)")
    disabled_at: UtcDateTime | None
    disabled_reason: str | None
    consecutive_failures: int = Field(description="failed attempts since the last 2xx")
    created_at: UtcDateTime
    updated_at: UtcDateTime
    secret_rotated_at: UtcDateTime | None


class WebhookWithSecret(Webhook):
    """A webhook with its signing secret: shown once, on creation and on each rotation."""

    model_config = example({**_WEBHOOK_EXAMPLE, "secret": "whsec_" + "A" * 43 + "="})

    secret: str = Field(description="`whsec_…`: the HMAC key, base64 after the prefix")
    previous_secret_expires_at: UtcDateTime | None = Field(
        default=None,
        description="after a rotation: deliveries are also signed with the old secret until then",
    )


class WebhookPage(BaseSchema):
    model_config = example(
        {"webhooks": [_WEBHOOK_EXAMPLE], "pagination": {"limit": 50, "nextCursor": None}}
    )

    webhooks: list[Webhook]
    pagination: Pagination


DeliveryStatus = Literal["pending", "succeeded", "failed"]


class DeliveryAttempt(BaseSchema):
    model_config = example(
        {
            "attempt": 1,
            "startedAt": "2026-11-23T10:00:00.100Z",
            "durationMs": 42,
            "statusCode": 503,
            "outcome": "failed",
            "error": "HTTP 503",
            "nextAttemptAt": "2026-11-23T10:00:05.000Z",
        }
    )

    attempt: int = Field(description="1-based, counting redeliveries")
    started_at: UtcDateTime
    duration_ms: int
    status_code: int | None = Field(description="the receiver's HTTP status; null: no response")
    outcome: Literal["succeeded", "failed"]
    error: str | None
    next_attempt_at: UtcDateTime | None = Field(description="the retry this failure scheduled")


_DELIVERY_EXAMPLE: dict[str, Any] = {
    "id": _MSG,
    "webhookId": _ID,
    "eventId": "4711",
    "topic": f"market:{_MARKET}:fills",
    "status": "pending",
    "attempts": 1,
    "nextAttemptAt": "2026-11-23T10:00:05.000Z",
    "lastStatusCode": 503,
    "lastError": "HTTP 503",
    "createdAt": "2026-11-23T10:00:00.000Z",
    "deliveredAt": None,
    "attemptLog": [
        {
            "attempt": 1,
            "startedAt": "2026-11-23T10:00:00.100Z",
            "durationMs": 42,
            "statusCode": 503,
            "outcome": "failed",
            "error": "HTTP 503",
            "nextAttemptAt": "2026-11-23T10:00:05.000Z",
        }
    ],
}


class Delivery(BaseSchema):
    model_config = example(_DELIVERY_EXAMPLE)

    id: str = Field(description="`msg_…`: the `webhook-id` header, the same on every retry")
    webhook_id: str
    event_id: str = Field(description="the event's id (the stream's event id)")
    topic: str
    status: DeliveryStatus = Field(
        description="pending (queued or retrying), succeeded, failed (schedule exhausted)"
    )
    attempts: int
    next_attempt_at: UtcDateTime | None
    last_status_code: int | None
    last_error: str | None
    created_at: UtcDateTime
    delivered_at: UtcDateTime | None
    attempt_log: list[DeliveryAttempt] = Field(description="every attempt, oldest first")


class DeliveryPage(BaseSchema):
    model_config = example(
        {"deliveries": [_DELIVERY_EXAMPLE], "pagination": {"limit": 50, "nextCursor": None}}
    )

    deliveries: list[Delivery]
    pagination: Pagination
