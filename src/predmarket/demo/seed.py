"""Seed demo markets through real transactions on a devnet.

Everything goes through the node's REST interface, the way any wallet would do it: the operator
key of the devnet's ``devnet.json`` creates the markets (``createMarket``); four demo wallets,
funded by the devnet faucet, place orders built with ``execute-script``, signed with
:mod:`predmarket.alephium.signing` and submitted. The service's indexer then picks the markets,
orders and fills up from the contracts' events like any others.

First start only: :func:`seed_once` writes ``demo.json`` into the devnet's data dir (the markets
and the demo wallets' devnet-only test keys) and seeds nothing when that file exists or when the
registry already holds markets (a seeding that stopped half-way is not repeated on top of itself).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Final

import httpx

from predmarket.alephium.address import KeyType, format_address, lockup_from_public_key
from predmarket.alephium.script import encode_script
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id
from predmarket.demo.catalog import CATALOG, Activity, DemoMarket
from predmarket.devnet import calls
from predmarket.devnet.abi import MARKET, TRADE_KINDS_BY_CODE, decode_event
from predmarket.devnet.genesis import CONTRACT_GROUP, DevnetConfig
from predmarket.exchange import QUANTITY_STEP, SHARE, Outcome, Side
from predmarket.node.client import NodeClient

MARKER_FILE: Final = "demo.json"
MARKER_FORMAT: Final = 1
#: Seconds to wait for one transaction to be mined (automine: at once).
CONFIRM_TIMEOUT_S: Final = 60.0
_DAY_MS: Final = 86_400_000


class DemoError(Exception):
    """The demo cannot be seeded here; the message says why."""


@dataclass(frozen=True)
class DemoWallet:
    """A demo trader: a devnet-only test key."""

    name: str
    private_key: bytes
    key_type: str = KeyType.DEFAULT

    @cached_property
    def public_key(self) -> bytes:
        return public_key_from_private(self.private_key)

    @cached_property
    def address(self) -> str:
        # A groupless key trades from group 0, where every protocol contract lives (devnet.md).
        group = CONTRACT_GROUP if self.key_type == KeyType.GL_SECP256K1 else None
        return format_address(lockup_from_public_key(self.public_key, self.key_type, group))

    @property
    def group(self) -> int | None:
        return CONTRACT_GROUP if self.key_type == KeyType.GL_SECP256K1 else None


@dataclass
class SeededMarket:
    address: str
    question: str
    category: str
    tags: tuple[str, ...]
    event_slug: str | None
    orders: int = 0
    trades: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, object]:
        return {
            "address": self.address,
            "question": self.question,
            "category": self.category,
            "tags": list(self.tags),
            "eventSlug": self.event_slug,
            "orders": self.orders,
            "trades": dict(sorted(self.trades.items())),
        }


@dataclass
class DemoResult:
    markets: list[SeededMarket]
    wallets: list[DemoWallet]
    transactions: int

    @property
    def trades(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for market in self.markets:
            total.update(market.trades)
        return total

    def summary(self) -> str:
        """One line: what was seeded."""
        events = {m.event_slug for m in self.markets if m.event_slug}
        categories = sorted({m.category for m in self.markets})
        trades = self.trades
        kinds = ", ".join(f"{trades[k]} {k}" for k in ("normal", "mint", "merge"))
        return (
            f"{len(self.markets)} markets in {len(categories)} categories "
            f"({', '.join(categories)}), {len(events)} linked event group(s), "
            f"{sum(m.orders for m in self.markets)} orders, "
            f"{sum(trades.values())} trades ({kinds}), {len(self.wallets)} wallets, "
            f"{self.transactions} transactions"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "format": MARKER_FORMAT,
            "warning": "devnet-only test keys: never use them for anything of value",
            "seededAt": int(time.time() * 1000),
            "markets": [m.to_json() for m in self.markets],
            "wallets": [
                {
                    "name": w.name,
                    "address": w.address,
                    "keyType": str(w.key_type),
                    "publicKey": w.public_key.hex(),
                    "privateKey": w.private_key.hex(),
                }
                for w in self.wallets
            ],
        }


@dataclass(frozen=True, slots=True)
class _Order:
    wallet: str
    side: Side
    outcome: Outcome
    price: int
    quantity: int


def _q(shares: int, divisor: int = 1) -> int:
    """``shares / divisor`` shares in base units, rounded down to the quantity step."""
    return shares * SHARE // divisor // QUANTITY_STEP * QUANTITY_STEP


def trading_plan(market: DemoMarket) -> list[_Order]:
    """The orders a demo market gets, in order (see the module docs of the catalog).

    For a traded market at YES tick ``p`` and size ``s``: alice bids YES at ``p``; bob's NO bid
    at ``1000 - p`` mints ``s`` pairs with it; alice offers half her YES at ``p + 10``, carol buys
    a quarter of ``s`` of it (a normal trade) and bob's NO offer at ``990 - p`` merges with the
    rest. Then the books get resting orders that never cross: YES bids below ``p`` (carol), NO
    bids below ``990 - p`` (dave), YES offers from ``p + 20`` (alice) and NO offers from
    ``1020 - p`` (bob).
    """
    if market.activity is Activity.NONE:
        return []
    p, s = market.yes_tick, market.size
    buy, sell, yes, no = Side.BUY, Side.SELL, Outcome.YES, Outcome.NO
    opening = [
        _Order("alice", buy, yes, p, _q(s)),
        _Order("bob", buy, no, 1000 - p, _q(s)),  # mint
        _Order("alice", sell, yes, p + 10, _q(s, 2)),
        _Order("carol", buy, yes, p + 10, _q(s, 4)),  # normal
        _Order("bob", sell, no, 990 - p, _q(s, 4)),  # merge
    ]
    bids = [
        _Order("carol", buy, yes, p - 10, _q(s, 5)),
        _Order("carol", buy, yes, p - 20, _q(s, 4)),
        _Order("carol", buy, yes, p - 40, _q(s, 2)),
        _Order("dave", buy, no, 980 - p, _q(s, 5)),
        _Order("dave", buy, no, 970 - p, _q(3 * s, 10)),
        _Order("dave", buy, no, 950 - p, _q(s, 2)),
    ]
    if market.activity is Activity.BOOK:
        return bids
    # alice holds s/2 YES after the opening trades, bob 3s/4 NO.
    offers = [
        _Order("alice", sell, yes, p + 20, _q(s, 10)),
        _Order("alice", sell, yes, p + 30, _q(s, 5)),
        _Order("alice", sell, yes, p + 60, _q(s, 5)),
        _Order("bob", sell, no, 1020 - p, _q(s, 5)),
        _Order("bob", sell, no, 1040 - p, _q(s, 4)),
    ]
    return opening + bids + offers


class _Seeder:
    def __init__(self, node: NodeClient, devnet: httpx.AsyncClient, config: DevnetConfig) -> None:
        self.node = node
        self.devnet = devnet
        self.config = config
        self.transactions = 0
        self.operator = DemoWallet("operator", config.operator_private_key)

    async def check_node(self) -> None:
        """The node must be the devnet whose keys we hold (its registry and operator)."""
        try:
            response = await self.devnet.get("/devnet/config")
        except httpx.TransportError as e:
            raise DemoError(f"no node answers at {self.node.base_url} ({e})") from None
        if response.status_code != 200:
            raise DemoError(
                f"{self.node.base_url} is not a predmarket devnet (GET /devnet/config: "
                f"{response.status_code}); the demo needs the devnet's faucet and operator key"
            )
        doc = response.json()
        registry = doc.get("marketRegistry", {}).get("address")
        operator = doc.get("operator", {}).get("address")
        if (registry, operator) != (self.config.registry_address, self.config.operator_address):
            raise DemoError(
                f"the devnet at {self.node.base_url} is not the one whose keys are in the "
                "given devnet directory (different registry or operator)"
            )

    async def confirmed(self, tx_id: str) -> None:
        deadline = time.monotonic() + CONFIRM_TIMEOUT_S
        while not (await self.node.tx_status(tx_id)).confirmed:
            if time.monotonic() > deadline:
                raise DemoError(f"transaction {tx_id} was not mined in {CONFIRM_TIMEOUT_S:g} s")
            await asyncio.sleep(0.02)

    async def call(self, wallet: DemoWallet, call: calls.Call) -> str:
        """Build, sign, submit and wait for one contract call; returns its txId."""
        built = await self.node.execute_script(
            from_public_key=wallet.public_key,
            from_public_key_type=str(wallet.key_type),
            bytecode=encode_script(call.script),
            atto_alph_amount=call.alph,
            tokens=call.tokens,
            group=wallet.group,
        )
        signature = sign_tx_id(wallet.private_key, bytes.fromhex(built.tx_id))
        submitted = await self.node.submit(built.unsigned_tx, signature)
        await self.confirmed(submitted.tx_id)
        self.transactions += 1
        return submitted.tx_id

    async def fund(self, wallet: DemoWallet) -> None:
        response = await self.devnet.post("/devnet/faucet", json={"address": wallet.address})
        if response.status_code != 200:
            raise DemoError(f"the faucet refused {wallet.address}: {response.text}")
        await self.confirmed(str(response.json()["txId"]))
        self.transactions += 1

    async def create(self, market: DemoMarket, now_ms: int) -> calls.MarketRef:
        registry = self.config.registry_address
        start = await self.node.events_current_count(registry)
        call = calls.create_market(
            self.config.registry_id,
            market.question,
            market.category,
            now_ms + market.close_in_days * _DAY_MS,
            market.metadata(),
        )
        tx_id = await self.call(self.operator, call)
        page = await self.node.contract_events(registry, start)
        for event in page.events:
            if event.tx_id == tx_id and event.event_index == 0:
                return calls.MarketRef.from_event(
                    list(event.fields), self.config.collateral_token_id
                )
        raise DemoError(f"createMarket {tx_id} logged no MarketCreated event")

    async def trades_of(self, address: str) -> tuple[int, Counter[str]]:
        """(orders placed, trades by kind) from the market contract's own events."""
        orders, trades, start = 0, Counter[str](), 0
        while True:
            page = await self.node.contract_events(address, start)
            for event in page.events:
                if event.event_index == 0:
                    orders += 1
                elif event.event_index == 1:
                    kind = decode_event(MARKET, 1, list(event.fields))["kind"]
                    assert isinstance(kind, int)
                    trades[TRADE_KINDS_BY_CODE[kind].value] += 1
            if page.next_start == start:
                return orders, trades
            start = page.next_start


