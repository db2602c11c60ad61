"""The delivery worker and the background runner (docs/webhooks.md, "Delivery").

:class:`DeliveryWorker` claims due deliveries with a lease (``queries.claim_due``: ``FOR UPDATE
SKIP LOCKED`` on PostgreSQL), POSTs each one, and records the attempt, releasing the lease:

- 2xx: delivered. Anything else (another status, a timeout, a refused connection, a redirect, an
  address the SSRF guard refuses at send time): failed; the next attempt is scheduled after the
  delay ``retry_schedule_seconds[n]`` scaled by a random factor in ``1 ± retry_jitter``.
- When the schedule is exhausted the delivery is ``failed``; if the subscription has not had a
  2xx since that delivery's round began, the subscription is disabled with a reason and an event
  reports it on the owner's ``user:{owner}:notifications`` topic.
- A worker that dies mid-attempt leaves its lease to expire (``lease_seconds``); another worker
  then sends the attempt again. Delivery is therefore at least once: receivers deduplicate on
  ``webhook-id``.

:func:`running` runs the dispatcher and the worker as background tasks of the app's lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import httpx
from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket import __version__
from predmarket.realtime.sse import iso_ms
from predmarket.settings import WebhookSettings
from predmarket.store.uow import append_outbox
from predmarket.webhooks import dispatcher, queries, signing, ssrf

log = logging.getLogger("predmarket.webhooks")

USER_AGENT: Final = f"predmarket-webhooks/{__version__}"
#: The reason recorded (and reported) when a subscription is disabled for failing.
DISABLED_FOR_FAILURES: Final = "disabled after repeated delivery failures"
_MAX_ERROR: Final = 500
_MAX_BACKOFF_S: Final = 30.0
_STOP_TIMEOUT_S: Final = 10.0

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def encode_body(event: object) -> bytes:
    """The exact bytes POSTed (and signed): compact JSON."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


class DeliveryWorker:
    """Claims and sends due deliveries; several may run against one PostgreSQL database."""

    def __init__(
        self,
        engine: AsyncEngine,
        settings: WebhookSettings,
        *,
        box: signing.SecretBox,
        allow_private: bool,
        client: httpx.AsyncClient | None = None,
        clock: Clock = _utcnow,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.box = box
        self.allow_private = allow_private
        self.clock = clock
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(settings.timeout_seconds),
            limits=httpx.Limits(max_connections=settings.concurrency),
            headers={"user-agent": USER_AGENT},
        )
        self._sending = asyncio.Semaphore(settings.concurrency)

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    def retry_delay(self, round_attempts: int) -> float | None:
        """Seconds before the retry that follows the ``round_attempts``-th failed attempt of a
        round, jittered; None when the schedule is exhausted."""
        schedule = self.settings.retry_schedule_seconds
        if round_attempts > len(schedule):
            return None
        base = schedule[round_attempts - 1]
        jitter = self.settings.retry_jitter
        return max(0.0, base * random.uniform(1 - jitter, 1 + jitter))

    async def run_once(self) -> int:
        """Claim one batch of due deliveries and send them; returns how many were claimed."""
        now = self.clock()
        token = secrets.token_hex(16)
        lease_until = now + timedelta(seconds=self.settings.lease_seconds)
        async with self.engine.begin() as conn:
            ids = await queries.claim_due(
                conn,
                now=now,
                lease_until=lease_until,
                token=token,
                limit=self.settings.batch_size,
            )
            rows = await queries.claimed(conn, ids, token) if ids else []
        if rows:
            await asyncio.gather(*(self._send(row, token) for row in rows))
        return len(rows)

    async def next_due_in(self) -> float | None:
        """Seconds until the earliest pending delivery falls due (0 when one is due)."""
        async with self.engine.connect() as conn:
            due = await queries.next_due(conn, self.clock())
        if due is None:
            return None
        return max(0.0, (due - self.clock()).total_seconds())

    def _secrets(self, row: RowMapping, now: datetime) -> list[str]:
        found = [self.box.open(row["secret_ciphertext"], row["subscription_id"])]
        previous = row["previous_secret_ciphertext"]
        expires = row["previous_secret_expires_at"]
        if previous is not None and expires is not None and expires > now:
            found.append(self.box.open(previous, row["subscription_id"]))
        return found

    async def _post(self, row: RowMapping, started: datetime) -> tuple[int | None, str | None]:
        """One attempt: ``(status code or None, error or None)``."""
        try:
            target = await ssrf.check(row["url"], allow_private=self.allow_private)
        except ssrf.TargetRefused as refused:
            return None, f"{refused.reason}: {refused.message}"
        try:
            keys = self._secrets(row, started)
        except signing.SecretUnreadable as exc:
            return None, f"secret_unreadable: {exc}"
        body = encode_body(row["event"])
        timestamp = int(started.timestamp())
        url, host_header, extensions = target.pinned()
        headers = {
            **host_header,
            "content-type": "application/json",
            "webhook-id": row["id"],
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signing.signature_header(keys, row["id"], timestamp, body),
        }
        try:
            request = self.client.build_request(
                "POST", url, content=body, headers=headers, extensions=extensions
            )
            response = await self.client.send(request, stream=True)
            await response.aclose()  # the body is never read: a receiver cannot make us buffer
        except httpx.TimeoutException:
            return None, "timeout"
        except httpx.HTTPError as exc:
            return None, f"{type(exc).__name__}: {exc}"[:_MAX_ERROR]
        if 200 <= response.status_code < 300:
            return response.status_code, None
        return response.status_code, f"HTTP {response.status_code}"

    async def _send(self, row: RowMapping, token: str) -> None:
        async with self._sending:
            started = self.clock()
            clock_start = time.perf_counter()
            status_code, error = await self._post(row, started)
            duration_ms = int((time.perf_counter() - clock_start) * 1000)
        try:
            await self._record(row, token, started, duration_ms, status_code, error)
        except Exception:
            # The lease expires and the attempt is made again: at least once.
            log.exception("webhook delivery %s: recording the attempt failed", row["id"])

    async def _record(
        self,
        row: RowMapping,
        token: str,
        started: datetime,
        duration_ms: int,
        status_code: int | None,
        error: str | None,
    ) -> None:
        now = self.clock()
        attempt = int(row["attempts"]) + 1
        round_attempts = int(row["round_attempts"]) + 1
        first_attempt_at = row["first_attempt_at"] or started
        values: dict[str, Any] = {
            "attempts": attempt,
            "round_attempts": round_attempts,
            "first_attempt_at": first_attempt_at,
            "last_status_code": status_code,
            "last_error": error,
        }
        next_at: datetime | None = None
        exhausted = False
        if error is None:
            values.update(status="succeeded", delivered_at=now, next_attempt_at=None)
        else:
            delay = self.retry_delay(round_attempts)
            if delay is None:
                exhausted = True
                values.update(status="failed", next_attempt_at=None)
            else:
                next_at = now + timedelta(seconds=delay)
                values.update(status="pending", next_attempt_at=next_at)
        webhook_id = row["subscription_id"]
        async with self.engine.begin() as conn:
            kept = await queries.finish_attempt(conn, row["id"], token, values)
            await queries.insert_attempt(
                conn,
                delivery_id=row["id"],
                attempt=attempt,
                started_at=started,
                duration_ms=duration_ms,
                status_code=status_code,
                outcome="succeeded" if error is None else "failed",
                error=error,
                next_attempt_at=next_at if kept else None,
            )
            if not kept:
                log.warning("webhook delivery %s: lease lost; attempt recorded only", row["id"])
                return
            if error is None:
                await queries.record_success(conn, webhook_id)
                return
            # Failing since this attempt began (compared with a round's first attempt).
            await queries.record_failure(conn, webhook_id, started)
            if exhausted:
                await self._maybe_disable(conn, webhook_id, first_attempt_at, now)

    async def _maybe_disable(
        self, conn: AsyncConnection, webhook_id: str, round_began: datetime, now: datetime
    ) -> None:
        """Disable a subscription whose endpoint has failed everything since this delivery's
        round began (one receiver rejecting one event does not disable it)."""
        state = await queries.subscription_state(conn, webhook_id)
        if state is None or not state["enabled"]:
            return
        first_failure_at = state["first_failure_at"]
        if first_failure_at is None or first_failure_at > round_began:
            return
        if await queries.disable(conn, webhook_id, reason=DISABLED_FOR_FAILURES, now=now):
            log.warning("webhook %s disabled after repeated delivery failures", webhook_id)
            await append_outbox(
                conn,
                topic=f"user:{state['owner']}:notifications",
                operation="update",
                entity="webhook",
                key={"webhookId": webhook_id},
                payload={
                    "enabled": False,
                    "disabledReason": DISABLED_FOR_FAILURES,
                    "disabledAt": iso_ms(now),
                    "url": state["url"],
                },
                source="outbox",
                created_at=now,
            )


