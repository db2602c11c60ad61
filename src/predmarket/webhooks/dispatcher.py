"""The dispatcher: turns outbox events into webhook deliveries (docs/webhooks.md, "Delivery").

One pass reads the outbox after the dispatcher's durable cursor (``webhook_cursor``), matches
each event's topic against the enabled subscriptions' feeds and inserts one ``webhook_delivery``
per (subscription, event) in the SAME transaction that moves the cursor, so an event is queued
exactly once whatever crashes when. The outbox's ordering guarantee (``docs/data-model.md``)
makes ``id > cursor`` miss nothing. The cursor row is locked for the pass, so dispatchers of
several worker processes take turns; a subscription only receives events after the cursor
position at its creation (``start_after_event_id``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.realtime.sse import PROTOCOL_VERSION, iso_ms
from predmarket.webhooks import queries


def event_body(row: Mapping[Any, Any]) -> dict[str, Any]:
    """The event object of an outbox row: the same fields and values as the stream frame's
    ``data`` (spec 6.1)."""
    event_id = int(row["id"])
    created = row["created_at"]
    return {
        "v": PROTOCOL_VERSION,
        "id": str(event_id),
        "seq": str(event_id),
        "topic": row["topic"],
        "operation": row["operation"],
        "entity": row["entity"],
        "key": row["key"] if row["key"] is not None else {},
        "payload": row["payload"] if row["payload"] is not None else {},
        "timestamp": iso_ms(created) if isinstance(created, datetime) else str(created),
        "source": row["source"],
    }


def new_delivery_id() -> str:
    return "msg_" + secrets.token_hex(16)


async def dispatch_once(
    engine: AsyncEngine, *, batch_size: int, now: datetime | None = None
) -> int:
    """One pass over at most ``batch_size`` new events; returns the deliveries queued (the
    caller loops while events remain: :func:`pending_events`)."""
    when = now or datetime.now(UTC)
    async with engine.connect() as conn:
        # A cheap look first: no write transaction while there is nothing to do.
        cursor = await queries.read_cursor(conn)
        if cursor is None and not await queries.any_subscription(conn):
            # No webhook was ever created: nothing to queue and no cursor to start yet (the
            # first subscription creates it, at the outbox's end).
            return 0
        if cursor is not None and await queries.outbox_max_id(conn) <= cursor:
            return 0
    async with engine.begin() as conn:
        cursor = await queries.lock_cursor(conn, when)
        rows = await queries.outbox_after(conn, cursor, batch_size)
        if not rows:
            return 0
        feeds: dict[str, list[tuple[str, int]]] = {}
        for sub in await queries.enabled_feeds(conn):
            for topic in sub["feeds"]:
                feeds.setdefault(topic, []).append((sub["id"], int(sub["start_after_event_id"])))
        deliveries: list[dict[str, Any]] = []
        for row in rows:
            matches = feeds.get(row["topic"])
            if not matches:
                continue
            body = event_body(row)
            for webhook_id, start_after in matches:
                if row["id"] <= start_after:
                    continue
                deliveries.append(
                    {
                        "id": new_delivery_id(),
                        "subscription_id": webhook_id,
                        "event_id": row["id"],
                        "topic": row["topic"],
                        "event": body,
                        "status": "pending",
                        "attempts": 0,
                        "round_attempts": 0,
                        "next_attempt_at": when,
                        "created_at": when,
                    }
                )
        await queries.insert_deliveries(conn, deliveries)
        await queries.set_cursor(conn, int(rows[-1]["id"]), when)
        return len(deliveries)


async def pending_events(engine: AsyncEngine) -> bool:
    """Whether the outbox holds events the dispatcher has not passed yet."""
    async with engine.connect() as conn:
        cursor = await queries.read_cursor(conn)
        if cursor is None:
            return await queries.any_subscription(conn)
        return await queries.outbox_max_id(conn) > cursor


async def retention_hold(conn: AsyncConnection) -> int | None:
    """For the outbox pruner: events after the dispatcher's cursor are not queued yet and must
    stay (the pruner deletes only ids below the returned one)."""
    cursor = await queries.read_cursor(conn)
    return None if cursor is None else cursor + 1
