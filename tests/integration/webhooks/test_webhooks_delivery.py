"""Webhook delivery against a real HTTP receiver: signatures, retries, redelivery, disabling,
leases between concurrent workers and restarts (docs/webhooks.md)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from helpers.webhooks import (
    Receiver,
    client_of,
    create_webhook,
    fast_webhooks,
    fills_topic,
    make_developer,
    publish,
    settings_for,
    wait_for,
)
from predmarket.app import create_app
from predmarket.store.engine import create_engine
from predmarket.store.tables.outbox import outbox
from predmarket.webhooks import dispatcher, queries, signing
from predmarket.webhooks.worker import DeliveryWorker

pytestmark = pytest.mark.db


def verify_like_the_docs(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """The receiver snippet of docs/webhooks.md."""
    msg_id = headers["webhook-id"]
    timestamp = headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > 300:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(expected, sig.split(",", 1)[1])
        for sig in headers["webhook-signature"].split(" ")
        if sig.startswith("v1,")
    )


async def test_a_receiver_that_fails_then_recovers_gets_every_event(
    client: httpx.AsyncClient, wh_app: FastAPI, receiver: Receiver
) -> None:
    receiver.plan = [503, 500, 404, 503]
    dev = await make_developer(client)
    topic = fills_topic()
    hook = await create_webhook(client, dev, receiver.url, [topic])
    event_ids = await publish(wh_app.state.engine, topic, 6)
    wanted = {str(i) for i in event_ids}
    await wait_for(lambda: set(receiver.ok_event_ids()) >= wanted, what="every event delivered")

    events = receiver.events()
    for request in receiver.requests:
        assert verify_like_the_docs(str(hook["secret"]), request.headers, request.body)
        assert request.headers["content-type"] == "application/json"
        assert request.headers["user-agent"].startswith("predmarket-webhooks/")
        assert request.headers["webhook-id"].startswith("msg_")
    event = next(e for e in events if e["id"] == str(event_ids[0]))
    assert set(event) == {
        "v",
        "id",
        "seq",
        "topic",
        "operation",
        "entity",
        "key",
        "payload",
        "timestamp",
        "source",
    }
    assert (event["seq"], event["topic"], event["entity"], event["source"]) == (
        str(event_ids[0]),
        topic,
        "trade",
        "indexer",
    )
    assert str(event["timestamp"]).endswith("Z")
    # A retried event keeps its webhook-id; bodies are byte-identical across attempts.
    by_id: dict[str, set[bytes]] = {}
    for request in receiver.requests:
        by_id.setdefault(request.headers["webhook-id"], set()).add(request.body)
    assert all(len(bodies) == 1 for bodies in by_id.values())
    assert len(by_id) == 6

    async def settled() -> list[dict[str, object]]:
        # The receiver answers before the worker records the attempt: wait for the records.
        for _ in range(200):
            response = await client.get(
                f"/v1/webhooks/{hook['id']}/deliveries", headers=dev.headers
            )
            assert response.status_code == 200
            found: list[dict[str, object]] = response.json()["deliveries"]
            if all(d["status"] == "succeeded" for d in found):
                return found
            await asyncio.sleep(0.05)
        raise AssertionError("deliveries not settled")

    deliveries: list[Any] = await settled()
    assert len(deliveries) == 6
    assert all(d["status"] == "succeeded" for d in deliveries)
    attempts = [a for d in deliveries for a in d["attemptLog"]]
    assert len(attempts) == len(receiver.requests)
    failed = [a for a in attempts if a["outcome"] == "failed"]
    assert sorted(a["statusCode"] for a in failed) == [404, 500, 503, 503]
    assert all(a["nextAttemptAt"] is not None and a["durationMs"] >= 0 for a in failed)
    only_ok = await client.get(
        f"/v1/webhooks/{hook['id']}/deliveries?status=failed", headers=dev.headers
    )
    assert only_ok.json()["deliveries"] == []

    # Redelivery: the same event, the same webhook-id, once more.
    target = deliveries[0]
    before = len(receiver.requests)
    response = await client.post(
        f"/v1/webhooks/{hook['id']}/deliveries/{target['id']}/redeliver", headers=dev.headers
    )
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "pending"
    await wait_for(lambda: len(receiver.requests) > before, what="the redelivery")
    again = receiver.requests[before]
    assert again.headers["webhook-id"] == target["id"]
    assert verify_like_the_docs(str(hook["secret"]), again.headers, again.body)
    missing = await client.post(
        f"/v1/webhooks/{hook['id']}/deliveries/msg_nope/redeliver", headers=dev.headers
    )
    assert missing.status_code == 404


async def test_a_subscription_gets_only_later_events_of_its_topics(
    client: httpx.AsyncClient, wh_app: FastAPI, receiver: Receiver
) -> None:
    topic, other = fills_topic(), fills_topic()
    before = await publish(wh_app.state.engine, topic, 2)
    dev = await make_developer(client)
    await create_webhook(client, dev, receiver.url, [topic])
    after = await publish(wh_app.state.engine, topic, 2, start=2)
    await publish(wh_app.state.engine, other, 2)
    await wait_for(lambda: len(receiver.requests) >= 2, what="two deliveries")
    await asyncio.sleep(0.5)
    assert sorted(receiver.ok_event_ids()) == sorted(str(i) for i in after)
    assert not set(receiver.ok_event_ids()) & {str(i) for i in before}


async def test_rotation_signs_with_both_secrets(
    client: httpx.AsyncClient, wh_app: FastAPI, receiver: Receiver
) -> None:
    dev = await make_developer(client)
    topic = fills_topic()
    hook = await create_webhook(client, dev, receiver.url, [topic])
    rotated = await client.post(f"/v1/webhooks/{hook['id']}/rotate-secret", headers=dev.headers)
    new_secret = rotated.json()["secret"]
    await publish(wh_app.state.engine, topic, 1)
    await wait_for(lambda: len(receiver.requests) == 1)
    request = receiver.requests[0]
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    assert verify_like_the_docs(new_secret, request.headers, request.body)
    assert verify_like_the_docs(str(hook["secret"]), request.headers, request.body)


async def test_a_failing_subscription_is_disabled_and_reported(
    client: httpx.AsyncClient, wh_app: FastAPI, receiver: Receiver
) -> None:
    receiver.default_status = 500
    dev = await make_developer(client)
    topic = fills_topic()
    hook = await create_webhook(client, dev, receiver.url, [topic])
    await publish(wh_app.state.engine, topic, 1)
    attempts = 1 + len(wh_app.state.settings.webhooks.retry_schedule_seconds)
    await wait_for(lambda: len(receiver.requests) >= attempts, what="the whole schedule")

    async def disabled() -> dict[str, object]:
        for _ in range(100):
            got = (await client.get(f"/v1/webhooks/{hook['id']}", headers=dev.headers)).json()
            if not got["enabled"]:
                return dict(got)
            await asyncio.sleep(0.05)
        raise AssertionError("not disabled")

    state = await disabled()
    assert state["disabledReason"] == "disabled after repeated delivery failures"
    assert state["consecutiveFailures"] == attempts
    await asyncio.sleep(0.3)
    assert len(receiver.requests) == attempts  # nothing more once the schedule is exhausted
    deliveries = (
        await client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=dev.headers)
    ).json()["deliveries"]
    assert deliveries[0]["status"] == "failed" and deliveries[0]["attempts"] == attempts
    assert deliveries[0]["nextAttemptAt"] is None
    async with wh_app.state.engine.connect() as conn:
        reports = (
            await conn.execute(
                select(outbox.c.entity, outbox.c.key, outbox.c.payload).where(
                    outbox.c.topic == f"user:{dev.session.address}:notifications",
                    outbox.c.entity == "webhook",  # (sign-ins are announced there too)
                )
            )
        ).all()
    assert [(r.entity, r.key) for r in reports] == [("webhook", {"webhookId": hook["id"]})]
    assert reports[0].payload["enabled"] is False
    # Redelivery waits for re-enabling; re-enabling sends it again.
    refused = await client.post(
        f"/v1/webhooks/{hook['id']}/deliveries/{deliveries[0]['id']}/redeliver",
        headers=dev.headers,
    )
    assert refused.status_code == 409 and refused.json()["code"] == "WEBHOOK_DISABLED"
    receiver.default_status = 200
    await client.patch(f"/v1/webhooks/{hook['id']}", json={"enabled": True}, headers=dev.headers)
    ok = await client.post(
        f"/v1/webhooks/{hook['id']}/deliveries/{deliveries[0]['id']}/redeliver",
        headers=dev.headers,
    )
    assert ok.status_code == 202
    await wait_for(lambda: len(receiver.ok_event_ids()) == 1, what="delivery after re-enable")


async def test_two_workers_never_send_one_delivery_twice(
    tmp_path: Path, migrated_url: str, receiver: Receiver
) -> None:
    """Two workers (own engines, as two processes would) claim from one queue at once."""
    settings = settings_for(migrated_url, tmp_path / "d", webhooks=fast_webhooks(enabled=False))
    app = create_app(settings)
    async with app.router.lifespan_context(app), client_of(app) as c:
        dev = await make_developer(c)
        topic = fills_topic()
        await create_webhook(c, dev, receiver.url, [topic])
        ids = await publish(app.state.engine, topic, 40)
        while await dispatcher.dispatch_once(app.state.engine, batch_size=500):
            pass
    receiver.delay_s = 0.05
    engines = [create_engine(migrated_url) for _ in range(2)]
    box = signing.SecretBox(settings.resolve_secret_key())
    workers = [
        DeliveryWorker(e, fast_webhooks(batch_size=5, concurrency=5), box=box, allow_private=True)
        for e in engines
    ]
    for e in engines:  # connected before the race starts
        async with e.connect() as conn:
            await conn.execute(select(1))
    try:

        async def drain(worker: DeliveryWorker) -> int:
            # A claim can find every due row locked by the other worker's claim (SKIP LOCKED)
            # and return 0: keep trying until everything is delivered, not at the first 0.
            sent = 0
            deadline = asyncio.get_running_loop().time() + 60
            while len(receiver.ok_event_ids()) < len(ids):
                assert asyncio.get_running_loop().time() < deadline, "deliveries stalled"
                n = await worker.run_once()
                sent += n
                if not n:
                    await asyncio.sleep(0.01)
            return sent

        counts = await asyncio.gather(*(drain(w) for w in workers))
    finally:
        for w in workers:
            await w.aclose()
        for e in engines:
            await e.dispose()
    assert sorted(receiver.ok_event_ids()) == sorted(str(i) for i in ids)  # each exactly once
    assert sum(counts) >= 40 and all(counts)  # both workers took part


async def test_a_claim_leases_at_most_its_batch(
    tmp_path: Path, migrated_url: str, receiver: Receiver
) -> None:
    settings = settings_for(migrated_url, tmp_path / "d", webhooks=fast_webhooks(enabled=False))
    app = create_app(settings)
    async with app.router.lifespan_context(app), client_of(app) as c:
        dev = await make_developer(c)
        await create_webhook(c, dev, receiver.url, [topic := fills_topic()])
        await publish(app.state.engine, topic, 12)
        await dispatcher.dispatch_once(app.state.engine, batch_size=500)
        now = datetime.now(UTC)
        lease = now + timedelta(seconds=60)
        async with app.state.engine.begin() as conn:
            first = await queries.claim_due(conn, now=now, lease_until=lease, token="a", limit=5)
        async with app.state.engine.begin() as conn:
            second = await queries.claim_due(conn, now=now, lease_until=lease, token="b", limit=5)
    assert len(first) == 5 and len(second) == 5
    assert not set(first) & set(second)


async def test_a_dead_workers_lease_expires_and_another_sends(
    tmp_path: Path, migrated_url: str, receiver: Receiver
) -> None:
    settings = settings_for(migrated_url, tmp_path / "d", webhooks=fast_webhooks(enabled=False))
    app = create_app(settings)
    async with app.router.lifespan_context(app), client_of(app) as c:
        dev = await make_developer(c)
        topic = fills_topic()
        await create_webhook(c, dev, receiver.url, [topic])
        await publish(app.state.engine, topic, 1)
        await dispatcher.dispatch_once(app.state.engine, batch_size=500)
        engine = app.state.engine
        now = datetime.now(UTC)
        async with engine.begin() as conn:  # a worker claims, then dies before sending
            claimed = await queries.claim_due(
                conn, now=now, lease_until=now + timedelta(seconds=60), token="dead", limit=10
            )
        assert len(claimed) >= 1  # ours (and any other test's leftovers in this database)
        box = signing.SecretBox(settings.resolve_secret_key())
        live = DeliveryWorker(engine, fast_webhooks(), box=box, allow_private=True)
        later = DeliveryWorker(
            engine,
            fast_webhooks(),
            box=box,
            allow_private=True,
            clock=lambda: now + timedelta(seconds=61),
        )
        try:
            assert await live.run_once() == 0  # leased: not sent twice at once
            assert len(receiver.requests) == 0
            assert await later.run_once() >= 1  # the lease ran out: sent
        finally:
            await live.aclose()
            await later.aclose()
        assert len(receiver.ok_event_ids()) == 1


async def test_deliveries_survive_a_restart(
    tmp_path: Path, migrated_url: str, receiver: Receiver
) -> None:
    """Pending retries and events committed while the service is down are delivered after a
    restart; nothing is lost."""
    receiver.default_status = 503
    settings = settings_for(
        migrated_url, tmp_path / "d", webhooks=fast_webhooks(retry_schedule_seconds=[0.5] * 20)
    )
    app = create_app(settings)
    topic = fills_topic()
    async with app.router.lifespan_context(app), client_of(app) as c:
        dev = await make_developer(c)
        await create_webhook(c, dev, receiver.url, [topic])
        first = await publish(app.state.engine, topic, 3)
        await wait_for(lambda: len(receiver.requests) >= 3, what="first failing attempts")
    # The service is down: more events are committed (by the indexer of another process).
    engine = create_engine(migrated_url)
    try:
        second = await publish(engine, topic, 2, start=3)
    finally:
        await engine.dispose()
    receiver.default_status = 200
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        wanted = {str(i) for i in first + second}
        await wait_for(lambda: set(receiver.ok_event_ids()) >= wanted, what="all after restart")
