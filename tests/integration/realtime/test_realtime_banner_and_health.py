"""``settings:banner`` (the operator route, the public read, the event), ``health:indexer``
events, slow consumers, and the order-book snapshot recipe over real HTTP."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI
from realtime_sse import OPERATOR_TOKEN, append, caught_up, market_address, open_stream
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.books import place
from helpers.markets import make_market
from predmarket.health.schemas import ComponentHealth
from predmarket.realtime.service import IndexerHealthPublisher
from predmarket.settings import RealtimeSettings

pytestmark = pytest.mark.db
OPERATOR = {"x-svc-operator-token": OPERATOR_TOKEN}


class TestBanner:
    async def test_operator_token_required(self, http: httpx.AsyncClient) -> None:
        body = {"message": "hello", "level": "info"}
        for headers in ({}, {"x-svc-operator-token": "wrong"}):
            response = await http.put("/v1/admin/banner", json=body, headers=headers)
            assert (response.status_code, response.json()["code"]) == (401, "UNAUTHORIZED")
        response = await http.delete("/v1/admin/banner")
        assert response.status_code == 401

    async def test_bad_body_is_400(self, http: httpx.AsyncClient) -> None:
        for body in ({"message": ""}, {"message": "x", "level": "loud"}, {"message": "x", "y": 1}):
            response = await http.put("/v1/admin/banner", json=body, headers=OPERATOR)
            assert (response.status_code, response.json()["code"]) == (400, "INVALID_REQUEST")

    async def test_set_read_announce_clear(self, http: httpx.AsyncClient) -> None:
        empty = await http.get("/v1/platform/banner")
        assert empty.json() == {"message": None, "level": None, "updatedAt": None}
        async with open_stream(http, {"topics": "settings:banner"}) as stream:
            await stream.next()
            put = await http.put(
                "/v1/admin/banner",
                json={"message": "Maintenance at noon", "level": "warning"},
                headers=OPERATOR,
            )
            assert put.status_code == 200, put.text
            frame = await stream.next_event()
            assert frame.event == "svc"
            data = frame.data
            assert (data["topic"], data["entity"], data["operation"], data["source"]) == (
                "settings:banner",
                "banner",
                "update",
                "api",
            )
            assert data["payload"]["message"] == "Maintenance at noon"
            assert data["payload"]["level"] == "warning"
            read = (await http.get("/v1/platform/banner")).json()
            assert read["message"] == "Maintenance at noon" and read["level"] == "warning"
            assert (await http.delete("/v1/admin/banner", headers=OPERATOR)).status_code == 204
            gone = await stream.next_event()
            assert gone.data["operation"] == "delete"
            assert int(gone.id or 0) > int(frame.id or 0)
        assert (await http.get("/v1/platform/banner")).json()["message"] is None


class TestIndexerHealth:
    async def test_status_changes_and_heartbeats_are_published(
        self, http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
    ) -> None:
        status = ["up"]
        now = [0.0]

        async def check() -> ComponentHealth:
            return ComponentHealth(status=status[0], lag_blocks=0, lag_seconds=0.1)  # type: ignore[arg-type]

        publisher = IndexerHealthPublisher(
            db,
            check,
            RealtimeSettings(indexer_heartbeat_seconds=60, indexer_min_event_seconds=5),
            on_commit=app.state.notify_outbox,
            clock=lambda: now[0],
        )
        async with open_stream(http, {"topics": "health:indexer"}) as stream:
            await stream.next()
            first = await publisher.tick()  # the first status is announced
            assert first is not None
            frame = await stream.next_event()
            assert frame.data["source"] == "outbox"
            assert frame.data["entity"] == "indexer"
            assert frame.data["payload"]["status"] == "up"
            now[0] = 10.0
            assert await publisher.tick() is None  # unchanged, heartbeat not due
            status[0] = "down"
            now[0] = 12.0
            assert await publisher.tick() is not None  # a change
            assert (await stream.next_event()).data["payload"]["previousStatus"] == "up"
            status[0] = "up"
            now[0] = 13.0
            assert await publisher.tick() is None  # flapping: held back 5 s
            now[0] = 18.0
            assert await publisher.tick() is not None
            now[0] = 80.0
            assert await publisher.tick() is not None  # heartbeat
            frames = await stream.events(2)
            assert [f.data["payload"]["status"] for f in frames] == ["up", "up"]

    async def test_only_the_indexing_process_publishes(self, db: AsyncEngine) -> None:
        async def check() -> ComponentHealth:
            raise AssertionError("not checked")

        publisher = IndexerHealthPublisher(db, check, RealtimeSettings(), is_leader=lambda: False)
        assert await publisher.tick() is None


class TestSlowConsumer:
    async def test_overflow_sends_slow_consumer_then_closes(
        self, app: FastAPI, db: AsyncEngine, http: httpx.AsyncClient
    ) -> None:
        topic = f"market:{market_address()}:orders"
        broker = app.state.broker
        client = broker.subscribe(frozenset({topic}))
        try:
            ids = await append(db, topic, broker._settings.client_queue_size + 1)
            await caught_up(app, ids[-1])
            assert client.frames == []  # the backlog is released at once
            assert client.failure is not None
            assert b"svc-error" in client.failure and b'"slow_consumer"' in client.failure
        finally:
            broker.unsubscribe(client)
        del http


async def _place_orders(db: AsyncEngine, market: dict[str, object], n: int) -> None:
    for _ in range(n):
        async with db.begin() as conn:
            await place(conn, market)


def _orders(book: dict[str, object]) -> int:
    total = 0
    for outcome in ("yes", "no"):
        side = book[outcome]
        assert isinstance(side, dict)
        total += sum(level["orderCount"] for s in ("bids", "asks") for level in side[s])
    return total


class TestBookSnapshotRecipe:
    async def test_snapshot_buffer_discard_apply(
        self, http: httpx.AsyncClient, db: AsyncEngine, app: FastAPI
    ) -> None:
        """The recipe of docs/realtime.md: subscribe, snapshot, drop buffered frames with ids
        at or below the snapshot's eventId, apply the rest: the result is the final book."""
        async with db.begin() as conn:
            market = await make_market(conn)
        address = market["market_address"]
        topic = f"market:{address}:orders"
        await _place_orders(db, market, 3)
        await caught_up(app, await app.state.books.sync())
        async with open_stream(http, {"topics": topic}) as stream:
            await stream.next()
            during = asyncio.create_task(_place_orders(db, market, 6))
            await asyncio.sleep(0.02)
            snapshot = (await http.get(f"/v1/markets/{address}/orderbook?depth=100")).json()
            await during
            await _place_orders(db, market, 2)
            frames = await stream.events(6 + 2)
        snapshot_id = int(snapshot["eventId"])
        applied = [f for f in frames if int(f.id or 0) > snapshot_id]
        ids = [int(f.id or 0) for f in applied]
        assert ids == sorted(set(ids))
        # Each applied frame is a placed order (one order each): snapshot + applied = final.
        open_orders = _orders(snapshot) + sum(
            1 for f in applied if f.data["entity"] == "order" and f.data["operation"] == "insert"
        )
        await app.state.books.sync()
        final = (await http.get(f"/v1/markets/{address}/orderbook?depth=100")).json()
        assert _orders(final) == open_orders == 3 + 6 + 2
        assert int(final["eventId"]) == max(int(f.id or 0) for f in frames)
