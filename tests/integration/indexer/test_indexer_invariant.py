"""The invariant: after a random flow of orders and cancels from several wallets, indexed a bit at
a time, the read model's open orders equal the contract's resting orders, order by order and
aggregated per price level; best prices, volume and open interest equal the contract's; every
position equals the wallet's share balance plus the shares its resting sells lock."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from indexer_chain import LOT, Chain, book_of_chain, book_of_read_model
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.devnet.calls import MarketRef
from predmarket.devnet.errors import NodeError as DevnetRefused
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Side
from predmarket.indexer import run_once
from predmarket.node import NodeClient
from predmarket.store.tables.fill import fill
from predmarket.store.tables.market import market
from predmarket.store.tables.order import order
from predmarket.store.tables.position import position

pytestmark = pytest.mark.db


def random_flow(
    chain: Chain,
    markets: list[MarketRef],
    wallets: list[DevnetWallet],
    rng: random.Random,
    steps: int,
) -> int:
    """Buys, sells and cancels around the middle of the book, so they cross often."""
    done = 0
    for _ in range(steps):
        m = rng.choice(markets)
        w = rng.choice(wallets)
        roll = rng.random()
        try:
            if roll < 0.2:
                mine = [o for o in chain.resting(m) if o["owner"] == w.address]
                if mine:
                    chain.cancel(w, m, int(str(rng.choice(mine)["orderId"])))
            else:
                side = Side.BUY if roll < 0.7 else Side.SELL
                outcome = rng.choice([Outcome.YES, Outcome.NO])
                price = rng.randint(35, 65) * 10 + rng.choice([0, 5])
                chain.place(w, m, side, outcome, price, rng.randint(1, 4))
            done += 1
        except DevnetRefused:
            pass  # a sell of shares the wallet does not have: refused at the build
    return done


def best(prices: dict[tuple[str, str], list[int]], side: str, outcome: str) -> int:
    """The best tick of one side of a book; 0 when it is empty."""
    p = prices.get((side, outcome))
    return 0 if not p else (max(p) if side == "buy" else min(p))


async def assert_read_model_matches_chain(
    chain: Chain, db: AsyncEngine, markets: list[MarketRef]
) -> None:
    async with db.connect() as conn:
        rows = {
            r.market_address: r for r in await conn.execute(select(market).order_by(market.c.id))
        }
        positions = [dict(r._mapping) for r in await conn.execute(select(position))]
        open_orders = [
            dict(r._mapping)
            for r in await conn.execute(select(order).where(order.c.status == "open"))
        ]
    for m in markets:
        row = rows[m.address]
        resting = chain.resting(m)
        # Level by level, and order by order.
        assert await book_of_read_model(db, row.id) == book_of_chain(resting)
        ours = {
            (o["chain_order_id"], o["owner"], o["side"], o["outcome"], o["price"], o["remaining"])
            for o in open_orders
            if o["market_id"] == row.id
        }
        theirs = {
            (
                int(str(o["orderId"])),
                o["owner"],
                o["side"],
                o["outcome"],
                int(str(o["price"])),
                int(str(o["remaining"])),
            )
            for o in resting
        }
        assert ours == theirs
        # Best prices: 0 for an empty side.
        prices: dict[tuple[str, str], list[int]] = {}
        for o in resting:
            prices.setdefault((str(o["side"]), str(o["outcome"])), []).append(int(str(o["price"])))

        assert (row.best_bid_yes, row.best_ask_yes, row.best_bid_no, row.best_ask_no) == (
            best(prices, "buy", "yes"),
            best(prices, "sell", "yes"),
            best(prices, "buy", "no"),
            best(prices, "sell", "no"),
        )
        # Volume and open interest: the contract's own counters.
        fields = chain.node.contract_state(m.address)["mutFields"]
        assert isinstance(fields, list)
        assert row.volume == int(fields[10]["value"])
        assert row.open_interest == int(fields[7]["value"])
        assert row.book_version > 0

        # Positions: the shares a wallet holds plus the shares its resting sells lock.
        locked: Counter[tuple[str, str]] = Counter()
        for o in resting:
            if o["side"] == "sell":
                locked[(str(o["owner"]), str(o["outcome"]))] += int(str(o["remaining"]))
        held = {p["owner"]: p for p in positions if p["market_id"] == row.id}
        for owner, p in held.items():
            balance = chain.node.balance(owner)
            tokens: Any = balance.get("tokenBalances", [])
            yes = sum(int(t["amount"]) for t in tokens if t["id"] == m.yes_id.hex())
            no = sum(int(t["amount"]) for t in tokens if t["id"] == m.no_id.hex())
            assert p["yes_shares"] == yes + locked[(owner, "yes")], owner
            assert p["no_shares"] == no + locked[(owner, "no")], owner


@pytest.mark.parametrize("seed", [7, 2026])
async def test_read_model_equals_contract_state_after_a_random_flow(
    chain: Chain, node: NodeClient, db: AsyncEngine, seed: int
) -> None:
    rng = random.Random(seed)
    markets = [chain.create_market(f"Market {i}?", "test") for i in range(3)]
    wallets = [chain.wallet() for _ in range(4)]
    w0, w1 = wallets[0], wallets[1]
    for m in markets:  # shares for both sides to sell, and one merge for sure
        chain.buy(w0, m, Outcome.YES, 500, 4)
        chain.buy(w1, m, Outcome.NO, 500, 4)  # mints 4 lots
        chain.sell(w0, m, Outcome.YES, 300, 1)
        chain.sell(w1, m, Outcome.NO, 700, 1)  # merges with the 300 YES ask
    placed = 0
    for _ in range(6):  # index in between, so batches arrive a few at a time
        placed += random_flow(chain, markets, wallets, rng, 25)
        await run_once(db, node)
        await assert_read_model_matches_chain(chain, db, markets)
    assert placed > 100
    async with db.connect() as conn:
        volumes = (await conn.execute(select(market.c.volume))).scalars().all()
    assert all(v > LOT for v in volumes)  # the flow did cross in every market
    async with db.connect() as conn:
        kinds = set((await conn.execute(select(fill.c.kind))).scalars())
        reasons = set((await conn.execute(select(order.c.cancel_reason))).scalars())
    assert kinds == {"normal", "mint", "merge"}
    assert {"owner", "self-trade"} <= reasons
