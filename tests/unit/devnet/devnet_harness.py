"""The devnet tests' harness: a node on a controlled clock and helpers around its facade.

Everything goes through the node's facade with real keys and signatures; nothing of the devnet
is mocked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from predmarket.alephium.constants import DUST_AMOUNT, MIN_GAS_PRICE
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.script import TxScript
from predmarket.alephium.tx import (
    SAME_AS_PREVIOUS,
    AssetOutput,
    Input,
    P2PKHUnlock,
    Token,
    UnsignedTx,
    encode_unsigned_tx,
)
from predmarket.devnet import calls
from predmarket.devnet.calls import Call, MarketRef
from predmarket.devnet.errors import NodeError
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.wallet import DevnetWallet, Sent
from predmarket.exchange import Outcome, Resolution, Side

START_MS = 1_700_000_000_000
HOUR_MS = 3_600_000


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: int = START_MS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@dataclass
class Harness:
    node: DevnetNode
    clock: Clock
    data_dir: Path
    markets: list[MarketRef] = field(default_factory=list)

    @property
    def config(self) -> Any:
        return self.node.config

    @property
    def operator(self) -> DevnetWallet:
        return DevnetWallet(self.node.config.operator_private_key)

    @property
    def collateral(self) -> bytes:
        return bytes(self.node.config.collateral_token_id)

    def wallet(self, key_type: str = "default", group: int | None = None) -> DevnetWallet:
        """A new wallet funded by the faucet (100 ALPH and 10,000 collateral)."""
        w = DevnetWallet.generate(key_type, group)
        self.node.faucet(w.address)
        return w

    def alph(self, who: DevnetWallet | str) -> int:
        address = who if isinstance(who, str) else who.address
        return int(str(self.node.balance(address)["balance"]))

    def token(self, who: DevnetWallet | str, token_id: bytes) -> int:
        address = who if isinstance(who, str) else who.address
        balances = self.node.balance(address).get("tokenBalances", [])
        assert isinstance(balances, list)
        return sum(int(t["amount"]) for t in balances if t["id"] == token_id.hex())

    def contract_asset(self, address: str) -> tuple[int, dict[bytes, int]]:
        asset = self.node.contract_state(address)["asset"]
        assert isinstance(asset, dict)
        tokens = {bytes.fromhex(t["id"]): int(t["amount"]) for t in asset["tokens"]}
        return int(asset["attoAlphAmount"]), tokens

    def fee(self, sent: Sent) -> int:
        return int(str(sent.build["gasAmount"])) * int(str(sent.build["gasPrice"]))

    def create_market(
        self, question: str = "Will it rain?", close_in_ms: int = HOUR_MS
    ) -> MarketRef:
        call = calls.create_market(
            self.config.registry_id, question, "weather", self.clock.now + close_in_ms, b"{}"
        )
        self.operator.call(self.node, call)
        if not self.node.automine:
            self.node.mine()
        events = self.node.events(self.config.registry_address, 0)["events"]
        assert isinstance(events, list)
        ref = MarketRef.from_event(events[-1]["fields"], self.collateral)
        self.markets.append(ref)
        return ref

    def place(
        self,
        wallet: DevnetWallet,
        market: MarketRef,
        side: Side,
        outcome: Outcome,
        price: int,
        quantity: int,
        **kw: int,
    ) -> Sent:
        return wallet.call(
            self.node, calls.place_order(market, side, outcome, price, quantity, **kw)
        )

    def run(self, wallet: DevnetWallet, call: Call) -> Sent:
        return wallet.call(self.node, call)

    def cancel(self, wallet: DevnetWallet, market: MarketRef, order_id: int) -> Sent:
        return wallet.call(self.node, calls.cancel_order(market, order_id))

    def resolve(self, market: MarketRef, resolution: Resolution) -> Sent:
        return self.operator.call(self.node, calls.resolve(market, resolution))

    def claim(self, wallet: DevnetWallet, market: MarketRef, yes: int, no: int) -> Sent:
        return wallet.call(self.node, calls.claim(market, yes, no))

    def events(self, address: str) -> list[dict[str, Any]]:
        """Every event of a contract, following nextStart."""
        out: list[dict[str, Any]] = []
        start = 0
        try:
            while True:
                page = self.node.events(address, start)
                events = page["events"]
                assert isinstance(events, list)
                out += events
                if page["nextStart"] == start:
                    return out
                start = int(str(page["nextStart"]))
        except NodeError as e:
            if e.status == 404 and start == 0:
                return []
            raise

    def snapshot(self, *wallets: DevnetWallet) -> dict[str, Any]:
        """Everything observable that a rejected transaction must leave unchanged."""
        doc: dict[str, Any] = {
            "tip": self.node.tip(),
            "totals": self.node.ledger_totals(),
            "wallets": {
                w.address: (self.node.balance(w.address), self.node.utxos(w.address))
                for w in wallets
            },
        }
        for ref in self.markets:
            doc[ref.address] = (
                self.node.contract_state(ref.address),
                self.node.market_orders(ref.address),
                self.events(ref.address),
            )
        return doc


def craft(
    h: Harness,
    wallet: DevnetWallet,
    script: TxScript,
    *,
    alph: int = 0,
    tokens: Sequence[tuple[bytes, int]] = (),
    gas: int = 300_000,
) -> tuple[bytes, str]:
    """A script transaction made by hand from all of ``wallet``'s outputs (not by the node's
    builder, which refuses what its simulation fails): returns its bytes and signature."""
    utxos = h.node.utxos(wallet.address)["utxos"]
    assert isinstance(utxos, list)
    inputs = tuple(
        Input(
            u["ref"]["hint"],
            bytes.fromhex(u["ref"]["key"]),
            P2PKHUnlock(wallet.public_key) if i == 0 else SAME_AS_PREVIOUS,
        )
        for i, u in enumerate(utxos)
    )
    have_alph = sum(int(u["amount"]) for u in utxos)
    have: dict[bytes, int] = {}
    for u in utxos:
        for t in u["tokens"]:
            have[bytes.fromhex(t["id"])] = have.get(bytes.fromhex(t["id"]), 0) + int(t["amount"])
    approved = dict(tokens)
    outputs = [
        AssetOutput(DUST_AMOUNT, wallet.lockup, tokens=(Token(t, a - approved.get(t, 0)),))
        for t, a in have.items()
        if a - approved.get(t, 0)
    ]
    change = have_alph - alph - gas * MIN_GAS_PRICE - DUST_AMOUNT * len(outputs)
    outputs.append(AssetOutput(change, wallet.lockup))
    tx = UnsignedTx(0, h.config.network_id, script, gas, MIN_GAS_PRICE, inputs, tuple(outputs))
    raw = encode_unsigned_tx(tx)
    return raw, wallet.sign(blake2b256(raw))


def expect_error(fn: Callable[[], object], status: int, *fragments: str) -> NodeError:
    """Call ``fn`` and check it raises a NodeError with ``status`` and every fragment."""
    with pytest.raises(NodeError) as info:
        fn()
    error = info.value
    assert error.status == status, error.detail
    for fragment in fragments:
        assert fragment in error.detail, error.detail
    return error


DUST = DUST_AMOUNT
