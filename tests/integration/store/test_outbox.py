"""The outbox: event ids become visible in increasing order, even with concurrent writers.

A realtime reader polls ``id > last_seen``. If a writer holding a smaller id could commit after
a writer holding a larger one, the reader would skip the smaller id forever; ``append_outbox``
serialises writers (PostgreSQL advisory lock; SQLite's single writer) so that cannot happen.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.store.tables.outbox import outbox
from predmarket.store.uow import append_outbox, transaction

pytestmark = pytest.mark.db


async def _append(conn: object, n: int, topic: str = "market:m1:orders") -> int:
    from sqlalchemy.ext.asyncio import AsyncConnection

    assert isinstance(conn, AsyncConnection)
    return await append_outbox(
        conn,
        topic=topic,
        operation="insert",
        entity="order",
        key={"orderId": str(n)},
        payload={"price": 500, "quantity": str(10**18), "n": n},
        source="indexer",
    )


async def _ids_after(engine: AsyncEngine, last: int) -> list[int]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(outbox.c.id).where(outbox.c.id > last).order_by(outbox.c.id)
        )
        return list(rows.scalars())


@pytest.fixture
async def engine(migrated_engine: AsyncEngine) -> AsyncEngine:
    async with migrated_engine.begin() as conn:
        await conn.execute(delete(outbox))
    return migrated_engine


async def test_append_returns_the_row_id_and_stores_the_frame(engine: AsyncEngine) -> None:
    at = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    async with transaction(engine) as conn:
        first = await append_outbox(
            conn,
            topic="market:m1:fills",
            operation="insert",
            entity="trade",
            key={"tradeId": "7"},
            payload={"price": 640, "quantity": "10000000"},
            source="indexer",
            created_at=at,
        )
        second = await _append(conn, 2)
    assert second == first + 1
    async with engine.connect() as conn:
        row = (await conn.execute(select(outbox).where(outbox.c.id == first))).one()
    assert (row.topic, row.operation, row.entity, row.source) == (
        "market:m1:fills",
        "insert",
        "trade",
        "indexer",
    )
    assert row.key == {"tradeId": "7"}
    assert row.payload == {"price": 640, "quantity": "10000000"}
    assert row.created_at == at


async def test_a_failed_unit_of_work_leaves_no_event(engine: AsyncEngine) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        async with transaction(engine) as conn:
            await _append(conn, 1)
            raise RuntimeError("boom")
    assert await _ids_after(engine, 0) == []


async def test_a_second_writer_waits_for_the_first_to_commit(engine: AsyncEngine) -> None:
    """The hazard, made deterministic: A draws an id and holds its transaction open; B must not
    be able to draw (and commit) a larger id before A commits."""
    a_appended = asyncio.Event()
    release_a = asyncio.Event()

    async def writer_a() -> int:
        async with transaction(engine) as conn:
            event_id = await _append(conn, 1)
            a_appended.set()
            await release_a.wait()
            return event_id

    async def writer_b() -> int:
        await a_appended.wait()
        async with transaction(engine) as conn:
            return await _append(conn, 2)

    task_a = asyncio.create_task(writer_a())
    task_b = asyncio.create_task(writer_b())
    await a_appended.wait()
    await asyncio.sleep(0.3)
    assert not task_b.done(), "B appended while A's transaction was still open"
    assert await _ids_after(engine, 0) == []  # nothing visible yet
    release_a.set()
    id_a, id_b = await asyncio.gather(task_a, task_b)
    assert id_b > id_a
    assert await _ids_after(engine, 0) == [id_a, id_b]


async def test_concurrent_writers_a_polling_reader_sees_every_id_in_order(
    engine: AsyncEngine,
) -> None:
    writers, per_writer = 6, 15
    rng = random.Random(7)
    written: list[int] = []
    done = asyncio.Event()

    async def writer(w: int) -> None:
        for i in range(per_writer):
            async with transaction(engine) as conn:
                await asyncio.sleep(rng.random() * 0.002)  # other work of the unit of work
                written.append(await _append(conn, w * 1000 + i, topic=f"market:m{w}:orders"))
                await asyncio.sleep(rng.random() * 0.003)  # ... and more before the commit

    seen: list[int] = []
    batches = 0

    async def reader() -> None:
        nonlocal batches
        last = 0
        while True:
            finished = done.is_set()
            batch = await _ids_after(engine, last)
            if batch:
                batches += 1
                # No gap: every id after the last one seen is there, in order.
                expected_first = batch[0] if last == 0 else last + 1
                assert batch == list(range(expected_first, expected_first + len(batch))), (
                    last,
                    batch,
                )
                seen.extend(batch)
                last = batch[-1]
            if finished:
                return
            await asyncio.sleep(0.001)

    reading = asyncio.create_task(reader())
    await asyncio.gather(*(writer(w) for w in range(writers)))
    done.set()
    await reading
    assert len(written) == writers * per_writer
    assert seen == sorted(written)
    assert batches > 1  # the reader really polled while writers ran


async def test_ids_are_never_reused_after_the_table_is_emptied(engine: AsyncEngine) -> None:
    async with transaction(engine) as conn:
        before = await _append(conn, 1)
    async with transaction(engine) as conn:
        await conn.execute(delete(outbox))  # retention pruned everything
    async with transaction(engine) as conn:
        after = await _append(conn, 2)
    assert after > before
