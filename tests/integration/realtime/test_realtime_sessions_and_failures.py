"""The stream over real HTTP, beyond the public topics: a wallet's own ``user:`` topics with a
bearer token and with the browser's cookie, the session events of the ``api`` source, and how
a stream ends when something fails: realtime switched off (503), a database failure during
replay (``svc-error replay_unavailable``), a consumer too slow for its queue (``svc-error
slow_consumer``) and a client that stops reading altogether (dropped)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi import FastAPI
from realtime_sse import (
    TEST_REALTIME,
    SSEStream,
    append,
    caught_up,
    live_server,
    market_address,
    open_stream,
)
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import client_of, new_key, sign_in, wallet_of
from predmarket.app import create_app
from predmarket.settings import Settings
from predmarket.store.tables.outbox import outbox

pytestmark = pytest.mark.db

#: Padding that makes each event large enough to fill socket buffers quickly.
PAD = "x" * 20_000


async def settle(app: FastAPI, db: AsyncEngine) -> None:
    """Wait until the broker has dispatched everything committed so far, so that a stream
    opened now receives only what is appended later."""
    async with db.connect() as conn:
        last = (await conn.execute(select(func.max(outbox.c.id)))).scalar() or 0
    await caught_up(app, int(last))


async def session_events(stream: SSEStream, count: int) -> list[dict[str, Any]]:
    """The next ``count`` session notifications (other events are skipped)."""
    found: list[dict[str, Any]] = []
    while len(found) < count:
        frame = await stream.next_event()
        if frame.data.get("entity") == "session":
            found.append(frame.data)
    return found


class TestUserTopics:
    async def test_own_topics_over_bearer_and_over_the_cookie(
        self, base_url: str, http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
    ) -> None:
        key = new_key()
        async with httpx.AsyncClient(base_url=base_url, timeout=10) as browser:
            cookie = await sign_in(browser, key, bearer=False)  # svc_session in the jar
            bearer = await sign_in(http, key)
            address = cookie.address
            orders = f"user:{address}:orders"
            topics = {"topics": f"{orders},user:{address}:notifications"}
            await settle(app, db)
            async with (
                open_stream(browser, topics) as by_cookie,
                open_stream(http, topics, bearer.headers) as by_bearer,
            ):
                await by_cookie.next()  # retry hints
                await by_bearer.next()
                ids = await append(db, orders, 2)
                await append(db, f"user:{wallet_of(new_key())[0]}:orders")  # not theirs: not sent
                revoked = await http.delete(
                    f"/v1/auth/sessions/{cookie.session_id}", headers=bearer.headers
                )
                assert revoked.status_code == 204
                received = [await s.events(3) for s in (by_cookie, by_bearer)]
                # The revoked session's stream ends after the revocation event; the other
                # session's stream goes on.
                closing = await by_cookie.next_event()
                with pytest.raises(EOFError):
                    await by_cookie.next(timeout=5)
                later = await append(db, orders, 1)
                assert int((await by_bearer.next_event()).id or 0) == later[0]
        assert closing.event == "svc-error"
        assert closing.data == {
            "code": "session_revoked",
            "topic": min(topics["topics"].split(",")),
        }
        for frames in received:
            assert [int(f.id or 0) for f in frames[:2]] == ids
            assert {f.data["topic"] for f in frames[:2]} == {orders}
            note = frames[2].data
            assert note["topic"] == f"user:{address}:notifications"
            assert (note["entity"], note["operation"], note["source"]) == (
                "session",
                "update",
                "api",
            )
            assert note["key"] == {"sessionId": cookie.session_id}
            assert set(note["payload"]) == {"revokedAt"}

    async def test_sign_in_and_revoke_all_are_announced_without_secrets(
        self, base_url: str, http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
    ) -> None:
        key = new_key()
        first = await sign_in(http, key)
        await settle(app, db)
        topic = f"user:{first.address}:notifications"
        async with open_stream(http, {"topics": topic}, first.headers) as stream:
            await stream.next()
            async with httpx.AsyncClient(base_url=base_url, timeout=10) as browser:
                second = await sign_in(browser, key, bearer=False)
            [opened] = await session_events(stream, 1)
            r = await http.post("/v1/auth/sessions/revoke-all", headers=first.headers)
            assert r.status_code == 204
            revoked = await session_events(stream, 2)
            closing = await stream.next_event()  # this stream's own session was revoked too
            assert (closing.event, closing.data["code"]) == ("svc-error", "session_revoked")
        assert opened["operation"] == "insert" and opened["source"] == "api"
        assert opened["key"] == {"sessionId": second.session_id}
        assert opened["payload"]["mode"] == "cookie"
        assert set(opened["payload"]) == {"mode", "address", "createdAt", "expiresAt"}
        assert {e["key"]["sessionId"] for e in revoked} == {first.session_id, second.session_id}
        assert {e["operation"] for e in revoked} == {"update"}
        text = str([opened, *revoked])
        for secret in (first.token, second.cookie, second.csrf_token):
            assert secret and secret.rsplit("_", 1)[1] not in text


async def test_unavailable_when_realtime_is_off(app_settings: Settings, db: AsyncEngine) -> None:
    off = TEST_REALTIME.model_copy(update={"enabled": False})
    app = create_app(app_settings.model_copy(update={"realtime": off}))
    async with app.router.lifespan_context(app), client_of(app) as client:
        response = await client.get("/v1/realtime/stream", params={"topics": "settings:banner"})
    assert (response.status_code, response.json()["code"]) == (503, "realtime_unavailable")


async def test_a_database_failure_during_replay_ends_the_stream_with_svc_error(
    http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
) -> None:
    topic = f"market:{market_address()}:orders"
    ids = await append(db, topic, 3)
    await caught_up(app, ids[-1])

    def fail_replay(*args: Any) -> None:
        statement = str(args[2])
        if "outbox.topic IN" in statement:  # the replay's query, not the broker's poll
            raise RuntimeError("the database went away")

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", fail_replay)
    try:
        async with open_stream(http, {"topics": topic, "lastEventId": str(ids[0])}) as stream:
            assert (await stream.next()).retry is not None
            frame = await stream.next_event()
            assert frame.event == "svc-error"
            assert frame.data == {"code": "replay_unavailable", "topic": topic}
            with pytest.raises(EOFError):  # then the stream ends
                await stream.next(timeout=5)
    finally:
        event.remove(engine, "before_cursor_execute", fail_replay)


@asynccontextmanager
async def served(app_settings: Settings, **realtime: object) -> AsyncIterator[tuple[str, FastAPI]]:
    app = create_app(
        app_settings.model_copy(update={"realtime": TEST_REALTIME.model_copy(update=realtime)})
    )
    async with live_server(app) as url:
        yield url, app


@asynccontextmanager
async def raw_stream(
    base_url: str, topic: str
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A stream request on a socket with a small receive buffer, read only when the test says
    so (a client that falls behind)."""
    parts = urlsplit(base_url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (parts.hostname, parts.port))
    # A small limit: asyncio's reader stops taking bytes off the socket at twice the limit
    # (else it would buffer everything in this process and the server would never block).
    reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
    writer.write(f"GET /v1/realtime/stream?topics={topic} HTTP/1.1\r\nHost: test\r\n\r\n".encode())
    await writer.drain()
    try:
        yield reader, writer
    finally:
        writer.close()


