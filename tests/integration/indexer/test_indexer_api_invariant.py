"""The invariant at the API: after a random flow, the books the API SERVES equal the contract state
on the devnet.

A real app (its lifespan: the indexer following the devnet over loopback HTTP, the in-memory books
following the outbox, a real database) is driven by a seeded random flow submitted straight to the
devnet by several wallets over several markets, while the app runs: buys, sells of shares the
wallets acquired through mints, cancels, crossing orders with partial fills, mints, merges,
self-trades, a market created half-way and one resolved. After each round, once the API has
caught up, for every market:

- ``GET /v1/markets/{address}/orderbook?depth=100``: every level of both books (price, total
  quantity, order count, in book order), the four best prices (0 for an empty side) and the
  version (one per order event the contract logged) equal the contract's resting orders
  aggregated per level;
- ``GET /v1/markets/{address}/prices``: the contract's last ``Trade`` (its yes tick and block
  time), or 0.5 / 0.5 / 0 before any;
- ``GET /v1/markets/{address}/orders?status=open`` (every page): the contract's resting orders,
  order by order, newest first;
- ``GET /v1/markets/{address}/fills`` (every page): the contract's ``Trade`` events, newest first.

Nothing goes through ``/v1/tx``: the flow's transactions are built, signed and submitted with the
devnet's wallet, as in the other indexer tests.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from indexer_chain import LOT, Chain
from test_indexer_app import eventually

from predmarket.app import create_app
from predmarket.devnet.abi import MARKET, decode_event
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.errors import NodeError as DevnetRefused
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Resolution, Side
from predmarket.settings import IndexerSettings, Settings

pytestmark = pytest.mark.db

ORDER_PLACED, TRADE, ORDER_CANCELLED = 0, 1, 2
TRADE_KINDS = {0: "normal", 1: "mint", 2: "merge"}
CANCEL_REASONS = {0: "owner", 1: "self-trade", 2: "resolved"}
OUTCOMES = {0: "yes", 1: "no"}
DEPTH = 100


# -- the chain's side --------------------------------------------------------------------------


@dataclass
class ChainEvent:
    index: int
    timestamp: int
    named: dict[str, Any]


def chain_events(chain: Chain, address: str) -> list[ChainEvent]:
    """Every event the market contract logged, decoded by the ABI, in chain order."""
    out: list[ChainEvent] = []
    start = 0
    while True:
        try:
            page = chain.node.events(address, start)
        except DevnetRefused:  # no event yet
            return out
        events = page["events"]
        assert isinstance(events, list)
        for e in events:
            index = int(e["eventIndex"])
            out.append(
                ChainEvent(index, int(e["timestamp"]), decode_event(MARKET, index, e["fields"]))
            )
        next_start = page["nextStart"]
        assert isinstance(next_start, int)
        if next_start == start:
            return out
        start = next_start


@dataclass
class Expected:
    """What the API must serve for one market, from the contract's state and events."""

    book: dict[str, Any]
    prices: dict[str, Any]
    open_orders: list[dict[str, Any]]
    fills: list[dict[str, Any]]


def expected_of_chain(chain: Chain, m: MarketRef) -> Expected:
    resting = chain.resting(m)
    levels: dict[tuple[str, str], dict[int, list[int]]] = {}
    for o in resting:
        level = levels.setdefault((str(o["outcome"]), str(o["side"])), {}).setdefault(
            int(str(o["price"])), [0, 0]
        )
        level[0] += int(str(o["remaining"]))
        level[1] += 1

    def side(outcome: str, side: str) -> list[dict[str, Any]]:
        prices = sorted(levels.get((outcome, side), {}), reverse=side == "buy")
        return [
            {
                "price": p,
                "totalQuantity": str(levels[(outcome, side)][p][0]),
                "orderCount": levels[(outcome, side)][p][1],
            }
            for p in prices
        ]

    book: dict[str, Any] = {
        "marketAddress": m.address,
        "yes": {"bids": side("yes", "buy"), "asks": side("yes", "sell")},
        "no": {"bids": side("no", "buy"), "asks": side("no", "sell")},
    }
    for outcome in ("yes", "no"):
        bids, asks = book[outcome]["bids"], book[outcome]["asks"]
        assert len(bids) < DEPTH and len(asks) < DEPTH  # depth=100 shows every level
        book[f"bestBid{outcome.title()}"] = bids[0]["price"] if bids else 0
        book[f"bestAsk{outcome.title()}"] = asks[0]["price"] if asks else 0

    events = chain_events(chain, m.address)
    # One version per order event: placed, a maker updated by a trade, cancelled.
    book["version"] = sum(e.index in (ORDER_PLACED, TRADE, ORDER_CANCELLED) for e in events)
    trades = [e for e in events if e.index == TRADE]
    if trades:
        last = trades[-1]
        price = int(last.named["price"])
        yes_tick = price if OUTCOMES[int(last.named["makerOutcome"])] == "yes" else 1000 - price
        prices = {
            "marketAddress": m.address,
            "yesPrice": yes_tick / 1000,
            "noPrice": (1000 - yes_tick) / 1000,
            "priceTimestamp": last.timestamp,
        }
    else:
        prices = {"marketAddress": m.address, "yesPrice": 0.5, "noPrice": 0.5, "priceTimestamp": 0}

    open_orders = [
        {
            "orderId": int(str(o["orderId"])),
            "marketAddress": m.address,
            "owner": o["owner"],
            "side": o["side"],
            "outcome": o["outcome"],
            "price": int(str(o["price"])),
            "quantity": str(o["quantity"]),
            "remaining": str(o["remaining"]),
            "status": "open",
            "cancelReason": None,
        }
        for o in sorted(resting, key=lambda o: -int(str(o["orderId"])))
    ]
    fills = []
    for e in reversed(trades):  # newest first
        n = e.named
        price = int(n["price"])
        outcome = OUTCOMES[int(n["makerOutcome"])]
        fills.append(
            {
                "tradeId": str(n["tradeId"]),
                "kind": TRADE_KINDS[int(n["kind"])],
                "makerOrderId": int(n["makerOrderId"]),
                "takerOrderId": int(n["takerOrderId"]),
                "maker": n["makerOwner"],
                "taker": n["takerOwner"],
                "outcome": outcome,
                "makerSide": "buy" if int(n["makerSide"]) == 0 else "sell",
                "price": price,
                "yesPrice": price if outcome == "yes" else 1000 - price,
                "quantity": str(n["quantity"]),
                "makerFee": str(n["makerFee"]),
                "takerFee": str(n["takerFee"]),
            }
        )
    return Expected(book, prices, open_orders, fills)


