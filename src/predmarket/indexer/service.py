"""The indexer: follows the protocol's contract events and keeps the read model current.

- **Checkpoints.** Per contract (the market registry, then every market it created), the node's
  event counter to read next (``indexer_checkpoint.next_start``). The registry comes first: its
  ``MarketCreated`` events discover markets (each gets a checkpoint at 0).
- **One transaction per batch.** A batch is what one block logged for one contract. Its events,
  the read-model changes, ``chain_event`` and ``indexed_tx`` rows, the outbox rows and the moved
  checkpoint commit together. The checkpoint moves first, as a compare-and-set from the batch's
  counter: a batch already applied (a restart, a second indexer) changes nothing, and the
  ``chain_event`` primary key refuses an event twice even if that guard were bypassed.
- **Chain order.** Market batches are applied in block-time order across markets (a merge of the
  per-market pages), so fill ids and ``market.last_fill_id`` follow the chain.
- **Backoff.** A failing node (or database) is retried with jittered exponential backoff, capped.
- **Lag.** :meth:`Indexer.health` reports the batches the node has that are not applied yet and
  the seconds since the last successful poll (``GET /v1/health/ready``, component ``indexer``).
- **One indexer per database.** On PostgreSQL the background loop holds a session-level advisory
  lock; other workers skip indexing and retry the lock now and then (they take over when the
  holder dies). With SQLite the indexer runs in the one process.
- **Listeners.** Callbacks registered with ``on_commit=`` or :meth:`Indexer.add_listener` run
  after every committed batch (the in-memory caches of the app poll the outbox at once instead
  of at their next tick). They are called synchronously and must not block; one that raises is
  logged and the indexer goes on.

See docs/indexer.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.health.schemas import ComponentHealth, ComponentStatus
from predmarket.indexer import queries as q
from predmarket.indexer.apply import (
    Batch,
    BookTops,
    NewMarket,
    apply_market_batch,
    apply_registry_batch,
)
from predmarket.indexer.errors import IndexerError, ReorgDetected
from predmarket.node import MAX_EVENTS_LIMIT, NodeClient, NodeError
from predmarket.node.models import EventPage
from predmarket.settings import IndexerSettings
from predmarket.store.uow import transaction

log = logging.getLogger("predmarket.indexer")
_T = TypeVar("_T")

#: Key of the session-level PostgreSQL advisory lock held by the one indexer of a database.
INDEXER_LOCK_KEY: Final = 0x70726D_696478  # "prm" "idx"
#: How often a worker that is not the indexer tries to take the lock over.
LEADER_RETRY_S: Final = 5.0

#: A callback run after each committed batch (``Indexer(on_commit=[...])``, ``add_listener``).
CommitListener = Callable[[], object]


class _AlreadyApplied(Exception):
    """The checkpoint was not at the batch's counter: someone applied it before us."""


class _PassAborted(Exception):
    """The in-memory checkpoints were stale; the pass stops and the next starts afresh."""


async def discover_registry(node: NodeClient) -> str:
    """The market registry of a devnet node (``GET /devnet/config``); a real node has no such
    route: configure ``PREDMARKET_INDEXER__REGISTRY_ADDRESS`` for it."""
    path = "/devnet/config"
    # The devnet's own route; NodeClient has typed methods for the node's routes only.
    data = await node._request("GET", path)
    registry = data.get("marketRegistry") if isinstance(data, dict) else None
    address = registry.get("address") if isinstance(registry, dict) else None
    if not isinstance(address, str):
        raise IndexerError(f"{node.base_url}{path} names no market registry")
    return address


@dataclass
class _Cursor:
    """A market being read during one pass: its pages, buffered."""

    address: str
    market_id: int
    registry_index: int
    start: int
    buffer: deque[Batch] = field(default_factory=deque)
    more: bool = True


def _batches(address: str, page: EventPage) -> list[Batch]:
    return [Batch(address, b.counter, b.block_hash, b.timestamp, b.events) for b in page.batches()]


