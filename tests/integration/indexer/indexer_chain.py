"""Helpers of the indexer tests: a devnet on a loopback port, driven through its facade.

Transactions are built, signed and submitted with ``predmarket.devnet.wallet.DevnetWallet`` and
the ``predmarket.devnet.calls`` scripts (the path a wallet takes); the indexer reads the chain
over HTTP with the service's ``NodeClient``. Nothing of ours is mocked.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.devnet import calls
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.contracts.registry import market_id, share_token_id
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.server import DevnetOptions, DevnetServer, run_devnet_in_thread
from predmarket.devnet.wallet import DevnetWallet, Sent
from predmarket.exchange import Outcome, Resolution, Side
from predmarket.store.tables.order import order

DAY_MS = 86_400_000
SHARE = 10**18
#: A tenth of a share: the quantity unit of these tests (a multiple of 10**7 base units).
LOT = SHARE // 10


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def start_devnet(data_dir: Path, port: int = 0) -> DevnetServer:
    return run_devnet_in_thread(DevnetOptions(data_dir, faucet_cooldown_ms=0), port=port)


@dataclass
class Chain:
    """Drives a devnet: markets by the operator, orders by generated wallets."""

    server: DevnetServer

    @property
    def node(self) -> DevnetNode:
        return self.server.node

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def operator(self) -> DevnetWallet:
        return DevnetWallet(self.node.config.operator_private_key)

    @property
    def registry_address(self) -> str:
        return self.node.config.registry_address

    def wallet(self) -> DevnetWallet:
        w = DevnetWallet.generate()
        self.node.faucet(w.address)
        return w

    def create_market(
        self,
        question: str = "Will it rain tomorrow?",
        category: str = "weather",
        metadata: dict[str, Any] | bytes | None = None,
    ) -> MarketRef:
        config = self.node.config
        state = self.node.contract_state(config.registry_address)
        index = int(state["mutFields"][0]["value"])  # type: ignore[index]
        raw = metadata if isinstance(metadata, bytes) else json.dumps(metadata or {}).encode()
        self.operator.call(
            self.node,
            calls.create_market(config.registry_id, question, category, now_ms() + DAY_MS, raw),
        )
        mid = market_id(config.registry_id, index)
        return MarketRef(
            mid,
            config.collateral_token_id,
            share_token_id(mid, Outcome.YES),
            share_token_id(mid, Outcome.NO),
        )

    def place(
        self,
        wallet: DevnetWallet,
        market: MarketRef,
        side: Side,
        outcome: Outcome,
        price: int,
        lots: int,
    ) -> Sent:
        return wallet.call(self.node, calls.place_order(market, side, outcome, price, lots * LOT))

    def buy(
        self, wallet: DevnetWallet, market: MarketRef, outcome: Outcome, price: int, lots: int
    ) -> Sent:
        return self.place(wallet, market, Side.BUY, outcome, price, lots)

    def sell(
        self, wallet: DevnetWallet, market: MarketRef, outcome: Outcome, price: int, lots: int
    ) -> Sent:
        return self.place(wallet, market, Side.SELL, outcome, price, lots)

    def cancel(self, wallet: DevnetWallet, market: MarketRef, order_id: int) -> Sent:
        return wallet.call(self.node, calls.cancel_order(market, order_id))

    def resolve(self, market: MarketRef, resolution: Resolution) -> Sent:
        return self.operator.call(self.node, calls.resolve(market, resolution))

    def claim(self, wallet: DevnetWallet, market: MarketRef, yes: int, no: int) -> Sent:
        return wallet.call(self.node, calls.claim(market, yes, no))

    def resting(self, market: MarketRef) -> list[dict[str, object]]:
        return self.node.market_orders(market.address)

    def event_count(self, address: str) -> int:
        """How many events a contract logged (every batch, every position)."""
        total, start = 0, 0
        while True:
            try:
                page = self.node.events(address, start)
            except Exception:  # 404 before the first event
                return total
            events = page["events"]
            assert isinstance(events, list)
            total += len(events)
            next_start = page["nextStart"]
            assert isinstance(next_start, int)
            if next_start == start:
                return total
            start = next_start


def book_of_chain(resting: list[dict[str, object]]) -> Counter[tuple[str, str, int, int]]:
    """Resting quantity per (side, outcome, price) and order count, as the contract holds it."""
    levels: Counter[tuple[str, str, int, int]] = Counter()
    for o in resting:
        key = (str(o["side"]), str(o["outcome"]), int(str(o["price"])), 0)
        levels[key] += int(str(o["remaining"]))
        levels[(key[0], key[1], key[2], 1)] += 1
    return levels


async def book_of_read_model(
    engine: AsyncEngine, market_row_id: int
) -> Counter[tuple[str, str, int, int]]:
    levels: Counter[tuple[str, str, int, int]] = Counter()
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(order.c.side, order.c.outcome, order.c.price, order.c.remaining).where(
                order.c.market_id == market_row_id, order.c.status == "open"
            )
        )
        for side, outcome, price, remaining in rows:
            levels[(side, outcome, price, 0)] += remaining
            levels[(side, outcome, price, 1)] += 1
    return levels