# -- the flow ----------------------------------------------------------------------------------


@dataclass
class Flow:
    """A seeded random flow of wallet transactions, submitted to the devnet."""

    chain: Chain
    rng: random.Random
    markets: list[MarketRef]
    wallets: list[DevnetWallet]
    closed: set[str] = field(default_factory=set)
    submitted: int = 0
    refused: int = 0

    def shares(self, w: DevnetWallet, m: MarketRef, outcome: Outcome) -> int:
        """The wallet's free shares of one outcome (resting sells hold theirs in the contract)."""
        balance: Any = self.chain.node.balance(w.address)
        token = m.share_id(outcome).hex()
        return sum(int(t["amount"]) for t in balance.get("tokenBalances", []) if t["id"] == token)

    def price(self, side: Side) -> int:
        # Half around the middle, so orders cross (normal trades, mints, merges) and partly
        # fill; half out of reach of any crossing (bids low, asks high) on a coarse grid, so the
        # books keep levels, several orders deep.
        if self.rng.random() < 0.5:
            return self.rng.randint(40, 60) * 10 + self.rng.choice([0, 5])
        if side is Side.BUY:
            return self.rng.randint(1, 14) * 25
        return self.rng.randint(26, 39) * 25

    def step(self) -> None:
        chain, rng = self.chain, self.rng
        m = rng.choice([m for m in self.markets if m.address not in self.closed])
        w = rng.choice(self.wallets)
        roll = rng.random()
        outcome = rng.choice([Outcome.YES, Outcome.NO])
        try:
            if roll < 0.15:
                mine = [o for o in chain.resting(m) if o["owner"] == w.address]
                if mine:
                    chain.cancel(w, m, int(str(rng.choice(mine)["orderId"])))
                    self.submitted += 1
                return
            if roll < 0.55:
                free = self.shares(w, m, outcome) // LOT
                if free:
                    chain.sell(w, m, outcome, self.price(Side.SELL), rng.randint(1, min(free, 5)))
                    self.submitted += 1
                    return
            chain.buy(w, m, outcome, self.price(Side.BUY), rng.randint(1, 5))
            self.submitted += 1
        except DevnetRefused:
            self.refused += 1  # e.g. a wallet out of collateral: refused at the build

    def run(self, steps: int) -> None:
        for _ in range(steps):
            self.step()


def flow_summary(chain: Chain, markets: list[MarketRef]) -> dict[str, set[str]]:
    """What the flow did, from the contracts' events: trade kinds, cancel reasons, partial
    fills (a taker resting after some matching, a maker still resting after a trade)."""
    kinds: set[str] = set()
    reasons: set[str] = set()
    partial: set[str] = set()
    for m in markets:
        remaining: dict[int, int] = {}
        for e in chain_events(chain, m.address):
            n = e.named
            if e.index == ORDER_PLACED:
                remaining[int(n["orderId"])] = int(n["remaining"])
                if 0 < int(n["remaining"]) < int(n["quantity"]):
                    partial.add("taker")
            elif e.index == TRADE:
                kinds.add(TRADE_KINDS[int(n["kind"])])
                maker = int(n["makerOrderId"])
                remaining[maker] -= int(n["quantity"])
                if remaining[maker] > 0:
                    partial.add("maker")
            elif e.index == ORDER_CANCELLED:
                reasons.add(CANCEL_REASONS[int(n["reason"])])
    return {"kinds": kinds, "reasons": reasons, "partial": partial}


