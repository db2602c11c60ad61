"""Developer webhooks: subscriptions, deliveries, delivery attempts and the dispatcher's cursor
(spec 6.2; docs/webhooks.md).

- ``webhook_subscription``: a URL, its topics and its signing secret. The secret must be
  recoverable to sign deliveries, so it is stored encrypted (AES-256-GCM under a key derived
  from the server secret), never in plain text; the previous secret stays usable for a grace
  period after a rotation.
- ``webhook_delivery``: one event for one subscription, created by the dispatcher in the
  transaction that moves its cursor. It carries the event itself (the stream frame's data), so a
  delivery outlives the outbox's retention and a redelivery sends the same bytes. A worker claims
  it with a lease (``lease_expires_at`` + ``lock_token``) so two workers never send one attempt at
  once.
- ``webhook_attempt``: every HTTP attempt, append-only.
- ``webhook_cursor``: the last outbox id the dispatcher has turned into deliveries.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import BigInteger, Boolean, Column, ForeignKey, Index, Integer, String, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import address, big_id, one_of, timestamp
from predmarket.store.types import JsonDocument

#: ``wh_`` / ``msg_`` and 32 lowercase hex characters.
WEBHOOK_ID_LENGTH: Final = 35
DELIVERY_ID_LENGTH: Final = 36
URL_LENGTH: Final = 2048
DESCRIPTION_LENGTH: Final = 256
REASON_LENGTH: Final = 256
ERROR_LENGTH: Final = 512
#: Base64 of nonce (12) + ciphertext (32) + tag (16) with a version prefix.
SECRET_CIPHERTEXT_LENGTH: Final = 128
DELIVERY_STATUSES: Final = ("pending", "succeeded", "failed")
ATTEMPT_OUTCOMES: Final = ("succeeded", "failed")

webhook_subscription = Table(
    "webhook_subscription",
    metadata,
    Column("id", String(WEBHOOK_ID_LENGTH), primary_key=True, comment="wh_ + 32 hex"),
    address("owner", comment="canonical wallet owning the developer key that created it"),
    Column("key_id", String(32), nullable=False, comment="developer key that created it"),
    Column("url", String(URL_LENGTH), nullable=False),
    Column("description", String(DESCRIPTION_LENGTH), nullable=True),
    Column("topics", JsonDocument(), nullable=False, comment="list of spec 6.1 topics, as asked"),
    Column(
        "feeds",
        JsonDocument(),
        nullable=False,
        comment="the outbox topics that feed them (a groupless wallet under both spellings)",
    ),
    Column(
        "secret_ciphertext",
        String(SECRET_CIPHERTEXT_LENGTH),
        nullable=False,
        comment="AES-GCM under a key derived from the server secret; never plain text",
    ),
    Column("previous_secret_ciphertext", String(SECRET_CIPHERTEXT_LENGTH), nullable=True),
    timestamp("previous_secret_expires_at", nullable=True),
    Column("enabled", Boolean(), nullable=False),
    timestamp("disabled_at", nullable=True),
    Column("disabled_reason", String(REASON_LENGTH), nullable=True),
    Column(
        "start_after_event_id",
        BigInteger,
        nullable=False,
        comment="events up to this outbox id predate the subscription",
    ),
    Column("consecutive_failures", Integer, nullable=False, comment="failed attempts since a 2xx"),
    timestamp("first_failure_at", nullable=True, comment="first failure since the last 2xx"),
    timestamp("created_at"),
    timestamp("updated_at"),
    timestamp("secret_rotated_at", nullable=True),
    comment="Developer webhook subscriptions; the signing secret only encrypted.",
)

# GET /v1/webhooks: an owner's subscriptions, newest first.
Index(None, webhook_subscription.c.owner, webhook_subscription.c.created_at)

webhook_delivery = Table(
    "webhook_delivery",
    metadata,
    Column("id", String(DELIVERY_ID_LENGTH), primary_key=True, comment="msg_ + 32 hex; webhook-id"),
    Column(
        "subscription_id",
        String(WEBHOOK_ID_LENGTH),
        ForeignKey("webhook_subscription.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("event_id", BigInteger, nullable=False, comment="the outbox id"),
    Column("topic", String(255), nullable=False),
    Column("event", JsonDocument(), nullable=False, comment="the body sent: the frame's data"),
    Column("status", String(9), nullable=False),
    Column("attempts", Integer, nullable=False, comment="attempts made, redeliveries included"),
    Column("round_attempts", Integer, nullable=False, comment="attempts in the current schedule"),
    timestamp("next_attempt_at", nullable=True, comment="when due; NULL once final"),
    timestamp("lease_expires_at", nullable=True, comment="a worker's lease"),
    Column("lock_token", String(32), nullable=True, comment="the lease holder's token"),
    Column("last_status_code", Integer, nullable=True),
    Column("last_error", String(ERROR_LENGTH), nullable=True),
    timestamp("created_at"),
    timestamp("first_attempt_at", nullable=True, comment="first attempt of the current round"),
    timestamp("delivered_at", nullable=True),
    one_of("status", DELIVERY_STATUSES),
    comment="One event for one webhook subscription: the unit of at-least-once delivery.",
)

# The dispatcher never queues one event twice for a subscription.
Index(None, webhook_delivery.c.subscription_id, webhook_delivery.c.event_id, unique=True)
# GET /v1/webhooks/{id}/deliveries: newest first.
Index(
    None, webhook_delivery.c.subscription_id, webhook_delivery.c.created_at, webhook_delivery.c.id
)
# The workers' claim: pending deliveries by due time.
Index(None, webhook_delivery.c.status, webhook_delivery.c.next_attempt_at)

webhook_attempt = Table(
    "webhook_attempt",
    metadata,
    big_id(),
    Column(
        "delivery_id",
        String(DELIVERY_ID_LENGTH),
        ForeignKey("webhook_delivery.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("attempt", Integer, nullable=False, comment="1-based, across redeliveries"),
    timestamp("started_at"),
    Column("duration_ms", Integer, nullable=False),
    Column("status_code", Integer, nullable=True, comment="NULL: no HTTP response"),
    Column("outcome", String(9), nullable=False),
    Column("error", String(ERROR_LENGTH), nullable=True),
    timestamp("next_attempt_at", nullable=True, comment="the retry it scheduled, if any"),
    one_of("outcome", ATTEMPT_OUTCOMES),
    comment="Every webhook delivery attempt, append-only.",
)

Index(None, webhook_attempt.c.delivery_id, webhook_attempt.c.id)

webhook_cursor = Table(
    "webhook_cursor",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("last_event_id", BigInteger, nullable=False),
    timestamp("updated_at"),
    comment="The webhook dispatcher's position in the outbox.",
)
