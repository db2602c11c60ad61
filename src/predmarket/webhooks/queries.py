"""Statements over the webhook tables (``store.tables.webhooks``) and the outbox tail.

Listing statements never select the secret columns; only the delivery worker reads them.
Transactions that read and then write start with a write (``lock_cursor``, the claim's
``UPDATE``): on PostgreSQL that takes the row lock first; on SQLite it takes the database write
lock before the transaction's snapshot, so a writer that committed in between cannot make the
later write fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import RowMapping, Select, delete, func, insert, literal, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.outbox import outbox
from predmarket.store.tables.webhooks import (
    webhook_attempt,
    webhook_cursor,
    webhook_delivery,
    webhook_subscription,
)
from predmarket.store.types import UtcDateTime

CURSOR_NAME: Final = "dispatcher"

sub = webhook_subscription
dlv = webhook_delivery

_PUBLIC = (
    sub.c.id,
    sub.c.owner,
    sub.c.url,
    sub.c.description,
    sub.c.topics,
    sub.c.enabled,
    sub.c.disabled_at,
    sub.c.disabled_reason,
    sub.c.consecutive_failures,
    sub.c.created_at,
    sub.c.updated_at,
    sub.c.secret_rotated_at,
)


# -- the dispatcher's cursor ---------------------------------------------------------------------


async def _initial_cursor(conn: AsyncConnection) -> int:
    # Events before the first subscription concern nobody: start at the oldest subscription's
    # start, or at the outbox's end when there is none.
    oldest = await conn.scalar(select(func.min(sub.c.start_after_event_id)))
    if oldest is not None:
        return int(oldest)
    return int(await conn.scalar(select(func.coalesce(func.max(outbox.c.id), 0))) or 0)


async def lock_cursor(conn: AsyncConnection, now: datetime) -> int:
    """The dispatcher's position, locked for the rest of the transaction (the row lock on
    PostgreSQL, the write lock on SQLite). Creating a subscription takes it too, so the
    dispatcher never matches events against a subscription list that misses one being created."""
    stmt = (
        update(webhook_cursor)
        .where(webhook_cursor.c.name == CURSOR_NAME)
        .values(updated_at=now)
        .returning(webhook_cursor.c.last_event_id)
    )
    value = (await conn.execute(stmt)).scalar_one_or_none()
    if value is not None:
        return int(value)
    initial = await _initial_cursor(conn)
    values = {"name": CURSOR_NAME, "last_event_id": initial, "updated_at": now}
    ins = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    await conn.execute(ins(webhook_cursor).values(**values).on_conflict_do_nothing())
    value = (await conn.execute(stmt)).scalar_one()
    return int(value)


async def any_subscription(conn: AsyncConnection) -> bool:
    """Whether any webhook subscription exists (enabled or not)."""
    return (await conn.scalar(select(sub.c.id).limit(1))) is not None


async def read_cursor(conn: AsyncConnection) -> int | None:
    stmt = select(webhook_cursor.c.last_event_id).where(webhook_cursor.c.name == CURSOR_NAME)
    value = await conn.scalar(stmt)
    return None if value is None else int(value)


async def set_cursor(conn: AsyncConnection, last_event_id: int, now: datetime) -> None:
    await conn.execute(
        update(webhook_cursor)
        .where(webhook_cursor.c.name == CURSOR_NAME)
        .values(last_event_id=last_event_id, updated_at=now)
    )


async def outbox_max_id(conn: AsyncConnection) -> int:
    return int(await conn.scalar(select(func.coalesce(func.max(outbox.c.id), 0))) or 0)


async def outbox_after(conn: AsyncConnection, after: int, limit: int) -> Sequence[RowMapping]:
    stmt = select(outbox).where(outbox.c.id > after).order_by(outbox.c.id).limit(limit)
    return (await conn.execute(stmt)).mappings().all()


# -- subscriptions -------------------------------------------------------------------------------


async def insert_subscription(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(sub).values(**values))


async def count_owned(conn: AsyncConnection, owner: str) -> int:
    return int(await conn.scalar(select(func.count()).where(sub.c.owner == owner)) or 0)


def owned(owner: str) -> Select[Any]:
    """An owner's subscriptions (page with the keyset ``created_at, id``)."""
    return select(*_PUBLIC).where(sub.c.owner == owner)


async def get_owned(conn: AsyncConnection, owner: str, webhook_id: str) -> RowMapping | None:
    stmt = owned(owner).where(sub.c.id == webhook_id)
    row: RowMapping | None = (await conn.execute(stmt)).mappings().first()
    return row