# -- the API's side ----------------------------------------------------------------------------


async def every_page(
    client: httpx.AsyncClient, path: str, key: str, **params: str | int
) -> list[dict[str, Any]]:
    """Every item of a cursor-paged list."""
    items: list[dict[str, Any]] = []
    while True:
        r = await client.get(path, params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        items.extend(body[key])
        cursor = body["pagination"]["nextCursor"]
        if cursor is None:
            return items
        params["cursor"] = cursor


def restricted(items: list[dict[str, Any]], like: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` with the keys of the expected items only."""
    keys = like[0].keys() if like else ()
    return [{k: item[k] for k in keys} for item in items]


async def assert_api_serves_the_chain(
    client: httpx.AsyncClient, chain: Chain, markets: list[MarketRef]
) -> int:
    """Compare every market; returns how many levels held more than one order."""
    shared_levels = 0
    for m in markets:
        expected = expected_of_chain(chain, m)
        path = f"/v1/markets/{m.address}/orderbook"

        async def caught_up(path: str = path, version: int = expected.book["version"]) -> bool:
            r = await client.get(path, params={"depth": DEPTH})
            return r.status_code == 200 and r.json()["version"] == version

        # Indexed and followed by the books: the version counts every order event on chain.
        # (A generous limit: on a loaded machine the first round's catch-up takes seconds.)
        await eventually(caught_up, timeout=60)
        r = await client.get(path, params={"depth": DEPTH})
        book = r.json()
        assert int(book.pop("eventId")) > 0
        assert book == expected.book, m.address
        shared_levels += sum(
            level["orderCount"] > 1
            for outcome in ("yes", "no")
            for side in ("bids", "asks")
            for level in book[outcome][side]
        )

        r = await client.get(f"/v1/markets/{m.address}/prices")
        assert r.status_code == 200, r.text
        assert r.json() == expected.prices, m.address

        # Small pages, so paging is crossed too.
        orders_path = f"/v1/markets/{m.address}/orders"
        served = await every_page(client, orders_path, "orders", status="open", limit=7)
        assert restricted(served, expected.open_orders) == expected.open_orders, m.address
        assert all(o["closedAt"] is None and o["closedTxId"] is None for o in served)

        fills_path = f"/v1/markets/{m.address}/fills"
        served = await every_page(client, fills_path, "fills", limit=50)
        assert restricted(served, expected.fills) == expected.fills, m.address
    return shared_levels


# -- the test ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [11, 404, 2026])
async def test_the_api_serves_the_contract_state_after_a_random_flow(
    chain: Chain, db_url: str, app_settings: Settings, seed: int
) -> None:
    rng = random.Random(seed)
    markets = [chain.create_market(f"Market {i} of seed {seed}?", "test") for i in range(3)]
    wallets = [chain.wallet() for _ in range(4)]
    for i, m in enumerate(markets):  # every wallet gets shares of both outcomes through mints
        for a, b in ((0, 1), (2, 3), (1, 2), (3, 0)):
            price = rng.randint(45, 55) * 10
            chain.buy(wallets[a], m, Outcome.YES, price, 6)
            chain.buy(wallets[b], m, Outcome.NO, 1000 - price + 5 * (i % 2), 6)
    flow = Flow(chain, rng, markets, wallets)

    # The suite's test settings (budgets no test reaches, …) on this test's database and devnet.
    settings = app_settings.model_copy(
        update={
            "database_url": db_url,
            "node_url": chain.url,
            "indexer": IndexerSettings(poll_interval_seconds=0.02),
        }
    )

    def late_market() -> None:
        """A market created while the app runs, traded at once."""
        markets.append(chain.create_market(f"Late market of seed {seed}?", "test"))
        flow.run(30)

    def resolution() -> None:
        """One market resolved: its resting orders are cancelled, its book empties."""
        chain.resolve(markets[0], Resolution.YES)
        flow.closed.add(markets[0].address)
        flow.run(25)

    rounds: list[Callable[[], None]] = [
        lambda: flow.run(30),
        late_market,
        lambda: flow.run(30),
        resolution,
    ]
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            shared_levels = 0
            for run_round in rounds:
                # The app indexes and serves while the round's transactions land.
                await asyncio.to_thread(run_round)
                shared_levels += await assert_api_serves_the_chain(client, chain, markets)

    assert flow.submitted > 100
    assert shared_levels > 0  # levels aggregated several orders
    done = flow_summary(chain, markets)
    assert done["kinds"] == {"normal", "mint", "merge"}
    assert done["reasons"] == {"owner", "self-trade", "resolved"}
    assert done["partial"] == {"taker", "maker"}
