"""``GET /v1/realtime/stream`` over real HTTP: refusals before the stream opens, frame format,
heartbeats, live delivery, replay after a disconnect, the seam, and resets past retention."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from realtime_sse import append, caught_up, market_address, open_stream
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import new_key, sign_in, wallet_of
from predmarket.realtime import queries
from predmarket.store.tables.outbox import outbox

pytestmark = pytest.mark.db


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


class TestRefusals:
    async def test_topics_required(self, http: httpx.AsyncClient) -> None:
        for params in ({}, {"topics": ""}, {"topics": " , "}):
            response = await http.get("/v1/realtime/stream", params=params)
            assert _error(response) == (400, "INVALID_REQUEST")
            assert response.json()["details"]["fields"][0]["field"] == "query.topics"

    @pytest.mark.parametrize(
        "topic",
        [
            "market:nope",
            "market:2AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAzzz1:trades",
            "market:0OIl:orders",
            "dispute:0",
            "dispute:abc",
            "settings:other",
            "health:node",
            "user:",
            "something",
        ],
    )
    async def test_unknown_topic_is_403(self, http: httpx.AsyncClient, topic: str) -> None:
        response = await http.get("/v1/realtime/stream", params={"topics": topic})
        assert _error(response) == (403, "realtime_topic_forbidden")

    async def test_user_topic_needs_the_wallets_session(self, http: httpx.AsyncClient) -> None:
        mine, other = new_key(), new_key()
        address, _ = wallet_of(mine)
        topic = f"user:{address}:orders"
        anonymous = await http.get("/v1/realtime/stream", params={"topics": topic})
        assert _error(anonymous) == (403, "realtime_topic_forbidden")
        assert anonymous.json()["details"]["reason"] == "session-required"
        stranger = await sign_in(http, other)
        response = await http.get(
            "/v1/realtime/stream", params={"topics": topic}, headers=stranger.headers
        )
        assert _error(response) == (403, "realtime_topic_forbidden")
        assert response.json()["details"]["reason"] == "other-wallet"

    async def test_topic_caps(self, http: httpx.AsyncClient) -> None:
        nine = ",".join(f"dispute:{i}" for i in range(1, 10))
        response = await http.get("/v1/realtime/stream", params={"topics": nine})
        assert _error(response) == (403, "realtime_topic_forbidden")
        eight = ",".join(f"dispute:{i}" for i in range(1, 9))
        async with open_stream(http, {"topics": eight}) as stream:
            assert (await stream.next()).retry is not None
        signed = await sign_in(http, new_key())
        twenty = ",".join(f"dispute:{i}" for i in range(1, 21))
        async with open_stream(http, {"topics": twenty}, signed.headers) as stream:
            assert (await stream.next()).retry is not None
        response = await http.get(
            "/v1/realtime/stream",
            params={"topics": twenty + ",dispute:21"},
            headers=signed.headers,
        )
        assert _error(response) == (403, "realtime_topic_forbidden")

    @pytest.mark.parametrize("cursor", ["0", "-1", "abc", "1.5", "01", "99999999999999999999"])
    async def test_bad_cursor_is_400(self, http: httpx.AsyncClient, cursor: str) -> None:
        query = await http.get(
            "/v1/realtime/stream", params={"topics": "settings:banner", "lastEventId": cursor}
        )
        assert _error(query) == (400, "invalid_realtime_cursor")
        assert query.json()["details"]["fields"][0]["field"] == "query.lastEventId"
        header = await http.get(
            "/v1/realtime/stream",
            params={"topics": "settings:banner"},
            headers={"Last-Event-ID": cursor},
        )
        assert _error(header) == (400, "invalid_realtime_cursor")


class TestFrames:
    async def test_headers_retry_and_frame_format(
        self, http: httpx.AsyncClient, db: AsyncEngine
    ) -> None:
        topic = f"market:{market_address()}:orders"
        async with open_stream(http, {"topics": topic}) as stream:
            headers = stream.response.headers
            assert headers["content-type"].startswith("text/event-stream")
            assert headers["cache-control"] == "no-cache"
            assert headers["x-accel-buffering"] == "no"
            assert (await stream.next()).retry == 3000
            [event_id] = await append(db, topic, amount="1000000000000000000")
            await append(db, f"market:{market_address()}:orders")  # another market: not sent
            frame = await stream.next_event()
        assert frame.event == "svc"
        assert frame.id == str(event_id)
        data = frame.data
        assert set(data) == {
            "v", "id", "seq", "topic", "operation", "entity", "key", "payload", "timestamp",
            "source",
        }  # fmt: skip
        assert data["v"] == 1
        assert data["id"] == data["seq"] == str(event_id)
        assert (data["topic"], data["operation"], data["entity"]) == (topic, "insert", "order")
        assert data["key"] == {"orderId": 0}
        assert data["payload"] == {"n": 0, "amount": "1000000000000000000"}
        assert data["source"] == "indexer"
        stamp = datetime.strptime(data["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert abs(datetime.now(UTC) - stamp) < timedelta(minutes=1)

    async def test_heartbeats_while_idle(self, http: httpx.AsyncClient) -> None:
        async with open_stream(http, {"topics": "health:indexer"}) as stream:
            await stream.next()  # retry hint
            started = asyncio.get_running_loop().time()
            beats = 0
            while beats < 3:
                frame = await stream.next(timeout=2)
                assert frame.event is None
                beats += frame.comments == ["heartbeat"]
            # heartbeat_seconds is 0.3 in these tests
            assert asyncio.get_running_loop().time() - started < 2.0

    async def test_ids_strictly_increase_across_topics(
        self, http: httpx.AsyncClient, db: AsyncEngine
    ) -> None:
        a, b = (f"market:{market_address()}:fills" for _ in range(2))
        async with open_stream(http, {"topics": f"{a},{b}"}) as stream:
            await stream.next()

            async def writer(topic: str) -> list[int]:
                return await append(db, topic, 15)

            written = await asyncio.gather(writer(a), writer(b))
            frames = await stream.events(30)
        ids = [int(f.id or 0) for f in frames]
        assert ids == sorted(ids) and len(set(ids)) == 30
        assert set(ids) == set(written[0]) | set(written[1])


class TestReplay:
    async def test_replay_after_disconnect_then_live_without_gap_or_duplicate(
        self, http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
    ) -> None:
        topic = f"market:{market_address()}:orders"
        other = f"market:{market_address()}:orders"
        first = await append(db, topic, 3)
        await caught_up(app, first[-1])
        async with open_stream(http, {"topics": topic}) as stream:
            await stream.next()
            live = await append(db, topic, 2)
            got = await stream.events(2)
        assert [int(f.id or 0) for f in got] == live
        missed = await append(db, topic, 4)
        await append(db, other, 3)
        # Reconnect with the last id seen (header form, as EventSource does).
        async with open_stream(http, {"topics": topic}, {"Last-Event-ID": got[-1].id or ""}) as s:
            await s.next()
            replayed = await s.events(4)
            more = await append(db, topic, 3)
            after = await s.events(3)
        assert [int(f.id or 0) for f in replayed] == missed
        assert [int(f.id or 0) for f in after] == more
        # The query form from the very first event replays everything after it.
        async with open_stream(http, {"topics": topic, "lastEventId": str(first[0])}) as s:
            await s.next()
            frames = await s.events(len(first) - 1 + 2 + 4 + 3)
        assert [int(f.id or 0) for f in frames] == first[1:] + live + missed + more

    async def test_seam_under_concurrent_writes(
        self, http: httpx.AsyncClient, db: AsyncEngine
    ) -> None:
        """Events keep coming while a client replays: each arrives once, in order."""
        topic = f"market:{market_address()}:fills"
        before = await append(db, topic, 120)  # more than one replay page (batch_size 50)
        writing = asyncio.create_task(append(db, topic, 60))
        async with open_stream(http, {"topics": topic, "lastEventId": str(before[9])}) as s:
            await s.next()
            written = await writing
            frames = await s.events(110 + 60, timeout=20)
        assert [int(f.id or 0) for f in frames] == before[10:] + written

    async def test_cursor_past_retention_resets_then_live(
        self, http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
    ) -> None:
        topic = f"market:{market_address()}:orders"
        banner = "settings:banner"
        old = await append(db, topic, 5)
        async with db.begin() as conn:  # age the first four events past the window
            await conn.execute(
                update(outbox)
                .where(outbox.c.id.in_(old[:4]))
                .values(created_at=datetime.now(UTC) - timedelta(days=2))
            )
        await app.state.pruner.prune_once()  # (the app's own pruner may run at the same time)
        async with db.connect() as conn:
            assert (await conn.execute(select(outbox.c.id))).scalars().all() == old[4:]
            assert await queries.pruned_through(conn) == old[3]
        await caught_up(app, old[-1])
        async with open_stream(
            http, {"topics": f"{topic},{banner}", "lastEventId": str(old[0])}
        ) as s:
            await s.next()
            resets = [await s.next_event(), await s.next_event()]
            live = await append(db, topic, 1)
            frame = await s.next_event()
        assert {r.event for r in resets} == {"svc-reset"}
        assert sorted(r.data["topic"] for r in resets) == sorted([topic, banner])
        for r in resets:
            assert r.data == {
                "v": 1,
                "type": "replay-reset",
                "topic": r.data["topic"],
                "afterEventId": str(old[0]),
                "reason": "retention-exceeded",
            }
        assert int(frame.id or 0) == live[0]
        # A cursor at the horizon or later is still served from the outbox.
        async with open_stream(http, {"topics": topic, "lastEventId": str(old[3])}) as s:
            await s.next()
            assert int((await s.next_event()).id or 0) == old[4]