async def read_until_closed(reader: asyncio.StreamReader, timeout: float) -> bytes:
    """Everything until the server ends the response (the chunked terminator) or closes."""
    data = b""
    async with asyncio.timeout(timeout):
        while not data.endswith(b"\r\n0\r\n\r\n"):
            chunk = await reader.read(1 << 16)
            if not chunk:
                break
            data += chunk
    return data


async def test_a_slow_consumer_gets_svc_error_then_the_stream_ends(
    app_settings: Settings, db: AsyncEngine
) -> None:
    topic = f"market:{market_address()}:orders"
    async with (
        # One row per poll, so the writer runs between frames and the first ones go out.
        served(app_settings, client_queue_size=3, write_timeout_seconds=60, batch_size=1) as (
            url,
            app,
        ),
        raw_stream(url, topic) as (reader, _),
    ):
        async with asyncio.timeout(5):
            while app.state.broker.client_count < 1:
                await asyncio.sleep(0.01)
        # ~6 MB nobody reads yet: more than the kernel's buffers hold on loopback (~4 MB), so
        # the server's writes block and the client's queue overflows.
        ids = await append(db, topic, 300, pad=PAD)  # (the pad makes each event ~20 KB)
        await caught_up(app, ids[-1])
        data = await read_until_closed(reader, timeout=20)
        clients_after = app.state.broker.client_count
    sent = data.count(b"event: svc\n")
    assert 0 < sent < len(ids)  # the queue overflowed: not everything was sent
    tail = data[data.rindex(b"event: ") :]
    assert tail.startswith(b"event: svc-error\n")
    assert b'"code":"slow_consumer"' in tail and topic.encode() in tail
    assert clients_after == 0


async def test_a_client_that_reads_nothing_is_dropped(
    app_settings: Settings, db: AsyncEngine
) -> None:
    topic = f"market:{market_address()}:orders"
    async with (
        served(app_settings, client_queue_size=100_000, write_timeout_seconds=0.5) as (url, app),
        raw_stream(url, topic) as (reader, _),
    ):
        async with asyncio.timeout(5):
            while app.state.broker.client_count < 1:
                await asyncio.sleep(0.01)
        # Append until the kernel's buffers (up to a few MB on loopback) are full and the
        # server's write blocks; the sweep (every second) then finds it blocked for too long.
        ids: list[int] = []
        async with asyncio.timeout(60):
            while app.state.broker.client_count and len(ids) < 1000:
                ids += await append(db, topic, 10, pad=PAD * 2)
                await asyncio.sleep(0.05)
            while app.state.broker.client_count:
                await asyncio.sleep(0.05)
        # The connection is closed: what was buffered can still be read, then nothing more.
        data = await read_until_closed(reader, timeout=10)
    assert data.count(b"event: svc\n") < len(ids)
