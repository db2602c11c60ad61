"""The per-process broker: follows the outbox and fans each event out to the stream clients.

- **Following.** One task reads ``outbox WHERE id > position ORDER BY id`` (the outbox's ordering
  guarantee, docs/data-model.md, makes that miss nothing) and dispatches each row to the clients
  subscribed to its topic. It reads when woken and at the latest every ``poll_interval_ms``.
- **Wake-ups.** :meth:`Broker.notify` (in-process: the indexer's commit listener, the banner
  route); on PostgreSQL a ``LISTEN predmarket_outbox`` connection, fed by a trigger on the outbox
  that PostgreSQL delivers at commit (migration 0004), so an event committed by any process
  reaches the brokers of every worker. The poll is the fallback for a lost notification.
- **Fan-out.** A row with subscribers is serialized once (``sse.event_frame``); each client
  gets a reference to the same bytes in a bounded queue, and its writer sends what has queued
  in one write.
- **Revoked sessions.** A stream that follows ``user:`` topics is tied to the session that
  opened it; when that session's revocation event (entity ``session``, operation ``update``)
  passes through the broker, the stream gets ``svc-error`` ``session_revoked`` and is closed.
  Every worker's broker reads the whole outbox, so this holds across processes.
- **Slow consumers.** A client whose queue reaches ``client_queue_size`` frames loses the queue
  and gets ``svc-error`` ``slow_consumer`` then is closed; a client whose socket accepts nothing
  for ``write_timeout_seconds`` is dropped. Memory per client is bounded either way.

One broker per process lives on ``app.state.broker``; it holds no state of its own that is not
in the database (a restart resumes from the outbox).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Final

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.kit.follower import brief
from predmarket.realtime import queries
from predmarket.realtime.sse import Frame, error_frame, event_frame
from predmarket.settings import RealtimeSettings

log = logging.getLogger("predmarket.realtime")

#: The PostgreSQL notification channel the outbox trigger notifies (migration 0004).
CHANNEL: Final = "predmarket_outbox"
_STOP_TIMEOUT_S: Final = 10.0
_MAX_BACKOFF_S: Final = 5.0
_LISTEN_PING_S: Final = 30.0
_SWEEP_S: Final = 1.0
#: The outbox entity of session events (``predmarket.auth.sessions``) and the error code of a
#: stream closed because its session was revoked.
SESSION_ENTITY: Final = "session"
SESSION_REVOKED: Final = "session_revoked"


class Client:
    """One stream connection's subscription: its topics, queued frames and state."""

    __slots__ = (
        "beat",
        "failure",
        "frames",
        "limit",
        "session_id",
        "start_position",
        "topics",
        "wake",
        "writer",
        "writing_since",
    )

    def __init__(
        self,
        topics: frozenset[str],
        limit: int,
        start_position: int,
        session_id: str | None = None,
    ) -> None:
        self.topics = topics
        #: The session a private stream depends on (closed when it is revoked), else None.
        self.session_id = session_id
        self.limit = limit
        #: Every event up to this id was dispatched before the client joined; later ones queue.
        self.start_position = start_position
        self.frames: list[Frame] = []
        self.wake = asyncio.Event()
        #: A heartbeat is due (set by the broker's one heartbeat timer for every client).
        self.beat = False
        #: Set when the client must be closed: the ``svc-error`` frame to send last.
        self.failure: bytes | None = None
        #: The task writing to the socket, and since when its current write has been blocked.
        self.writer: asyncio.Task[object] | None = None
        self.writing_since: float | None = None

    def push(self, frame: Frame) -> None:
        if self.failure is not None:
            return
        if len(self.frames) >= self.limit:
            self.frames = []  # release the backlog at once: memory stays bounded
            self.failure = error_frame("slow_consumer", frame.topic)
        else:
            self.frames.append(frame)
        self.wake.set()

    def take(self) -> list[Frame]:
        frames, self.frames = self.frames, []
        self.wake.clear()
        return frames

    def fail(self, code: str, topic: str, *, drop_queue: bool = True) -> None:
        """End the stream with ``svc-error`` ``code``: at once (``drop_queue``), or after the
        frames already queued (a revoked session still sees its revocation event)."""
        if self.failure is None:
            if drop_queue:
                self.frames = []
            self.failure = error_frame(code, topic)
        self.wake.set()