class Indexer:
    """Follows one registry and its markets into the database behind ``engine``.

    ``await run_once()`` applies everything the node has now; ``start()``/``stop()`` run the
    polling loop as a background task (the app's lifespan does that).
    """

    def __init__(
        self,
        engine: AsyncEngine,
        node: NodeClient,
        *,
        registry_address: str | None = None,
        confirmations: int = 0,
        poll_interval_s: float = 0.5,
        initial_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        concurrency: int = 8,
        stale_after_s: float = 30.0,
        leader_retry_s: float = LEADER_RETRY_S,
        clock: Callable[[], float] = time.monotonic,
        on_commit: Iterable[CommitListener] = (),
    ) -> None:
        self.engine = engine
        self.node = node
        self.confirmations = confirmations
        self.poll_interval_s = poll_interval_s
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self.stale_after_s = stale_after_s
        self.leader_retry_s = leader_retry_s
        self._registry = registry_address
        self._clock = clock
        self._fetch_slots = asyncio.Semaphore(concurrency)
        # In-memory copies of what this indexer alone writes; reloaded after any surprise.
        self._checkpoints: dict[str, int] | None = None
        self._markets: dict[str, NewMarket] = {}
        self._tops: dict[int, BookTops] = {}
        #: Per contract, the node's event count when it was last read, and what is applied
        #: (kept across reloads: the lag readiness reports).
        self._node_counts: dict[str, int] = {}
        self._applied: dict[str, int] = {}
        # Status.
        self.events_applied = 0
        self.consecutive_failures = 0
        self.last_error: str | None = None
        self.last_success: float | None = None
        self.started_at = clock()
        self.leader = engine.dialect.name != "postgresql"
        self._lock_conn: AsyncConnection | None = None
        self._task: asyncio.Task[None] | None = None
        #: Database units of work in flight (see :meth:`_unit`).
        self._units: set[asyncio.Future[Any]] = set()
        self._stopping = False
        self._wake = asyncio.Event()
        self._listeners: list[CommitListener] = list(on_commit)

    @classmethod
    def from_settings(
        cls,
        engine: AsyncEngine,
        node: NodeClient,
        settings: IndexerSettings,
        *,
        on_commit: Iterable[CommitListener] = (),
    ) -> Indexer:
        return cls(
            engine,
            node,
            registry_address=settings.registry_address,
            confirmations=settings.confirmations,
            poll_interval_s=settings.poll_interval_seconds,
            initial_backoff_s=settings.initial_backoff_seconds,
            max_backoff_s=settings.max_backoff_seconds,
            concurrency=settings.concurrency,
            stale_after_s=settings.stale_after_seconds,
            on_commit=on_commit,
        )

    # -- listeners -----------------------------------------------------------------------------

    def add_listener(self, listener: CommitListener) -> None:
        """Call ``listener()`` after every batch this indexer commits from now on."""
        self._listeners.append(listener)

    def remove_listener(self, listener: CommitListener) -> None:
        """Stop calling ``listener`` (no error when it was not registered)."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _committed(self) -> None:
        for listener in tuple(self._listeners):
            try:
                listener()
            except Exception:  # a listener's failure is its own; the batch is committed
                log.exception("indexer commit listener %r failed", listener)

    # -- one pass ------------------------------------------------------------------------------

    async def run_once(self) -> int:
        """Apply everything the node has now; returns the number of events applied."""
        total = 0
        while True:
            applied, complete = await self._pass()
            total += applied
            if complete and not applied:
                return total

    async def poll(self) -> int:
        """One pass: the registry's new batches, then every market's, in chain order; returns
        the number of events applied."""
        applied, _ = await self._pass()
        return applied

    async def _pass(self) -> tuple[int, bool]:
        """One pass; the flag is False when it stopped early because another indexer had
        applied a batch (the caller should poll again at once)."""
        counter = [0]
        try:
            await self._pass_inner(counter)
        except _PassAborted:
            return counter[0], False
        return counter[0], True

    async def _pass_inner(self, applied: list[int]) -> None:
        registry = await self._registry_address()
        checkpoints = await self._load(registry)
        # The registry first: the markets it creates are followed in the same pass.
        while True:
            page = await self.node.contract_events(registry, checkpoints[registry])
            self._node_counts[registry] = page.next_start
            batches = _batches(registry, page)
            for batch in batches:
                if not await self._confirmed(batch):
                    return
                applied[0] += await self._apply(batch, None)
            if len(batches) < MAX_EVENTS_LIMIT:
                break
        await self._poll_markets(checkpoints, applied)

    async def _poll_markets(self, checkpoints: dict[str, int], applied: list[int]) -> None:
        cursors = [
            _Cursor(m.address, m.id, m.registry_index, checkpoints[m.address])
            for m in self._markets.values()
        ]
        results = await asyncio.gather(*(self._fetch(c) for c in cursors), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        # Merge the markets' batches by block time (then registry order, then counter: batches
        # of one block keep a stable order), so ids the read model assigns follow the chain.
        heap: list[tuple[int, int, int, int]] = []
        for i, c in enumerate(cursors):
            if c.buffer:
                head = c.buffer[0]
                heap.append((head.timestamp, c.registry_index, head.counter, i))
        heapq.heapify(heap)
        while heap:
            _, _, _, i = heapq.heappop(heap)
            cursor = cursors[i]
            batch = cursor.buffer[0]
            if not await self._confirmed(batch):
                break  # everything after it in chain order is newer still
            cursor.buffer.popleft()
            applied[0] += await self._apply(batch, cursor)
            if not cursor.buffer and cursor.more:
                await self._fetch(cursor)
            if cursor.buffer:
                head = cursor.buffer[0]
                heapq.heappush(heap, (head.timestamp, cursor.registry_index, head.counter, i))

    async def _fetch(self, cursor: _Cursor) -> None:
        async with self._fetch_slots:
            page = await self.node.contract_events(cursor.address, cursor.start)
        self._node_counts[cursor.address] = page.next_start
        batches = _batches(cursor.address, page)
        cursor.buffer.extend(batches)
        cursor.start = page.next_start
        cursor.more = len(batches) == MAX_EVENTS_LIMIT

    async def _confirmed(self, batch: Batch) -> bool:
        """With ``confirmations`` set, is the batch's block deep enough in the main chain?"""
        if self.confirmations <= 0:
            return True
        status = await self.node.tx_status(batch.events[0].tx_id)
        if status.type == "Confirmed" and status.block_hash != batch.block_hash:
            raise ReorgDetected(
                f"events of {batch.contract} #{batch.counter} came from block "
                f"{batch.block_hash}, but their tx is now in {status.block_hash}"
            )
        if status.type != "Confirmed":
            return False
        return (status.chain_confirmations or 0) >= self.confirmations

    async def _unit(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run a database unit of work so that cancelling the loop cannot interrupt it.

        A transaction cancelled half-way can leave its connection checked out with the
        transaction open (on SQLite: the database write lock held until the garbage collector
        finds it). Shielded, the unit finishes — commit or rollback — and :meth:`stop` waits for
        it before returning.
        """
        task = asyncio.ensure_future(work)
        self._units.add(task)
        task.add_done_callback(self._units.discard)
        return await asyncio.shield(task)

    async def _apply(self, batch: Batch, market: _Cursor | None) -> int:
        return await self._unit(self._apply_unit(batch, market))

    async def _apply_unit(self, batch: Batch, market: _Cursor | None) -> int:
        now = datetime.now(UTC)
        created: list[NewMarket] = []
        tops: BookTops | None = None
        try:
            async with transaction(self.engine) as conn:
                claimed = await q.claim_batch(
                    conn,
                    contract=batch.contract,
                    counter=batch.counter,
                    block_hash=batch.block_hash,
                    block_at=batch.block_at,
                    now=now,
                )
                if not claimed:
                    raise _AlreadyApplied
                if market is None:
                    assert self._registry is not None
                    created = await apply_registry_batch(
                        conn, batch, registry=self._registry, now=now
                    )
                else:
                    tops = self._tops.pop(market.market_id, None)
                    if tops is None:
                        tops = await BookTops.load(conn, market.market_id)
                    await apply_market_batch(
                        conn, batch, market_id=market.market_id, tops=tops, now=now
                    )
        except _AlreadyApplied:
            # Another indexer is (or was) at work: start over from what the database says.
            log.warning(
                "batch %s #%d was already applied; reloading", batch.contract, batch.counter
            )
            self._forget()
            raise _PassAborted from None
        # Committed: the in-memory copies follow.
        assert self._checkpoints is not None
        self._checkpoints[batch.contract] = self._applied[batch.contract] = batch.counter + 1
        if market is not None and tops is not None:
            self._tops[market.market_id] = tops
        for m in created:
            self._markets[m.address] = m
            self._checkpoints[m.address] = self._applied[m.address] = 0
        self.events_applied += len(batch.events)
        self._committed()
        return len(batch.events)

    # -- state ---------------------------------------------------------------------------------

    async def _registry_address(self) -> str:
        if self._registry is None:
            self._registry = await discover_registry(self.node)
            log.info("following the market registry %s", self._registry)
        return self._registry

    async def _load(self, registry: str) -> dict[str, int]:
        if self._checkpoints is None:
            await self._unit(self._load_unit(registry))
        assert self._checkpoints is not None
        return self._checkpoints

    async def _load_unit(self, registry: str) -> None:
        if self._checkpoints is None:
            async with transaction(self.engine) as conn:
                await q.ensure_checkpoint(conn, registry, datetime.now(UTC))
            async with self.engine.connect() as conn:
                checkpoints = await q.load_checkpoints(conn)
                markets = await q.load_markets(conn, registry)
            self._markets = {
                m.address: NewMarket(m.id, m.address, m.registry_index) for m in markets
            }
            for m in markets:
                checkpoints.setdefault(m.address, 0)
            self._checkpoints = checkpoints
            self._applied.update(checkpoints)
            self._tops.clear()

    def _forget(self) -> None:
        self._checkpoints = None
        self._markets = {}
        self._tops.clear()

    @property
    def lag_batches(self) -> int:
        """Batches the node had, when last read, that are not applied yet."""
        done = self._applied
        return sum(max(0, n - done.get(a, 0)) for a, n in self._node_counts.items())

    # -- the background loop -------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Run the polling loop as a background task of the current event loop."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._loop(), name="predmarket-indexer")

    def wake(self) -> None:
        """Poll now instead of at the end of the current wait."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop the loop (a batch in flight finishes first) and release the lock."""
        self._stopping = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # A batch the loop was applying when it was cancelled finishes (or rolls back) first.
        while self._units:
            await asyncio.gather(*self._units, return_exceptions=True)
        await self._release_leadership()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        self._wake.clear()

    def backoff_delay(self) -> float:
        """Seconds to wait after the current run of failures (jittered down by up to half)."""
        exponent = min(self.consecutive_failures - 1, 32)
        base = min(self.max_backoff_s, self.initial_backoff_s * 2.0**exponent)
        return base * (0.5 + random.random() / 2)

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                if not await self._lead():
                    await self._sleep(self.leader_retry_s)
                    continue
                applied, complete = await self._pass()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the node, the database or an event: back off and retry
                self.consecutive_failures += 1
                self.last_error = type(e).__name__
                self._forget()
                delay = self.backoff_delay()
                level = logging.WARNING if isinstance(e, NodeError) else logging.ERROR
                log.log(
                    level,
                    "indexer poll failed (%d in a row), retrying in %.1f s: %s",
                    self.consecutive_failures,
                    delay,
                    e,
                    exc_info=not isinstance(e, NodeError),
                )
                await self._release_leadership_if_broken()
                await self._sleep(delay)
                continue
            if self.consecutive_failures:
                log.info("indexer recovered after %d failures", self.consecutive_failures)
            self.consecutive_failures = 0
            self.last_error = None
            self.last_success = self._clock()
            if complete and not applied:
                await self._sleep(self.poll_interval_s)

    # -- leadership (PostgreSQL) ---------------------------------------------------------------

    async def _lead(self) -> bool:
        """Hold the database's indexer lock (always true on SQLite)."""
        if self.engine.dialect.name != "postgresql":
            return True
        if self._lock_conn is not None:
            # The lock lives as long as its session: make sure the session still does.
            await self._release_leadership_if_broken()
            if self._lock_conn is not None:
                return True
        conn = await self.engine.connect()
        try:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            got = await conn.scalar(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": INDEXER_LOCK_KEY}
            )
        except BaseException:
            await conn.close()
            raise
        if not got:
            await conn.close()
            self.leader = False
            return False
        self._lock_conn = conn
        self.leader = True
        self._forget()  # another indexer may have run until now
        log.info("this process is the database's indexer")
        return True

    async def _release_leadership_if_broken(self) -> None:
        conn = self._lock_conn
        if conn is None:
            return
        try:
            await conn.execute(text("SELECT 1"))
        except Exception:
            # The session (and with it the lock) is gone; take it again on the next round.
            self._lock_conn = None
            self.leader = False
            with contextlib.suppress(Exception):
                await conn.invalidate()

    async def _release_leadership(self) -> None:
        conn, self._lock_conn = self._lock_conn, None
        if conn is None:
            return
        try:
            await conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": INDEXER_LOCK_KEY})
            await conn.close()
        except Exception:
            # Never return a connection that may still hold the lock to the pool.
            with contextlib.suppress(Exception):
                await conn.invalidate()
        self.leader = False

    async def _lock_held_elsewhere(self) -> bool:
        async with self.engine.connect() as conn:
            held = await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND database = (SELECT oid FROM pg_database WHERE datname = "
                    "current_database()) AND classid = :hi AND objid = :lo AND objsubid = 1"
                ),
                {"hi": INDEXER_LOCK_KEY >> 32, "lo": INDEXER_LOCK_KEY & 0xFFFFFFFF},
            )
        return bool(held)

    # -- health --------------------------------------------------------------------------------

    async def health(self) -> ComponentHealth:
        """The ``indexer`` component of readiness: lag in batches and seconds since the last
        successful poll; degraded while failing or behind, down when stale or stopped."""
        if self._task is not None and self._task.done():
            return ComponentHealth(status="down", detail="stopped")
        if not self.leader:
            if await self._lock_held_elsewhere():
                return ComponentHealth(status="up", detail="indexed by another worker")
            return ComponentHealth(status="down", detail="no indexer holds the database lock")
        since = self.last_success if self.last_success is not None else self.started_at
        lag_seconds = round(max(0.0, self._clock() - since), 3)
        lag_blocks = self.lag_batches
        if self.consecutive_failures:
            status: ComponentStatus = "down" if lag_seconds > self.stale_after_s else "degraded"
            return ComponentHealth(
                status=status,
                detail=f"retrying after {self.last_error}",
                lag_blocks=lag_blocks,
                lag_seconds=lag_seconds,
            )
        if self.last_success is None:
            return ComponentHealth(
                status="degraded", detail="starting", lag_blocks=lag_blocks, lag_seconds=lag_seconds
            )
        status = "degraded" if lag_blocks else "up"
        return ComponentHealth(status=status, lag_blocks=lag_blocks, lag_seconds=lag_seconds)


async def run_once(
    engine: AsyncEngine,
    node: NodeClient,
    *,
    registry_address: str | None = None,
    confirmations: int = 0,
) -> int:
    """Apply every event the node has now (``predmarket index --once``, tests); returns how
    many events were applied."""
    indexer = Indexer(engine, node, registry_address=registry_address, confirmations=confirmations)
    return await indexer.run_once()