class WebhookRunner:
    """The dispatcher and worker loops of one process."""

    def __init__(self, engine: AsyncEngine, worker: DeliveryWorker) -> None:
        self.engine = engine
        self.worker = worker
        self.settings = worker.settings
        self._events = asyncio.Event()
        self._deliveries = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def notify(self) -> None:
        """New outbox rows are committed: dispatch now rather than at the next poll."""
        self._events.set()

    def notify_worker(self) -> None:
        """A delivery became due (a redelivery, a re-enabled webhook): send now."""
        self._deliveries.set()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._dispatch_loop(), name="webhook-dispatcher"),
            asyncio.create_task(self._deliver_loop(), name="webhook-worker"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, _STOP_TIMEOUT_S)
        self._tasks = []
        await self.worker.aclose()

    async def _wait(self, event: asyncio.Event, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)
        event.clear()

    async def _dispatch_loop(self) -> None:
        backoff = self.settings.poll_interval_seconds
        while True:
            try:
                queued = await dispatcher.dispatch_once(
                    self.engine, batch_size=self.settings.batch_size
                )
                if queued:
                    self._deliveries.set()
                backoff = self.settings.poll_interval_seconds
                if await dispatcher.pending_events(self.engine):
                    continue
                await self._wait(self._events, self.settings.poll_interval_seconds)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("webhook dispatcher pass failed; retrying in %.1fs", backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF_S)

    async def _deliver_loop(self) -> None:
        backoff = self.settings.poll_interval_seconds
        while True:
            try:
                wait = self.settings.poll_interval_seconds
                # Read first: the claim is a write, and an idle worker should not take the
                # database's write lock every poll.
                due_in = await self.worker.next_due_in()
                if due_in is not None and due_in <= 0:
                    if await self.worker.run_once():
                        backoff = self.settings.poll_interval_seconds
                        continue
                elif due_in is not None:
                    wait = min(wait, due_in)
                backoff = self.settings.poll_interval_seconds
                await self._wait(self._deliveries, wait)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("webhook worker pass failed; retrying in %.1fs", backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF_S)


@asynccontextmanager
async def running(
    engine: AsyncEngine, settings: WebhookSettings, *, server_secret: str, allow_private: bool
) -> AsyncIterator[WebhookRunner]:
    """The dispatcher and worker of this process, stopped on exit."""
    worker = DeliveryWorker(
        engine, settings, box=signing.SecretBox(server_secret), allow_private=allow_private
    )
    runner = WebhookRunner(engine, worker)
    runner.start()
    try:
        yield runner
    finally:
        await runner.stop()