async def update_owned(
    conn: AsyncConnection, owner: str, webhook_id: str, values: Mapping[str, Any]
) -> None:
    await conn.execute(
        update(sub).where(sub.c.id == webhook_id, sub.c.owner == owner).values(**values)
    )


async def delete_owned(conn: AsyncConnection, owner: str, webhook_id: str) -> bool:
    result = await conn.execute(delete(sub).where(sub.c.id == webhook_id, sub.c.owner == owner))
    return bool(result.rowcount)


async def secret_columns(conn: AsyncConnection, webhook_id: str) -> RowMapping | None:
    stmt = select(
        sub.c.secret_ciphertext, sub.c.previous_secret_ciphertext, sub.c.previous_secret_expires_at
    ).where(sub.c.id == webhook_id)
    return (await conn.execute(stmt)).mappings().first()


async def enabled_feeds(conn: AsyncConnection) -> Sequence[RowMapping]:
    """What the dispatcher matches events against: every enabled subscription's feeds."""
    stmt = select(sub.c.id, sub.c.feeds, sub.c.start_after_event_id).where(sub.c.enabled.is_(True))
    return (await conn.execute(stmt)).mappings().all()


async def resume_pending(conn: AsyncConnection, webhook_id: str, now: datetime) -> None:
    """A re-enabled subscription's waiting deliveries are due now."""
    await conn.execute(
        update(dlv)
        .where(dlv.c.subscription_id == webhook_id, dlv.c.status == "pending")
        .values(next_attempt_at=now)
    )


# -- deliveries ----------------------------------------------------------------------------------


async def insert_deliveries(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(dlv), rows)


def deliveries_of(webhook_id: str, status: str | None) -> Select[Any]:
    stmt = select(
        dlv.c.id,
        dlv.c.subscription_id,
        dlv.c.event_id,
        dlv.c.topic,
        dlv.c.status,
        dlv.c.attempts,
        dlv.c.next_attempt_at,
        dlv.c.last_status_code,
        dlv.c.last_error,
        dlv.c.created_at,
        dlv.c.delivered_at,
    ).where(dlv.c.subscription_id == webhook_id)
    if status is not None:
        stmt = stmt.where(dlv.c.status == status)
    return stmt


async def get_delivery(
    conn: AsyncConnection, webhook_id: str, delivery_id: str
) -> RowMapping | None:
    stmt = deliveries_of(webhook_id, None).where(dlv.c.id == delivery_id)
    row: RowMapping | None = (await conn.execute(stmt)).mappings().first()
    return row


async def attempts_of(
    conn: AsyncConnection, delivery_ids: Iterable[str]
) -> dict[str, list[RowMapping]]:
    ids = list(delivery_ids)
    out: dict[str, list[RowMapping]] = {i: [] for i in ids}
    if not ids:
        return out
    stmt = (
        select(webhook_attempt)
        .where(webhook_attempt.c.delivery_id.in_(ids))
        .order_by(webhook_attempt.c.delivery_id, webhook_attempt.c.id)
    )
    for row in (await conn.execute(stmt)).mappings():
        out[row["delivery_id"]].append(row)
    return out


async def redeliver(
    conn: AsyncConnection, webhook_id: str, delivery_id: str, now: datetime
) -> None:
    """Start a new round of the schedule now (a lease in flight is left to finish)."""
    await conn.execute(
        update(dlv)
        .where(dlv.c.id == delivery_id, dlv.c.subscription_id == webhook_id)
        .values(status="pending", next_attempt_at=now, round_attempts=0, first_attempt_at=None)
    )


async def claim_due(
    conn: AsyncConnection, *, now: datetime, lease_until: datetime, token: str, limit: int
) -> list[str]:
    """Lease up to ``limit`` due deliveries of enabled subscriptions to ``token``.

    Two statements in the caller's transaction: the due ids are selected first (``FOR UPDATE
    SKIP LOCKED`` on PostgreSQL, so concurrent claimers never take the same row and never wait
    on each other), then leased by an ``UPDATE`` that re-checks they are still pending and free.
    The select is not folded into the update as ``WHERE id IN (SELECT … LIMIT n FOR UPDATE SKIP
    LOCKED)``: PostgreSQL may rescan such a subquery and lease far more than ``limit`` rows, so
    one claimer would take the whole queue. The lease (``lease_expires_at``) keeps the rows from
    other claimers after this transaction commits.
    """
    free = or_(dlv.c.lease_expires_at.is_(None), dlv.c.lease_expires_at < now)
    due = (
        select(dlv.c.id)
        .join(sub, sub.c.id == dlv.c.subscription_id)
        .where(
            dlv.c.status == "pending",
            dlv.c.next_attempt_at <= now,
            free,
            sub.c.enabled.is_(True),
        )
        .order_by(dlv.c.next_attempt_at, dlv.c.event_id)
        .limit(limit)
    )
    if conn.dialect.name == "postgresql":
        due = due.with_for_update(skip_locked=True, of=dlv)
    ids = list((await conn.execute(due)).scalars())
    if not ids:
        return []
    stmt = (
        update(dlv)
        .where(dlv.c.id.in_(ids), dlv.c.status == "pending", free)
        .values(lease_expires_at=lease_until, lock_token=token)
        .returning(dlv.c.id)
    )
    return [str(i) for i in (await conn.execute(stmt)).scalars()]