async def seed(
    node_url: str,
    config: DevnetConfig,
    *,
    catalog: Sequence[DemoMarket] = CATALOG,
    now_ms: int | None = None,
) -> DemoResult:
    """Create and trade the ``catalog`` markets on the devnet at ``node_url`` (no marker)."""
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    async with (
        NodeClient(node_url, timeout_s=30.0) as node,
        httpx.AsyncClient(base_url=node_url.rstrip("/"), timeout=30.0) as devnet,
    ):
        seeder = _Seeder(node, devnet, config)
        await seeder.check_node()
        wallets = {
            "alice": DemoWallet("alice", generate_private_key()),
            "bob": DemoWallet("bob", generate_private_key()),
            "carol": DemoWallet("carol", generate_private_key()),
            "dave": DemoWallet("dave", generate_private_key(), KeyType.GL_SECP256K1),
        }
        for wallet in wallets.values():
            await seeder.fund(wallet)
        seeded: list[SeededMarket] = []
        for market in catalog:
            ref = await seeder.create(market, now)
            for order in trading_plan(market):
                call = calls.place_order(
                    ref, order.side, order.outcome, order.price, order.quantity
                )
                await seeder.call(wallets[order.wallet], call)
            row = SeededMarket(
                ref.address, market.question, market.category, market.tags, market.event_slug
            )
            row.orders, row.trades = await seeder.trades_of(ref.address)
            seeded.append(row)
        return DemoResult(seeded, list(wallets.values()), seeder.transactions)


