"""One stream connection: replay from the outbox, then live frames from the broker.

The seam (spec 6.1: "no gap and no duplicate"): the client joins the broker FIRST, at the
broker's position ``P`` — every event up to ``P`` was dispatched before it joined and every
later one will be queued for it. The replay then reads the outbox after the cursor until it
runs dry, which covers everything up to ``P`` (those rows were committed before the broker read
them). The writer sends queued live frames only when their id is above the last id it sent, so
an event both replayed and queued is sent once, and ids are strictly increasing on the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from predmarket.kit.asgi import body_send
from predmarket.realtime import queries
from predmarket.realtime.broker import Broker, Client
from predmarket.realtime.sse import (
    HEADERS,
    HEARTBEAT,
    error_frame,
    event_frame,
    reset_frame,
    retry_hint,
)
from predmarket.settings import RealtimeSettings

log = logging.getLogger("predmarket.realtime")

RETENTION_EXCEEDED: Final = "retention-exceeded"
REPLAY_UNAVAILABLE: Final = "replay_unavailable"

Write = Callable[[bytes], Awaitable[None]]


class StreamResponse(Response):
    """An SSE response driven by :func:`run_stream`; the headers of ``sse.HEADERS``.

    The stream ends when the client disconnects, when :func:`run_stream` returns (an
    ``svc-error``), or when the broker's watchdog drops a client that stopped reading.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        broker: Broker,
        engine: AsyncEngine,
        settings: RealtimeSettings,
        *,
        topics: Sequence[str],
        outbox_topics: frozenset[str],
        cursor: int | None,
        session_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code=200, headers=headers)
        self.broker = broker
        self.engine = engine
        self.settings = settings
        self.topics = tuple(topics)
        self.outbox_topics = outbox_topics
        self.cursor = cursor
        self.session_id = session_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = [(k, v) for k, v in self.raw_headers if k.lower() not in _OWN_HEADERS]
        await send({"type": "http.response.start", "status": 200, "headers": [*HEADERS, *raw]})
        # The start went through every middleware (request id, rate-limit headers); the body
        # chunks skip them (they only act on the start): this is the fan-out's hot path.
        send = body_send(scope, send)
        # Join the broker before anything else (the seam, see the module's docstring).
        client = self.broker.subscribe(self.outbox_topics, session_id=self.session_id)

        async def write(data: bytes) -> None:
            client.writing_since = time.monotonic()
            await send({"type": "http.response.body", "body": data, "more_body": True})
            client.writing_since = None

        writer = asyncio.create_task(
            run_stream(client, self.engine, self.settings, self.topics, self.cursor, write)
        )
        client.writer = writer
        listener = asyncio.create_task(_until_disconnect(receive))
        try:
            await asyncio.wait({writer, listener}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.broker.unsubscribe(client)
            for task in (writer, listener):
                task.cancel()
            for task in (writer, listener):
                with contextlib.suppress(asyncio.CancelledError, OSError, Exception):
                    await task
        if not listener.done() or listener.cancelled():
            # We end the stream (error frame or a dead client): close the body.
            with contextlib.suppress(OSError, Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})


_OWN_HEADERS: Final = frozenset({b"content-type", b"content-length", b"cache-control"})


async def _until_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


async def run_stream(
    client: Client,
    engine: AsyncEngine,
    settings: RealtimeSettings,
    topics: Sequence[str],
    cursor: int | None,
    write: Write,
) -> None:
    """Write the stream of ``client`` until it fails (the connection closes after that)."""
    await write(retry_hint(settings.retry_ms))
    last_sent = 0
    if cursor is not None:
        try:
            last_sent = await replay(engine, client, topics, cursor, settings.batch_size, write)
        except (OSError, asyncio.CancelledError):
            raise
        except Exception as e:  # the database failed mid-replay: tell the client, then close
            log.warning("realtime: replay after %d failed (%s)", cursor, type(e).__name__)
            await write(b"".join(error_frame(REPLAY_UNAVAILABLE, t) for t in topics))
            return
    while True:
        failure = client.failure
        beat = client.beat
        client.beat = False
        chunks = []
        for frame in client.take():  # (empty after a failure that dropped the queue)
            if frame.id > last_sent:
                chunks.append(frame.data)
                last_sent = frame.id
        if beat:
            chunks.append(HEARTBEAT)
        if failure is not None:
            await write(b"".join([*chunks, failure]))
            return
        if chunks:
            await write(b"".join(chunks))
        elif not client.wake.is_set():
            await client.wake.wait()


async def replay(
    engine: AsyncEngine,
    client: Client,
    topics: Sequence[str],
    cursor: int,
    batch_size: int,
    write: Write,
) -> int:
    """Send the subscribed topics' events after ``cursor`` from the outbox; returns the last id
    sent. When retention has deleted events after the cursor: one ``svc-reset`` per topic, and
    the stream goes on live from the client's join position."""
    after = cursor
    while True:
        async with engine.connect() as conn:
            rows = await queries.replay_page(conn, client.topics, after, batch_size)
            # Read after the page: retention deletes rows and moves the horizon in one
            # transaction, so a horizon at or below ``after`` proves the page is whole.
            horizon = await queries.pruned_through(conn)
        if horizon > after:
            resume = max(client.start_position, after)
            await write(
                b"".join(
                    reset_frame(t, cursor, resume_id=resume, reason=RETENTION_EXCEEDED)
                    for t in topics
                )
            )
            return resume
        if rows:
            await write(b"".join(event_frame(row).data for row in rows))
            after = int(rows[-1]["id"])
        if len(rows) < batch_size:
            return after