async def claimed(conn: AsyncConnection, ids: Sequence[str], token: str) -> Sequence[RowMapping]:
    """The claimed deliveries with what sending them needs."""
    stmt = (
        select(
            dlv.c.id,
            dlv.c.subscription_id,
            dlv.c.event_id,
            dlv.c.event,
            dlv.c.attempts,
            dlv.c.round_attempts,
            dlv.c.first_attempt_at,
            sub.c.url,
            sub.c.owner,
            sub.c.secret_ciphertext,
            sub.c.previous_secret_ciphertext,
            sub.c.previous_secret_expires_at,
        )
        .join(sub, sub.c.id == dlv.c.subscription_id)
        .where(dlv.c.id.in_(list(ids)), dlv.c.lock_token == token)
        .order_by(dlv.c.next_attempt_at, dlv.c.event_id)
    )
    return (await conn.execute(stmt)).mappings().all()


async def finish_attempt(
    conn: AsyncConnection, delivery_id: str, token: str, values: Mapping[str, Any]
) -> bool:
    """Record an attempt's result on the delivery and release the lease; False when the lease
    was lost (expired and taken by another worker), in which case nothing changes."""
    result = await conn.execute(
        update(dlv)
        .where(dlv.c.id == delivery_id, dlv.c.lock_token == token)
        .values(lease_expires_at=None, lock_token=None, **values)
    )
    return bool(result.rowcount)


async def insert_attempt(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(webhook_attempt).values(**values))


async def subscription_state(conn: AsyncConnection, webhook_id: str) -> RowMapping | None:
    stmt = select(sub.c.enabled, sub.c.first_failure_at, sub.c.owner, sub.c.url).where(
        sub.c.id == webhook_id
    )
    return (await conn.execute(stmt)).mappings().first()


async def record_success(conn: AsyncConnection, webhook_id: str) -> None:
    await conn.execute(
        update(sub)
        .where(sub.c.id == webhook_id)
        .values(consecutive_failures=0, first_failure_at=None)
    )


async def record_failure(conn: AsyncConnection, webhook_id: str, now: datetime) -> None:
    await conn.execute(
        update(sub)
        .where(sub.c.id == webhook_id)
        .values(
            consecutive_failures=sub.c.consecutive_failures + 1,
            first_failure_at=func.coalesce(sub.c.first_failure_at, literal(now, UtcDateTime())),
        )
    )


async def disable(conn: AsyncConnection, webhook_id: str, *, reason: str, now: datetime) -> bool:
    """Disable an enabled subscription; False when it was not enabled."""
    result = await conn.execute(
        update(sub)
        .where(sub.c.id == webhook_id, sub.c.enabled.is_(True))
        .values(enabled=False, disabled_at=now, disabled_reason=reason, updated_at=now)
    )
    return bool(result.rowcount)


async def next_due(conn: AsyncConnection, now: datetime) -> datetime | None:
    """When the earliest pending delivery of an enabled subscription can be claimed: its due
    time, or the end of the lease another worker holds on it."""
    pending = dlv.join(sub, sub.c.id == dlv.c.subscription_id)
    base = (dlv.c.status == "pending", sub.c.enabled.is_(True))
    free_due = await conn.scalar(
        select(func.min(dlv.c.next_attempt_at))
        .select_from(pending)
        .where(*base, or_(dlv.c.lease_expires_at.is_(None), dlv.c.lease_expires_at < now))
    )
    lease_end = await conn.scalar(
        select(func.min(dlv.c.lease_expires_at))
        .select_from(pending)
        .where(*base, dlv.c.lease_expires_at >= now)
    )
    found = [v for v in (free_due, lease_end) if isinstance(v, datetime)]
    return min(found) if found else None
