"""Webhook management: create, list, read, update, delete, rotate the secret, list and redeliver
deliveries (docs/webhooks.md). Every operation acts for the owner wallet of the calling developer
key; another owner's webhook is a 404.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.auth.principal import Principal
from predmarket.kit.errors import InvalidRequest
from predmarket.kit.pagination import Keyset, PageRequest, paginate
from predmarket.realtime import topics as realtime_topics
from predmarket.settings import WebhookSettings
from predmarket.store.tables.webhooks import webhook_delivery, webhook_subscription
from predmarket.webhooks import queries, signing, ssrf
from predmarket.webhooks.errors import (
    DeliveryNotFound,
    WebhookDisabled,
    WebhookLimitReached,
    WebhookNotFound,
    WebhookUrlRejected,
)
from predmarket.webhooks.schemas import (
    Delivery,
    DeliveryAttempt,
    DeliveryPage,
    Webhook,
    WebhookCreate,
    WebhookPage,
    WebhookUpdate,
    WebhookWithSecret,
)

#: What the owner's manual disable records.
DISABLED_BY_OWNER = "disabled by the owner"


@dataclass(frozen=True, slots=True)
class Context:
    """What management needs beyond the connection: the settings and the secret box."""

    settings: WebhookSettings
    box: signing.SecretBox
    allow_private: bool


def _owner(principal: Principal) -> str:
    developer = principal.developer
    assert developer is not None  # the route's dependency guarantees it
    return developer.owner


async def _checked_url(raw: str, allow_private: bool) -> str:
    """The URL as stored. Its form is always checked; its addresses only when private targets
    are not allowed (then a host that does not resolve is refused too). Every delivery attempt
    checks the addresses again."""
    try:
        if allow_private:
            return str(ssrf.parse_url(raw))
        return str((await ssrf.check(raw, allow_private=False)).url)
    except ssrf.TargetRefused as refused:
        raise WebhookUrlRejected.because(refused.reason, refused.message) from None


def _authorized_topics(
    topics: list[str], principal: Principal, max_topics: int
) -> tuple[list[str], list[str]]:
    """The distinct topics in order and the outbox topics feeding them; 400 over the cap, 403
    ``realtime_topic_forbidden`` for an unknown topic or a ``user:`` topic without that
    wallet's session (the stream's rules, spec 6.1)."""
    wanted = list(dict.fromkeys(t.strip() for t in topics))
    if len(wanted) > max_topics:
        raise InvalidRequest.for_field(
            "body.topics", f"at most {max_topics} topics per webhook", type="too_long"
        )
    subscription = realtime_topics.authorize(
        wanted, principal, anonymous_cap=max_topics, signed_in_cap=max_topics
    )
    return wanted, sorted(subscription.outbox_topics)


def _webhook(row: RowMapping) -> Webhook:
    return Webhook(
        id=row["id"],
        url=row["url"],
        topics=list(row["topics"]),
        description=row["description"],
        enabled=bool(row["enabled"]),
        disabled_at=row["disabled_at"],
        disabled_reason=row["disabled_reason"],
        consecutive_failures=row["consecutive_failures"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        secret_rotated_at=row["secret_rotated_at"],
    )


async def _get_or_raise(conn: AsyncConnection, owner: str, webhook_id: str) -> RowMapping:
    row = await queries.get_owned(conn, owner, webhook_id)
    if row is None:
        raise WebhookNotFound()
    return row


async def create_webhook(
    conn: AsyncConnection, principal: Principal, body: WebhookCreate, *, ctx: Context, now: datetime
) -> WebhookWithSecret:
    """Create a subscription; its secret is returned this once."""
    developer = principal.developer
    assert developer is not None
    topics, feeds = _authorized_topics(body.topics, principal, ctx.settings.max_topics)
    url = await _checked_url(body.url, ctx.allow_private)
    # Locks the dispatcher's cursor: events up to it are before this subscription, every later
    # one is matched against a list that includes it.
    start_after = await queries.lock_cursor(conn, now)
    if await queries.count_owned(conn, developer.owner) >= ctx.settings.max_per_owner:
        raise WebhookLimitReached(details={"limit": ctx.settings.max_per_owner})
    webhook_id = "wh_" + secrets.token_hex(16)
    secret = signing.new_secret()
    await queries.insert_subscription(
        conn,
        id=webhook_id,
        owner=developer.owner,
        key_id=developer.key_id,
        url=url,
        description=body.description,
        topics=topics,
        feeds=feeds,
        secret_ciphertext=ctx.box.seal(secret, webhook_id),
        enabled=True,
        start_after_event_id=start_after,
        consecutive_failures=0,
        created_at=now,
        updated_at=now,
    )
    row = await _get_or_raise(conn, developer.owner, webhook_id)
    return WebhookWithSecret(**_webhook(row).model_dump(), secret=secret)


async def list_webhooks(
    conn: AsyncConnection, principal: Principal, page: PageRequest
) -> WebhookPage:
    """The owner's webhooks, newest first."""
    keyset = Keyset(webhook_subscription.c.created_at, webhook_subscription.c.id, descending=True)
    result = await paginate(conn, queries.owned(_owner(principal)), page, keyset)
    return WebhookPage(webhooks=[_webhook(r) for r in result.items], pagination=result.pagination)


