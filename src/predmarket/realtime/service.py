"""Realtime services: the platform banner, the ``health:indexer`` events, outbox retention.

- **Banner.** ``set_banner`` / ``clear_banner`` write the ``platform_setting`` row and an outbox
  event (topic ``settings:banner``, entity ``banner``, source ``api``) in one transaction.
- **Indexer health.** :class:`IndexerHealthPublisher` checks the indexer's health every
  ``indexer_health_interval_seconds`` in the process that runs it and appends a
  ``health:indexer`` event (entity ``indexer``, source ``outbox``) when the status changes (at
  most one per ``indexer_min_event_seconds``) and every ``indexer_heartbeat_seconds`` besides.
- **Retention.** :class:`Pruner` deletes outbox rows older than ``retention_seconds``, oldest
  first, and records the largest deleted id (the replay horizon) in the same transaction.
  Other followers of the outbox may hold it back with :meth:`Pruner.add_hold`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pydantic import JsonValue
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.health.schemas import ComponentHealth
from predmarket.indexer import Indexer
from predmarket.realtime import queries
from predmarket.realtime.schemas import Banner, BannerLevel
from predmarket.realtime.sse import iso_ms
from predmarket.settings import RealtimeSettings
from predmarket.store.uow import append_outbox, transaction

log = logging.getLogger("predmarket.realtime")

BANNER_TOPIC: Final = "settings:banner"
INDEXER_TOPIC: Final = "health:indexer"

# -- the banner ------------------------------------------------------------------------------------


async def get_banner(conn: AsyncConnection) -> Banner:
    """The current banner (all fields null when none is set)."""
    row = await queries.get_setting(conn, queries.BANNER)
    if row is None or not isinstance(row["value"], dict):
        return Banner(message=None, level=None, updated_at=None)
    value = row["value"]
    return Banner(
        message=value.get("message"), level=value.get("level"), updated_at=row["updated_at"]
    )


async def set_banner(
    conn: AsyncConnection, *, message: str, level: BannerLevel, now: datetime | None = None
) -> Banner:
    """Show ``message``; announces it on ``settings:banner`` in the same transaction."""
    at = now or datetime.now(UTC)
    value: dict[str, JsonValue] = {"message": message, "level": level}
    await queries.put_setting(conn, queries.BANNER, value, at)
    await append_outbox(
        conn,
        topic=BANNER_TOPIC,
        operation="update",
        entity="banner",
        key={"name": "banner"},
        payload={**value, "updatedAt": iso_ms(at)},
        source="api",
        created_at=at,
    )
    return Banner(message=message, level=level, updated_at=at)


async def clear_banner(conn: AsyncConnection, *, now: datetime | None = None) -> None:
    """Remove the banner; announces a ``delete`` on ``settings:banner`` when there was one."""
    at = now or datetime.now(UTC)
    if await queries.delete_setting(conn, queries.BANNER):
        await append_outbox(
            conn,
            topic=BANNER_TOPIC,
            operation="delete",
            entity="banner",
            key={"name": "banner"},
            payload={"message": None, "level": None, "updatedAt": iso_ms(at)},
            source="api",
            created_at=at,
        )


async def publish_banner(engine: AsyncEngine, *, message: str, level: BannerLevel) -> Banner:
    """:func:`set_banner` in a transaction of its own, committed on return."""
    async with transaction(engine) as conn:
        return await set_banner(conn, message=message, level=level)


async def withdraw_banner(engine: AsyncEngine) -> None:
    """:func:`clear_banner` in a transaction of its own, committed on return."""
    async with transaction(engine) as conn:
        await clear_banner(conn)


# -- indexer health ----------------------------------------------------------------------------

HealthCheck = Callable[[], Awaitable[ComponentHealth]]


class _Periodic:
    """A background task of this module: :meth:`step` every :meth:`interval` seconds, a failing
    step logged and retried at the next period; :meth:`start` and :meth:`stop` around it."""

    #: The task's name, also the prefix of its log lines.
    task_name = "predmarket-realtime"
    _task: asyncio.Task[None] | None = None

    def interval(self) -> float:
        raise NotImplementedError

    async def step(self) -> None:
        raise NotImplementedError

    async def _run(self) -> None:
        while True:
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("%s: step failed (%s)", self.task_name, type(e).__name__)
            await asyncio.sleep(self.interval())

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.task_name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class IndexerHealthPublisher(_Periodic):
    """Announces the indexer's liveness on ``health:indexer`` (see the module's docstring).

    ``is_leader`` says whether this process runs the database's indexer: only that one
    publishes, so N workers do not write N copies of each event.
    """

    task_name = "predmarket-realtime-indexer-health"

    def __init__(
        self,
        engine: AsyncEngine,
        check: HealthCheck,
        settings: RealtimeSettings,
        *,
        is_leader: Callable[[], bool] = lambda: True,
        on_commit: Callable[[], object] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._check = check
        self._settings = settings
        self._is_leader = is_leader
        self._on_commit = on_commit
        self._clock = clock
        self.last_status: str | None = None
        self._last_event_at: float | None = None

    @classmethod
    def for_indexer(
        cls,
        engine: AsyncEngine,
        indexer: Indexer,
        settings: RealtimeSettings,
        on_commit: Callable[[], object],
    ) -> IndexerHealthPublisher:
        """The publisher of ``indexer``'s health: active while that indexer holds the lead."""
        return cls(
            engine, indexer.health, settings, is_leader=lambda: indexer.leader, on_commit=on_commit
        )

    async def tick(self) -> int | None:
        """Check once; append an event when one is due. Returns its id (None: nothing sent)."""
        if not self._is_leader():
            return None
        health = await self._check()
        now = self._clock()
        changed = health.status != self.last_status
        since = None if self._last_event_at is None else now - self._last_event_at
        heartbeat = self._settings.indexer_heartbeat_seconds
        if changed:
            if since is not None and since < self._settings.indexer_min_event_seconds:
                return None  # a flapping status: announced at the next tick after the pause
        elif not heartbeat or (since is not None and since < heartbeat):
            return None
        payload: dict[str, JsonValue] = {
            "status": health.status,
            "previousStatus": self.last_status,
            "detail": health.detail,
            "lagBlocks": health.lag_blocks,
            "lagSeconds": health.lag_seconds,
        }
        async with transaction(self._engine) as conn:
            event_id = await append_outbox(
                conn,
                topic=INDEXER_TOPIC,
                operation="update",
                entity="indexer",
                key={"component": "indexer"},
                payload=payload,
                source="outbox",
            )
        self.last_status = health.status
        self._last_event_at = now
        self._on_commit()
        return event_id

    def interval(self) -> float:
        return self._settings.indexer_health_interval_seconds

    async def step(self) -> None:
        await self.tick()