class Broker:
    """See the module's docstring."""

    def __init__(
        self,
        engine: AsyncEngine,
        settings: RealtimeSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._settings = settings
        self._clock = clock
        self._poll_s = settings.poll_interval_ms / 1000
        self._batch = settings.batch_size
        self._by_topic: dict[str, set[Client]] = {}
        self._by_session: dict[str, set[Client]] = {}
        self._clients: set[Client] = set()
        self.position = 0
        self.ready = False
        self._wake = asyncio.Event()
        self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self.listening = False
        #: Events dispatched and frames delivered to client queues (metrics, tests).
        self.events_dispatched = 0

    # -- clients -----------------------------------------------------------------------------

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def subscribe(self, topics: frozenset[str], *, session_id: str | None = None) -> Client:
        """Register a client: it receives every event of ``topics`` after :attr:`position`;
        with ``session_id`` it is closed when that session is revoked."""
        client = Client(topics, self._settings.client_queue_size, self.position, session_id)
        self._clients.add(client)
        for topic in topics:
            self._by_topic.setdefault(topic, set()).add(client)
        if session_id is not None:
            self._by_session.setdefault(session_id, set()).add(client)
        return client

    def unsubscribe(self, client: Client) -> None:
        self._clients.discard(client)
        if client.session_id is not None:
            sessions = self._by_session.get(client.session_id)
            if sessions is not None:
                sessions.discard(client)
                if not sessions:
                    del self._by_session[client.session_id]
        for topic in client.topics:
            subs = self._by_topic.get(topic)
            if subs is not None:
                subs.discard(client)
                if not subs:
                    del self._by_topic[topic]

    # -- life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Find the outbox's end (retried in the background on failure) and follow it."""
        with contextlib.suppress(Exception):
            await self._init_position()
        self._tasks.append(asyncio.create_task(self._run(), name="predmarket-realtime-broker"))
        self._tasks.append(asyncio.create_task(self._sweep(), name="predmarket-realtime-sweep"))
        self._tasks.append(
            asyncio.create_task(self._heartbeat(), name="predmarket-realtime-heartbeat")
        )
        if self._engine.dialect.name == "postgresql":
            self._tasks.append(
                asyncio.create_task(self._listen(), name="predmarket-realtime-listen")
            )

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        for client in tuple(self._clients):
            client.fail("shutting_down", next(iter(client.topics), ""))
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, _STOP_TIMEOUT_S)

    def notify(self) -> None:
        """New outbox rows are committed: read them now."""
        self._wake.set()

    async def _init_position(self) -> None:
        async with self._engine.connect() as conn:
            self.position = await queries.last_event_id(conn)
        self.ready = True
        log.info("realtime broker: following the outbox from event %d", self.position)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        self._wake.clear()

    async def _run(self) -> None:
        backoff = self._poll_s
        while not self._stopping:
            try:
                if not self.ready:
                    await self._init_position()
                read = await self.poll_once()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("realtime broker: reading the outbox failed (%s)", brief(e))
                backoff = min(max(backoff * 2, self._poll_s), _MAX_BACKOFF_S)
                await self._sleep(backoff)
                continue
            backoff = self._poll_s
            if read < self._batch:
                await self._sleep(self._poll_s)

    async def poll_once(self) -> int:
        """Read and dispatch the next batch of events; returns how many rows were read."""
        async with self._engine.connect() as conn:
            rows = await queries.events_after(conn, self.position, self._batch)
        # From here to the end nothing awaits: a client joining sees a clean position.
        by_topic = self._by_topic
        revoked: list[Client] = []
        for row in rows:
            subs = by_topic.get(row["topic"])
            if subs:
                frame = event_frame(row)
                for client in subs:
                    client.push(frame)
            if self._by_session and row["entity"] == SESSION_ENTITY:
                revoked += self._revoked_by(row)
        # After the whole batch: a revoke-all's events (one transaction) all reach its streams.
        for client in revoked:
            client.fail(SESSION_REVOKED, min(client.topics, default=""), drop_queue=False)
        if rows:
            self.position = int(rows[-1]["id"])
            self.events_dispatched += len(rows)
        return len(rows)

    def _revoked_by(self, row: RowMapping) -> tuple[Client, ...]:
        """The streams of the session a session event revokes (none for a sign-in)."""
        key = row["key"]
        session_id = key.get("sessionId") if isinstance(key, dict) else None
        if row["operation"] != "update" or not isinstance(session_id, str):
            return ()
        return tuple(self._by_session.get(session_id, ()))

    async def _heartbeat(self) -> None:
        """One timer for every client: each writer adds a comment line at its next write."""
        while not self._stopping:
            await asyncio.sleep(self._settings.heartbeat_seconds)
            for client in tuple(self._clients):
                client.beat = True
                client.wake.set()

    async def _sweep(self) -> None:
        """Drop clients whose socket has accepted nothing for ``write_timeout_seconds``."""
        timeout = self._settings.write_timeout_seconds
        while not self._stopping:
            await asyncio.sleep(_SWEEP_S)
            now = self._clock()
            for client in tuple(self._clients):
                since = client.writing_since
                if since is not None and now - since > timeout and client.writer is not None:
                    log.info(
                        "realtime: dropping a client that accepted nothing for %.0f s", timeout
                    )
                    client.writing_since = None
                    client.writer.cancel()

    async def _listen(self) -> None:
        """``LISTEN`` on a connection of its own (not a pool slot); reconnects when it breaks."""
        import asyncpg  # type: ignore[import-untyped]

        dsn = self._engine.url.set(drivername="postgresql", query={}).render_as_string(
            hide_password=False
        )
        backoff = 0.5
        while not self._stopping:
            conn = None
            try:
                conn = await asyncpg.connect(dsn, timeout=10)
                await conn.add_listener(CHANNEL, self._on_notification)
                self.listening = True
                backoff = 0.5
                self.notify()  # anything committed while nobody listened
                while not self._stopping:
                    await asyncio.sleep(_LISTEN_PING_S)
                    await asyncio.wait_for(conn.execute("SELECT 1"), 10)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("realtime broker: LISTEN connection failed (%s)", brief(e))
            finally:
                self.listening = False
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(conn.close(), 5)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _MAX_BACKOFF_S)

    def _on_notification(self, *_args: object) -> None:
        self._wake.set()


@asynccontextmanager
async def running(engine: AsyncEngine, settings: RealtimeSettings) -> AsyncIterator[Broker]:
    """``app.state.broker = await stack.enter_async_context(running(engine, settings))``."""
    broker = Broker(engine, settings)
    await broker.start()
    try:
        yield broker
    finally:
        await broker.stop()
