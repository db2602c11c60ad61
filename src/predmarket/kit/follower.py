"""The life cycle shared by the in-memory read models that follow the outbox (the order books of
``books/cache.py``, the market list of ``markets/cache.py``).

A follower loads its state from one database snapshot, then applies ``outbox WHERE id >
last_seen`` every ``poll_interval_s``, or at once after :meth:`OutboxFollower.notify`. A failing
database is retried with a doubling delay (capped); a full batch is followed by the next one
without sleeping. Subclasses provide :meth:`_load_all` and :meth:`_poll_once`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Final

from sqlalchemy.ext.asyncio import AsyncEngine

STOP_TIMEOUT_S: Final = 10.0
MAX_BACKOFF_S: Final = 5.0


def brief(error: Exception) -> str:
    """The class and first line of an error (SQLAlchemy's messages go on to quote the SQL)."""
    lines = str(error).splitlines()
    return f"{type(error).__name__}: {lines[0][:200]}" if lines else type(error).__name__


class OutboxFollower:
    """Start, stop, wake and drain an outbox follower; see the module's docstring."""

    #: For log lines and the task's name.
    label = "outbox follower"

    def __init__(self, engine: AsyncEngine, *, poll_interval_s: float, batch_size: int) -> None:
        self._engine = engine
        self._poll_interval_s = poll_interval_s
        self._batch_size = batch_size
        self._last_seen = 0
        self._ready = False
        self._lock = asyncio.Lock()  # one reader of the database at a time
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._log = logging.getLogger(f"predmarket.{type(self).__module__.split('.')[1]}")

    # -- what a subclass provides ----------------------------------------------------------------

    async def _load_all(self) -> None:
        """Load the whole state from one snapshot and set ``_ready`` and ``_last_seen``."""
        raise NotImplementedError

    async def _poll_once(self) -> int:
        """Apply the next batch of outbox rows; returns how many rows were read."""
        raise NotImplementedError

    # -- state -----------------------------------------------------------------------------------

    @property
    def last_event_id(self) -> int:
        """The last outbox id applied: the state reflects every event up to it."""
        return self._last_seen

    # -- life cycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Load everything (a failure is retried in the background) and follow the outbox."""
        try:
            await self._load_all()
        except Exception as e:  # the database may not be migrated yet: keep trying
            self._log.warning("%s: initial load failed (%s); retrying", self.label, brief(e))
        self._task = asyncio.create_task(self._run(), name=f"predmarket-{self.label}")

    async def stop(self) -> None:
        """Stop following; a poll in flight finishes first (its queries are never cut off)."""
        self._stopping = True
        self._wake.set()
        task, self._task = self._task, None
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def notify(self) -> None:
        """New outbox rows exist: poll now instead of at the next tick."""
        self._wake.set()

    async def sync(self) -> int:
        """Apply everything the outbox holds now; returns the last event id applied."""
        if not self._ready:
            await self._load_all()
        while await self._poll_once() >= self._batch_size:
            pass
        return self._last_seen

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        self._wake.clear()

    async def _run(self) -> None:
        backoff = self._poll_interval_s
        while not self._stopping:
            try:
                if not self._ready:
                    await self._load_all()
                applied = await self._poll_once()
            except Exception as e:
                self._log.warning("%s: following the outbox failed (%s)", self.label, brief(e))
                backoff = min(max(backoff * 2, self._poll_interval_s), MAX_BACKOFF_S)
                await self._sleep(backoff)
                continue
            backoff = self._poll_interval_s
            if applied < self._batch_size:
                await self._sleep(self._poll_interval_s)