# -- retention ---------------------------------------------------------------------------------

#: Returns the smallest outbox id a follower still needs (None: nothing held back).
RetentionHold = Callable[[AsyncConnection], Awaitable[int | None]]


class Pruner(_Periodic):
    """Deletes outbox rows past the retention window (see the module's docstring)."""

    task_name = "predmarket-realtime-pruner"

    def __init__(
        self,
        engine: AsyncEngine,
        settings: RealtimeSettings,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._engine = engine
        self._settings = settings
        self._clock = clock
        self._holds: list[RetentionHold] = []

    def add_hold(self, hold: RetentionHold) -> None:
        """Never prune an id at or above what ``hold`` returns (e.g. a webhook dispatcher's
        cursor + 1), whatever its age."""
        self._holds.append(hold)

    async def prune_once(self, now: datetime | None = None) -> int:
        """Delete what is past retention now; returns the number of rows deleted."""
        cutoff = (now or self._clock()) - timedelta(seconds=self._settings.retention_seconds)
        total = 0
        while True:
            deleted = await self._prune_batch(cutoff)
            total += deleted
            if deleted < self._settings.batch_size:
                return total

    async def _prune_batch(self, cutoff: datetime) -> int:
        async with transaction(self._engine) as conn:
            if not await queries.try_prune_lock(conn):
                return 0  # another process is pruning
            limit: int | None = None
            for hold in self._holds:
                held = await hold(conn)
                if held is not None:
                    limit = held if limit is None else min(limit, held)
            last = None
            for row in await queries.oldest_events(conn, self._settings.batch_size):
                # Ids follow commit order and times follow ids closely: stop at the first row
                # inside the window, so the deleted range is always a prefix of the outbox.
                if row["created_at"] >= cutoff or (limit is not None and row["id"] >= limit):
                    break
                last = int(row["id"])
            if last is None:
                return 0
            deleted = await queries.delete_through(conn, last)
            horizon = max(last, await queries.pruned_through(conn))
            value: dict[str, Any] = {"prunedThrough": horizon}
            await queries.put_setting(conn, queries.OUTBOX_HORIZON, value, self._clock())
        if deleted:
            log.info("realtime: pruned %d outbox events through %d", deleted, last)
        return deleted

    def interval(self) -> float:
        return self._settings.prune_interval_seconds

    async def step(self) -> None:
        await self.prune_once()


@asynccontextmanager
async def started(worker: _Periodic) -> AsyncIterator[None]:
    """Run a background worker of this module for the duration of the block."""
    worker.start()
    try:
        yield
    finally:
        await worker.stop()
