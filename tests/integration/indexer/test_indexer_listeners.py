"""Commit listeners: the indexer calls them after every committed batch, and the app registers the
in-memory books' ``notify`` so an indexed order is served at once, not at the books' next poll."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from indexer_chain import LOT, Chain
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from test_indexer_app import eventually

from predmarket.app import create_app
from predmarket.exchange import Outcome
from predmarket.indexer import Indexer
from predmarket.node import NodeClient
from predmarket.settings import BookSettings, IndexerSettings, Settings
from predmarket.store.tables.indexer import indexer_checkpoint

pytestmark = pytest.mark.db


async def test_listeners_run_once_per_committed_batch(
    chain: Chain, node: NodeClient, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    m = chain.create_market()
    w = chain.wallet()
    chain.buy(w, m, Outcome.YES, 400, 2)
    chain.buy(w, m, Outcome.NO, 500, 1)

    calls: list[int] = []
    late: list[int] = []

    def counting() -> None:
        calls.append(indexer.events_applied)

    def failing() -> None:
        raise RuntimeError("listener broke")

    indexer = Indexer(db, node, on_commit=[failing, counting])
    indexer.add_listener(lambda: late.append(1))
    with caplog.at_level(logging.ERROR, logger="predmarket.indexer"):
        applied = await indexer.run_once()
    # MarketCreated, then two OrderPlaced (400 + 500 < 1000: no mint), one block each: three
    # commits, each seen after its events were counted; the listener that raises is logged and
    # changes nothing for the others.
    assert applied == 3
    assert calls == [1, 2, 3]
    assert late == [1, 1, 1]
    assert sum("commit listener" in r.getMessage() for r in caplog.records) == 3
    async with db.connect() as conn:
        moved = await conn.scalar(select(func.sum(indexer_checkpoint.c.next_start)))
    assert moved == 3

    # Nothing committed, nothing called; a removed listener is not called again.
    assert await indexer.run_once() == 0
    assert calls == [1, 2, 3]
    indexer.remove_listener(counting)
    indexer.remove_listener(counting)  # no error the second time
    chain.buy(w, m, Outcome.YES, 300, 1)
    assert await indexer.run_once() == 1
    assert calls == [1, 2, 3] and late == [1, 1, 1, 1]


async def test_an_indexed_order_is_in_the_api_book_without_waiting_for_the_books_poll(
    chain: Chain, db_url: str, app_settings: Settings
) -> None:
    m = chain.create_market()
    w = chain.wallet()
    # The suite's test settings (budgets no test reaches, …) on this test's database and devnet.
    settings = app_settings.model_copy(
        update={
            "database_url": db_url,
            "node_url": chain.url,
            "indexer": IndexerSettings(poll_interval_seconds=0.02),
            "books": BookSettings(poll_interval_ms=60_000),  # the books would wait a minute
        }
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        indexer: Indexer = app.state.indexer
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            path = f"/v1/markets/{m.address}/orderbook"

            async def book() -> dict[str, object] | None:
                r = await client.get(path)
                return r.json() if r.status_code == 200 else None

            # The market was indexed after the books' first load: they learnt of it when told.
            await eventually(book, timeout=10)
            for n, price in enumerate((420, 430, 440), start=1):
                tx = chain.buy(w, m, Outcome.YES, price, 1).tx_id.hex()
                activity = f"/v1/markets/{m.address}/activity?txId={tx}"

                async def indexed(activity: str = activity) -> bool:
                    return bool((await client.get(activity)).json()["indexed"])

                await eventually(indexed, timeout=10)
                committed = time.monotonic()

                async def served(n: int = n) -> bool:
                    body = await book()
                    return body is not None and len(body["yes"]["bids"]) == n  # type: ignore[index]

                await eventually(served, timeout=5)
                assert time.monotonic() - committed < 5  # far below the books' 60 s period
                body = await book()
                assert body is not None
                assert body["bestBidYes"] == price
                assert body["yes"]["bids"][0] == {  # type: ignore[index]
                    "price": price,
                    "totalQuantity": str(LOT),
                    "orderCount": 1,
                }
            assert indexer.running