async def get_webhook(conn: AsyncConnection, principal: Principal, webhook_id: str) -> Webhook:
    return _webhook(await _get_or_raise(conn, _owner(principal), webhook_id))


async def update_webhook(
    conn: AsyncConnection,
    principal: Principal,
    webhook_id: str,
    body: WebhookUpdate,
    *,
    ctx: Context,
    now: datetime,
) -> Webhook:
    """Change the URL, topics, description or enabled state; re-enabling resumes the waiting
    deliveries at once and resets the failure count."""
    owner = _owner(principal)
    row = await _get_or_raise(conn, owner, webhook_id)
    values: dict[str, Any] = {}
    if body.url is not None:
        values["url"] = await _checked_url(body.url, ctx.allow_private)
    if body.topics is not None:
        values["topics"], values["feeds"] = _authorized_topics(
            body.topics, principal, ctx.settings.max_topics
        )
    if "description" in body.model_fields_set:
        values["description"] = body.description
    if body.enabled is True and not row["enabled"]:
        values.update(
            enabled=True,
            disabled_at=None,
            disabled_reason=None,
            consecutive_failures=0,
            first_failure_at=None,
        )
        await queries.resume_pending(conn, webhook_id, now)
    elif body.enabled is False and row["enabled"]:
        values.update(enabled=False, disabled_at=now, disabled_reason=DISABLED_BY_OWNER)
    if values:
        values["updated_at"] = now
        await queries.update_owned(conn, owner, webhook_id, values)
    return await get_webhook(conn, principal, webhook_id)


async def delete_webhook(conn: AsyncConnection, principal: Principal, webhook_id: str) -> None:
    """Delete a subscription with its deliveries and attempts; nothing more is sent."""
    if not await queries.delete_owned(conn, _owner(principal), webhook_id):
        raise WebhookNotFound()


async def rotate_secret(
    conn: AsyncConnection, principal: Principal, webhook_id: str, *, ctx: Context, now: datetime
) -> WebhookWithSecret:
    """A new secret, returned this once; the old one keeps signing (beside the new one) for
    ``secret_grace_seconds``."""
    owner = _owner(principal)
    await _get_or_raise(conn, owner, webhook_id)
    current = await queries.secret_columns(conn, webhook_id)
    assert current is not None
    secret = signing.new_secret()
    grace = ctx.settings.secret_grace_seconds
    expires = now + timedelta(seconds=grace) if grace > 0 else None
    await queries.update_owned(
        conn,
        owner,
        webhook_id,
        {
            "secret_ciphertext": ctx.box.seal(secret, webhook_id),
            "previous_secret_ciphertext": current["secret_ciphertext"] if expires else None,
            "previous_secret_expires_at": expires,
            "secret_rotated_at": now,
            "updated_at": now,
        },
    )
    webhook = await get_webhook(conn, principal, webhook_id)
    return WebhookWithSecret(
        **webhook.model_dump(), secret=secret, previous_secret_expires_at=expires
    )


def _delivery(row: RowMapping, attempts: list[RowMapping]) -> Delivery:
    return Delivery(
        id=row["id"],
        webhook_id=row["subscription_id"],
        event_id=str(row["event_id"]),
        topic=row["topic"],
        status=row["status"],
        attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"],
        last_status_code=row["last_status_code"],
        last_error=row["last_error"],
        created_at=row["created_at"],
        delivered_at=row["delivered_at"],
        attempt_log=[
            DeliveryAttempt(
                attempt=a["attempt"],
                started_at=a["started_at"],
                duration_ms=a["duration_ms"],
                status_code=a["status_code"],
                outcome=a["outcome"],
                error=a["error"],
                next_attempt_at=a["next_attempt_at"],
            )
            for a in attempts
        ],
    )


async def list_deliveries(
    conn: AsyncConnection,
    principal: Principal,
    webhook_id: str,
    page: PageRequest,
    *,
    status: str | None,
) -> DeliveryPage:
    """A webhook's deliveries, newest first, each with every attempt."""
    await _get_or_raise(conn, _owner(principal), webhook_id)
    keyset = Keyset(webhook_delivery.c.created_at, webhook_delivery.c.id, descending=True)
    result = await paginate(conn, queries.deliveries_of(webhook_id, status), page, keyset)
    attempts = await queries.attempts_of(conn, (r["id"] for r in result.items))
    return DeliveryPage(
        deliveries=[_delivery(r, attempts[r["id"]]) for r in result.items],
        pagination=result.pagination,
    )


async def redeliver(
    conn: AsyncConnection,
    principal: Principal,
    webhook_id: str,
    delivery_id: str,
    *,
    now: datetime,
) -> Delivery:
    """Queue a delivery again, now, with a fresh retry schedule and the same ``webhook-id``."""
    row = await _get_or_raise(conn, _owner(principal), webhook_id)
    if not row["enabled"]:
        raise WebhookDisabled()
    if await queries.get_delivery(conn, webhook_id, delivery_id) is None:
        raise DeliveryNotFound()
    await queries.redeliver(conn, webhook_id, delivery_id, now)
    updated = await queries.get_delivery(conn, webhook_id, delivery_id)
    assert updated is not None
    attempts = await queries.attempts_of(conn, [delivery_id])
    return _delivery(updated, attempts[delivery_id])
