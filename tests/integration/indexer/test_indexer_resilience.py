"""Restarts, a second indexer, a node that goes away and comes back, confirmations: every event
is applied exactly once and the indexer catches up."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from indexer_chain import Chain, start_devnet
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.devnet.server import DevnetServer
from predmarket.exchange import Outcome, Side
from predmarket.indexer import Indexer, run_once
from predmarket.node import NodeClient
from predmarket.store.engine import create_engine
from predmarket.store.tables.fill import fill
from predmarket.store.tables.indexer import chain_event, indexer_checkpoint
from predmarket.store.tables.order import order
from predmarket.store.tables.outbox import outbox

pytestmark = pytest.mark.db


async def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.002)


async def count(engine: AsyncEngine, table: object) -> int:
    async with engine.connect() as conn:
        n = await conn.scalar(select(func.count()).select_from(table))  # type: ignore[arg-type]
    return int(n or 0)


def trade_randomly(chain: Chain, markets: list, wallets: list, steps: int, seed: int) -> None:  # type: ignore[type-arg]
    """Buys on both books of every market, so that some cross (mints and normal fills)."""
    rng = random.Random(seed)
    for _ in range(steps):
        m = rng.choice(markets)
        w = rng.choice(wallets)
        outcome = rng.choice([Outcome.YES, Outcome.NO])
        chain.place(w, m, Side.BUY, outcome, rng.randint(40, 60) * 10, rng.randint(1, 3))


async def assert_each_event_once(chain: Chain, engine: AsyncEngine, contracts: list[str]) -> None:
    on_chain = {a: chain.event_count(a) for a in contracts}
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(chain_event.c.contract_address, func.count()).group_by(
                chain_event.c.contract_address
            )
        )
        applied = {a: int(n) for a, n in rows}
        placed = await conn.scalar(
            select(func.count()).select_from(chain_event).where(chain_event.c.event_index == 0)
        )
        ids = list((await conn.execute(select(outbox.c.id).order_by(outbox.c.id))).scalars())
    assert applied == {a: n for a, n in on_chain.items() if n}
    # one order per OrderPlaced, one fill per Trade (registry events have index 0 too)
    n_markets = on_chain[contracts[0]]
    assert await count(engine, order) == int(placed or 0) - n_markets
    async with engine.connect() as conn:
        trades = await conn.scalar(
            select(func.count())
            .select_from(chain_event)
            .where(chain_event.c.event_index == 1, chain_event.c.contract_address != contracts[0])
        )
    assert await count(engine, fill) == int(trades or 0)
    assert ids == sorted(set(ids))  # strictly increasing event ids


async def test_a_restart_mid_stream_resumes_without_duplicates(
    chain: Chain, node: NodeClient, db_url: str
) -> None:
    markets = [chain.create_market(f"Q{i}?") for i in range(3)]
    wallets = [chain.wallet() for _ in range(3)]
    trade_randomly(chain, markets, wallets, 40, seed=1)
    contracts = [chain.registry_address, *(m.address for m in markets)]
    total = sum(chain.event_count(a) for a in contracts)

    # The first indexer is stopped part-way: whatever batch it was in rolls back.
    engine = create_engine(db_url)
    first = Indexer(engine, node, poll_interval_s=0.01)
    first.start()
    await wait_for(lambda: first.events_applied >= 10)
    await first.stop()
    await engine.dispose()
    stopped_at = first.events_applied
    assert 10 <= stopped_at < total

    # More activity while nobody indexes, then a new indexer (new engine, same database).
    late = chain.create_market("Late?")
    markets.append(late)
    contracts.append(late.address)
    trade_randomly(chain, markets, wallets, 15, seed=2)
    total = sum(chain.event_count(a) for a in contracts)

    engine = create_engine(db_url)
    try:
        assert await run_once(engine, node) == total - stopped_at
        assert await run_once(engine, node) == 0
        await assert_each_event_once(chain, engine, contracts)
    finally:
        await engine.dispose()


async def test_a_batch_is_never_applied_twice(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    m = chain.create_market()
    a, b = chain.wallet(), chain.wallet()
    chain.buy(a, m, Outcome.YES, 550, 2)
    await run_once(db, node)
    chain.buy(b, m, Outcome.NO, 450, 1)  # a mint

    # An indexer whose memory says the market is still at counter 0 (as if it missed a
    # commit): the checkpoint's compare-and-set refuses, the pass starts over from the database.
    stale = Indexer(db, node)
    await stale.run_once()
    assert stale._checkpoints is not None
    stale._checkpoints[m.address] = 0
    assert await stale.run_once() == 0
    await assert_each_event_once(chain, db, [chain.registry_address, m.address])

    # Even with the checkpoint itself wound back, the chain_event key refuses a replay and the
    # whole batch rolls back.
    async with db.begin() as conn:
        await conn.execute(
            update(indexer_checkpoint)
            .where(indexer_checkpoint.c.contract_address == m.address)
            .values(next_start=0)
        )
    with pytest.raises(IntegrityError):
        await run_once(db, node)
    async with db.begin() as conn:
        await conn.execute(
            update(indexer_checkpoint)
            .where(indexer_checkpoint.c.contract_address == m.address)
            .values(next_start=2)
        )
    await assert_each_event_once(chain, db, [chain.registry_address, m.address])


async def test_two_indexers_at_once_apply_each_event_once(
    chain: Chain, node: NodeClient, db_url: str
) -> None:
    markets = [chain.create_market(f"Q{i}?") for i in range(3)]
    wallets = [chain.wallet() for _ in range(3)]
    trade_randomly(chain, markets, wallets, 30, seed=3)
    contracts = [chain.registry_address, *(m.address for m in markets)]
    total = sum(chain.event_count(a) for a in contracts)
    engines = [create_engine(db_url), create_engine(db_url)]
    try:
        results = await asyncio.gather(*(run_once(e, node) for e in engines))
        assert sum(results) == total
        await assert_each_event_once(chain, engines[0], contracts)
    finally:
        for e in engines:
            await e.dispose()


async def test_a_node_that_fails_then_recovers(
    devnet: DevnetServer, node: NodeClient, db: AsyncEngine, tmp_path: Path
) -> None:
    chain = Chain(devnet)
    m = chain.create_market()
    w = chain.wallet()
    chain.buy(w, m, Outcome.YES, 500, 1)
    indexer = Indexer(
        db,
        node,
        poll_interval_s=0.02,
        initial_backoff_s=0.02,
        max_backoff_s=0.1,
        stale_after_s=0.5,
    )
    indexer.start()
    restarted: DevnetServer | None = None
    try:
        await wait_for(lambda: indexer.events_applied == 2)
        await wait_for(lambda: indexer.last_success is not None)
        assert (await indexer.health()).status == "up"

        port = devnet.port
        devnet.stop()
        await wait_for(lambda: indexer.consecutive_failures >= 3)
        health = await indexer.health()
        assert health.status in {"degraded", "down"}
        assert health.detail == "retrying after NodeUnavailable"
        await wait_for(lambda: indexer.consecutive_failures >= 3)
        await asyncio.sleep(0.6)
        assert (await indexer.health()).status == "down"  # no success for > stale_after_s

        # The same chain comes back on the same port; new activity is picked up.
        restarted = start_devnet(tmp_path / "devnet", port=port)
        chain = Chain(restarted)
        chain.buy(w, m, Outcome.NO, 500, 1)  # mints with the resting YES order
        await wait_for(lambda: indexer.events_applied == 4)
        await wait_for(lambda: indexer.consecutive_failures == 0)
        health = await indexer.health()
        assert health.status == "up" and health.lag_blocks == 0
        assert health.lag_seconds is not None and health.lag_seconds < 5
        await assert_each_event_once(chain, db, [chain.registry_address, m.address])
    finally:
        await indexer.stop()
        if restarted is not None:
            restarted.stop()
    assert not indexer.running


def test_backoff_doubles_up_to_the_cap(db: AsyncEngine) -> None:
    indexer = Indexer(db, NodeClient("http://127.0.0.1:9"), initial_backoff_s=1, max_backoff_s=8)
    for failures, base in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 8), (60, 8)]:
        indexer.consecutive_failures = failures
        delays = [indexer.backoff_delay() for _ in range(50)]
        assert all(base / 2 <= d <= base for d in delays), (failures, delays)


async def test_confirmations_hold_back_the_newest_blocks(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    indexer = Indexer(db, node, confirmations=2)
    m = chain.create_market()  # one block: 1 confirmation
    assert await indexer.run_once() == 0
    assert indexer.lag_batches == 1
    w = chain.wallet()  # the faucet's block confirms the market's
    assert await indexer.run_once() == 1
    chain.buy(w, m, Outcome.YES, 400, 1)
    assert await indexer.run_once() == 0
    assert indexer.lag_batches == 1
    chain.wallet()
    assert await indexer.run_once() == 1
    assert indexer.lag_batches == 0
    async with db.connect() as conn:
        assert await conn.scalar(text('SELECT count(*) FROM "order"')) == 1
