"""Real HTTP for the realtime tests: the app under uvicorn on a free loopback port, an SSE
reader over httpx's streaming responses, and outbox writes as the indexer makes them."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.settings import RealtimeSettings
from predmarket.store.uow import append_outbox, transaction


@asynccontextmanager
async def live_server(app: FastAPI) -> AsyncIterator[str]:
    """Serve ``app`` (lifespan included) on 127.0.0.1:<free port>; yields the base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(500):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        if not server.started:
            await task  # raises the start-up failure
            raise AssertionError("uvicorn did not start")
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


@dataclass
class Frame:
    """One SSE message: a comment (heartbeat), a retry hint, or an event with data."""

    event: str | None = None
    id: str | None = None
    data: Any = None
    comments: list[str] = field(default_factory=list)
    retry: int | None = None


class SSEStream:
    """Frames read from an open streaming response."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self, timeout: float = 5.0) -> Frame:
        """The next message (blank-line terminated)."""
        return await asyncio.wait_for(self._read(), timeout)

    async def _read(self) -> Frame:
        frame = Frame()
        seen = False
        data: list[str] = []
        async for line in self._lines:
            if line == "":
                if seen:
                    if data:
                        frame.data = json.loads("\n".join(data))
                    return frame
                continue
            seen = True
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "":
                frame.comments.append(value)
            elif name == "event":
                frame.event = value
            elif name == "id":
                frame.id = value
            elif name == "data":
                data.append(value)
            elif name == "retry":
                frame.retry = int(value)
        raise EOFError("the stream ended")

    async def next_event(self, timeout: float = 5.0) -> Frame:
        """The next frame that is not a heartbeat or a retry hint."""
        async with asyncio.timeout(timeout):
            while True:
                frame = await self._read()
                if frame.event is not None:
                    return frame

    async def events(self, count: int, timeout: float = 10.0) -> list[Frame]:
        return [await self.next_event(timeout) for _ in range(count)]


@asynccontextmanager
async def open_stream(
    client: httpx.AsyncClient, params: dict[str, str], headers: dict[str, str] | None = None
) -> AsyncIterator[SSEStream]:
    """``GET /v1/realtime/stream`` and assert it opened as an event stream."""
    async with client.stream(
        "GET", "/v1/realtime/stream", params=params, headers=headers or {}
    ) as response:
        if response.status_code != 200:
            await response.aread()
            raise AssertionError(f"stream refused: {response.status_code} {response.text}")
        yield SSEStream(response)


#: Shortened timings so heartbeats and polls show within a test.
TEST_REALTIME = RealtimeSettings(heartbeat_seconds=0.3, poll_interval_ms=50, batch_size=50)
OPERATOR_TOKEN = "operator-token-for-tests-0123456789"
_serial = itertools.count(1)


def market_address(n: int | None = None) -> str:
    """A syntactically valid contract address (base58, 45 characters)."""
    n = next(_serial) if n is None else n
    return "2" + "A" * 40 + f"{n:04d}".replace("0", "z")


async def append(engine: AsyncEngine, topic: str, n: int = 1, **payload: object) -> list[int]:
    """Append ``n`` events to ``topic``, each in its own transaction; returns their ids."""
    ids = []
    for i in range(n):
        async with transaction(engine) as conn:
            ids.append(
                await append_outbox(
                    conn,
                    topic=topic,
                    operation="insert",
                    entity="order",
                    key={"orderId": i},
                    payload={"n": i, **payload},
                    source="indexer",
                )
            )
    return ids


async def caught_up(app: FastAPI, event_id: int, timeout: float = 5.0) -> None:
    """Wait until the app's broker has dispatched ``event_id`` (a client that connects after
    that receives only later events live)."""
    async with asyncio.timeout(timeout):
        while app.state.broker.position < event_id:
            await asyncio.sleep(0.01)
