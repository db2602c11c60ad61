"""Errors of webhook management (spec 6.2, 7.3; docs/webhooks.md)."""

from __future__ import annotations

from predmarket.kit.errors import Conflict, InvalidRequest, NotFound, Unauthorized


class DeveloperKeyRequired(Unauthorized):
    message = (
        "webhook management needs a developer key with the scope 'webhooks:manage' in the "
        "x-svc-developer-key header"
    )


class WebhookNotFound(NotFound):
    """Unknown or another owner's: the same answer, so ids cannot be probed."""

    message = "webhook not found"


class DeliveryNotFound(NotFound):
    message = "webhook delivery not found"


class WebhookLimitReached(Conflict):
    code = "WEBHOOK_LIMIT_REACHED"
    message = "the owner holds the maximum number of webhooks; delete one first"


class WebhookDisabled(Conflict):
    code = "WEBHOOK_DISABLED"
    message = 'the webhook is disabled; enable it with PATCH {"enabled": true} first'


class WebhookUrlRejected(InvalidRequest):
    """A URL that is not http(s), or whose host resolves to a forbidden address (SSRF)."""

    code = "WEBHOOK_URL_REJECTED"
    message = "the webhook URL is not allowed"

    @classmethod
    def because(cls, reason: str, message: str) -> WebhookUrlRejected:
        return cls(
            f"body.url: {message}",
            details={
                "fields": [{"field": "body.url", "message": message, "type": reason}],
                "reason": reason,
            },
        )