@dataclass(frozen=True, slots=True)
class DemoOutcome:
    """What :func:`seed_once` did: ``result`` when it seeded, else ``skipped`` says why."""

    result: DemoResult | None
    skipped: str | None = None


def marker_path(devnet_dir: Path) -> Path:
    return devnet_dir / MARKER_FILE


def _write_marker(path: Path, result: DemoResult) -> None:
    tmp = path.with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)


def load_config(devnet_dir: Path) -> DevnetConfig:
    config = DevnetConfig.load(devnet_dir)
    if config is None:
        raise DemoError(f"no devnet keys in {devnet_dir} (devnet.json is missing)")
    return config


async def seed_once(node_url: str, devnet_dir: Path, *, force: bool = False) -> DemoOutcome:
    """Seed on first start: skipped when ``demo.json`` exists or the chain has markets."""
    marker = marker_path(devnet_dir)
    if marker.exists() and not force:
        return DemoOutcome(None, f"already seeded ({marker})")
    config = load_config(devnet_dir)
    if not force:
        async with NodeClient(node_url) as node:
            state = await node.contract_state(config.registry_address)
        existing = int(str(state.mut_fields[0]["value"]))
        if existing:
            return DemoOutcome(None, f"the chain already has {existing} market(s)")
    result = await seed(node_url, config)
    _write_marker(marker, result)
    return DemoOutcome(result)
