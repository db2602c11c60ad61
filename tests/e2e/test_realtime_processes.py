"""The realtime stream across processes, over real HTTP: the app under uvicorn in child
processes. Two workers on one PostgreSQL database: an event committed through one (or by any
other process) reaches a subscriber of the other through LISTEN/NOTIFY. A service killed
mid-stream and restarted: reconnecting with the last id loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.store import migrate
from predmarket.store.engine import create_engine
from predmarket.store.uow import append_outbox, transaction

TOKEN = "operator-token-for-tests-0123456789"
OPERATOR = {"x-svc-operator-token": TOKEN}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def app_process(
    database_url: str, data_dir: Path, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``uvicorn --factory predmarket.app:create_app`` in a child process; yields its URL and
    the process."""
    port = _free_port()
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
    child_env.update(
        PREDMARKET_DATABASE_URL=database_url,
        PREDMARKET_DATA_DIR=str(data_dir),
        PREDMARKET_NODE_URL="http://127.0.0.1:9",
        PREDMARKET_INDEXER__ENABLED="false",
        PREDMARKET_OPERATOR_TOKEN=TOKEN,
        PREDMARKET_REALTIME__HEARTBEAT_SECONDS="0.5",
        PREDMARKET_LIMITS__STREAM_CONNECTIONS_PER_MINUTE="100000",
        PREDMARKET_LIMITS__ANONYMOUS_WRITES_PER_MINUTE="100000",
        **env,
    )
    command = [sys.executable, "-m", "uvicorn", "--factory", "predmarket.app:create_app"]
    proc = subprocess.Popen(
        [
            *command,
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--timeout-graceful-shutdown",
            "1",
        ],
        env=child_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                raise AssertionError(f"the app did not start:\n{out}")
            time.sleep(0.1)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout:
            proc.stdout.close()


@asynccontextmanager
async def stream(
    url: str, topics: str, last_id: str | None = None
) -> AsyncIterator[AsyncIterator[tuple[str, str | None, dict[str, object]]]]:
    """An SSE reader yielding ``(event, id, data)`` of each non-comment frame."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    timeout = httpx.Timeout(10, read=None)
    async with (
        httpx.AsyncClient(base_url=url, timeout=timeout) as client,
        client.stream(
            "GET", "/v1/realtime/stream", params={"topics": topics}, headers=headers
        ) as response,
    ):
        assert response.status_code == 200

        async def frames() -> AsyncIterator[tuple[str, str | None, dict[str, object]]]:
            event: str | None = None
            event_id: str | None = None
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: ") and event is not None:
                    yield event, event_id, json.loads(line[6:])
                    event = event_id = None

        yield frames()


async def _append(engine: AsyncEngine, topic: str, n: int) -> list[int]:
    ids = []
    for i in range(n):
        async with transaction(engine) as conn:
            ids.append(
                await append_outbox(
                    conn, topic=topic, operation="insert", entity="order", key={"orderId": i},
                    payload={}, source="indexer",
                )
            )  # fmt: skip
    return ids


async def _take(
    frames: AsyncIterator[tuple[str, str | None, dict[str, object]]], n: int
) -> list[int]:
    out = []
    async with asyncio.timeout(15):
        async for event, event_id, _ in frames:
            assert event == "svc"
            out.append(int(event_id or 0))
            if len(out) == n:
                return out
    raise AssertionError("the stream ended")


@pytest.mark.skipif(
    not os.environ.get("PREDMARKET_TEST_DATABASE_URL"), reason="needs PostgreSQL (workers)"
)
async def test_two_workers_deliver_each_others_events(
    empty_database: object, tmp_path: Path
) -> None:
    with empty_database() as url:  # type: ignore[operator]
        migrate.upgrade(url)
        engine = create_engine(url)
        # Polling every 60 s: only PostgreSQL's notification can deliver within the test.
        slow_poll = {"PREDMARKET_REALTIME__POLL_INTERVAL_MS": "60000"}
        try:
            with (
                app_process(url, tmp_path / "a", **slow_poll) as (a, _),
                app_process(url, tmp_path / "b", **slow_poll) as (b, _),
            ):
                topic = "market:2AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAzzz1:orders"
                async with (
                    stream(a, f"{topic},settings:banner") as on_a,
                    stream(b, "settings:banner") as on_b,
                ):
                    await asyncio.sleep(0.5)
                    # Through worker B's API: worker A's subscriber gets it, and B's own.
                    async with httpx.AsyncClient(base_url=b) as client:
                        put = await client.put(
                            "/v1/admin/banner", json={"message": "hi"}, headers=OPERATOR
                        )
                        assert put.status_code == 200, put.text
                    started = time.monotonic()
                    [from_b] = await _take(on_a, 1)
                    assert [from_b] == await _take(on_b, 1)
                    # From a third process (this test, like an indexer in another worker).
                    written = await _append(engine, topic, 20)
                    assert await _take(on_a, 20) == written
                    assert time.monotonic() - started < 10  # far below the 60 s poll
        finally:
            await engine.dispose()


async def test_killed_mid_stream_then_resumed_without_loss_or_duplicate(
    tmp_path: Path, empty_database: object
) -> None:
    with empty_database() as url:  # type: ignore[operator]
        migrate.upgrade(url)
        engine = create_engine(url)
        topic = "market:2AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAzzz2:fills"
        try:
            with app_process(url, tmp_path / "data") as (api, proc):
                async with stream(api, topic) as frames:
                    await asyncio.sleep(0.3)
                    first = await _append(engine, topic, 10)
                    seen = await _take(frames, 6)
                    # Kill the service mid-stream (no graceful stop).
                    proc.kill()
                    proc.wait()
            assert seen == first[:6]
            # Written while the service is down.
            while_down = await _append(engine, topic, 5)
            with app_process(url, tmp_path / "data") as (api, _):
                async with stream(api, topic, last_id=str(seen[-1])) as frames:
                    resumed = await _take(frames, 4 + 5)
                    after = await _append(engine, topic, 3)
                    live = await _take(frames, 3)
            assert resumed == first[6:] + while_down
            assert live == after
        finally:
            await engine.dispose()
