"""Random order flows through a real devnet: money is conserved and events replay the books.

Several faucet-funded wallets (both key types) place and cancel orders on two markets through
the node's facade — built, signed with ``alephium.signing``, submitted — in automine or interval
mode; some orders are invalid on purpose and must change nothing. Then the markets are resolved
and every wallet claims. Throughout:

- the collateral held by all wallets and contracts equals what the faucet minted, to the base
  unit, and every market holds exactly what its accounting says;
- ALPH is conserved: genesis supply = wallets + contracts + gas fees;
- every market's book (resting orders, supplies, escrows, fees) equals the book obtained by
  replaying its events through a fresh ``predmarket.exchange.Market``, and the replay's trades
  are the ``Trade`` events.
"""

from __future__ import annotations

import random
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from predmarket.alephium.address import contract_address
from predmarket.alephium.constants import MINIMAL_CONTRACT_DEPOSIT
from predmarket.devnet import calls
from predmarket.devnet.abi import (
    MARKET,
    MARKET_REGISTRY,
    OUTCOMES_BY_CODE,
    RESOLUTIONS_BY_CODE,
    SIDES_BY_CODE,
    TRADE_KIND_CODES,
    decode_event,
)
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.errors import NodeError
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Market, Outcome, Resolution, Side, Trade

STEP = 10**7
SHARE = 10**18
N_WALLETS = 4


def random_flow(seed: int, length: int) -> list[tuple[Any, ...]]:
    """Operations drawn uniformly (hypothesis picks the seed): placements around the middle
    price so yes and no orders often cross, cancellations, and invalid orders."""
    rng = random.Random(seed)
    flow: list[tuple[Any, ...]] = []
    for _ in range(length):
        wallet, market = rng.randrange(N_WALLETS), rng.randrange(2)
        kind = rng.choices(["place", "cancel", "bad"], weights=[6, 2, 1])[0]
        if kind == "place":
            side, outcome = rng.choice(list(Side)), rng.choice(list(Outcome))
            flow.append(
                ("place", wallet, market, side, outcome, rng.randint(430, 570), rng.randint(1, 40))
            )
        elif kind == "cancel":
            flow.append(("cancel", wallet, market, rng.randrange(10)))
        else:
            flow.append(("bad", wallet, market, rng.choice([0, 1000, 7])))
    return flow


class Flow:
    def __init__(self, data_dir: Path, automine: bool) -> None:
        self.now = 1_700_000_000_000
        self.node = DevnetNode.open(
            data_dir, clock_ms=lambda: self.now, faucet_cooldown_ms=0, automine=automine
        )
        self.config = self.node.config
        self.operator = DevnetWallet(self.config.operator_private_key)
        # both key types: even wallets groupless (in groups 0 and 2), odd ones P2PKH
        self.wallets = [
            DevnetWallet.generate("gl-secp256k1", i) if i % 2 == 0 else DevnetWallet.generate()
            for i in range(N_WALLETS)
        ]
        for w in self.wallets:
            self.node.faucet(w.address)
        for question in ("A?", "B?"):
            call = calls.create_market(self.config.registry_id, question, "c", self.now + 10**9)
            self.operator.call(self.node, call)
        self.settle()
        events = self.node.events(self.config.registry_address, 0)["events"]
        assert isinstance(events, list)
        self.markets = [
            MarketRef.from_event(e["fields"], self.config.collateral_token_id) for e in events
        ]

    def settle(self) -> None:
        if not self.node.automine:
            self.node.mine()

    def token(self, w: DevnetWallet | str, token_id: bytes) -> int:
        address = w if isinstance(w, str) else w.address
        balances = self.node.balance(address, mempool=True).get("tokenBalances", [])
        assert isinstance(balances, list)
        return sum(int(t["amount"]) for t in balances if t["id"] == token_id.hex())

    def observable(self) -> Any:
        return (
            self.node.ledger_totals(),
            self.node.tip(),
            [self.node.balance(w.address, mempool=True) for w in self.wallets],
            [self.node.market_orders(m.address, mempool=True) for m in self.markets],
        )

    def run(self, op: tuple[Any, ...]) -> None:
        kind, wi, mi = op[0], op[1], op[2]
        w, m = self.wallets[wi], self.markets[mi]
        if kind == "place":
            _, _, _, side, outcome, price, steps = op
            quantity = steps * STEP * 10**9  # 0.01 .. 0.4 shares
            if side is Side.SELL:
                quantity = min(quantity, self.token(w, m.share_id(outcome)) // STEP * STEP)
                if not quantity:
                    return
            w.call(self.node, calls.place_order(m, side, outcome, price, quantity))
        elif kind == "cancel":
            resting = self.node.market_orders(m.address, mempool=True)
            mine = [o for o in resting if o["owner"] == w.address]
            if mine:
                order = mine[op[3] % len(mine)]
                w.call(self.node, calls.cancel_order(m, int(str(order["orderId"]))))
        else:
            bad_price = op[3]
            quantity = SHARE + 1 if bad_price == 7 else SHARE
            price = 500 if bad_price == 7 else bad_price
            before = self.observable()
            try:
                w.call(self.node, calls.place_order(m, Side.BUY, Outcome.YES, price, quantity))
            except NodeError as e:
                assert e.status == 400
                assert (
                    f"AssertionFailedWithErrorCode({m.address}, {12 if bad_price == 7 else 13})"
                    in e.detail
                )
            else:
                raise AssertionError("an invalid order was accepted")
            assert self.observable() == before

    def events(self, address: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        start = 0
        while True:
            try:
                page = self.node.events(address, start)
            except NodeError as e:
                assert e.status == 404 and start == 0
                return out
            events = page["events"]
            assert isinstance(events, list)
            out += events
            if page["nextStart"] == start:
                return out
            start = int(str(page["nextStart"]))

    def check(self) -> None:
        self.settle()
        node, cfg = self.node, self.config
        totals = node.ledger_totals()
        assert int(str(totals["genesisAlph"])) == sum(
            int(str(totals[k])) for k in ("walletsAlph", "contractsAlph", "gasFees")
        )
        minted = N_WALLETS * cfg.faucet_collateral_amount
        supply = int(node.contract_state(cfg.collateral_token_address)["mutFields"][0]["value"])
        assert supply == minted
        held = sum(self.token(w, cfg.collateral_token_id) for w in self.wallets)
        for m in self.markets:
            held += self.contract_tokens(m.address).get(cfg.collateral_token_id, 0)
        assert held == minted
        for m in self.markets:
            self.check_market(m)

    def contract_tokens(self, address: str) -> dict[bytes, int]:
        asset = self.node.contract_state(address)["asset"]
        assert isinstance(asset, dict)
        return {bytes.fromhex(t["id"]): int(t["amount"]) for t in asset["tokens"]}

    def check_market(self, m: MarketRef) -> None:
        replayed = replay(self.events(m.address))
        orders = [
            (
                int(str(o["orderId"])),
                o["owner"],
                o["side"],
                o["outcome"],
                o["price"],
                int(str(o["quantity"])),
                int(str(o["remaining"])),
            )
            for o in self.node.market_orders(m.address)
        ]
        assert orders == [
            (o.id, o.owner, o.side.value, o.outcome.value, o.price, o.quantity, o.remaining)
            for o in replayed.orders()
        ]
        fields = [f["value"] for f in self.node.contract_state(m.address)["mutFields"]]
        assert fields[2:11] == [
            str(v)
            for v in (
                replayed.next_order_id,
                replayed.open_order_count,
                replayed.collateral_escrow,
                replayed.shares_escrow(Outcome.YES),
                replayed.shares_escrow(Outcome.NO),
                replayed.yes_supply,
                replayed.no_supply,
                replayed.fees_collected,
                replayed.volume,
            )
        ]
        # ALPH: the market's own deposit plus the deposit of each resting order, no more
        deposits = sum(int(str(o["deposit"])) for o in self.node.market_orders(m.address))
        assert fields[11] == str(deposits)
        asset = self.node.contract_state(m.address)["asset"]
        assert isinstance(asset, dict)
        assert int(asset["attoAlphAmount"]) == MINIMAL_CONTRACT_DEPOSIT + deposits
        tokens = self.contract_tokens(m.address)
        assert tokens.get(m.collateral_id, 0) == replayed.collateral_held
        assert tokens.get(m.yes_id, 0) == replayed.shares_escrow(Outcome.YES)
        assert tokens.get(m.no_id, 0) == replayed.shares_escrow(Outcome.NO)
        for token_id, outstanding in (
            (m.yes_id, replayed.yes_supply),
            (m.no_id, replayed.no_supply),
        ):
            state = self.node.contract_state(contract_address(token_id))
            assert int(state["mutFields"][0]["value"]) == outstanding
            wallets = sum(self.token(w, token_id) for w in self.wallets)
            assert wallets + tokens.get(token_id, 0) == outstanding


def replay(events: list[dict[str, Any]]) -> Market:
    """Rebuild a market from its events alone, checking its Trade events on the way."""
    market = Market()
    expected: deque[Trade] = deque()
    for item in events:
        name = MARKET.event(item["eventIndex"]).name
        f = decode_event(MARKET, item["eventIndex"], item["fields"])
        if name == "OrderPlaced":
            assert not expected
            result = market.place(
                str(f["owner"]),
                SIDES_BY_CODE[int(f["side"])],
                OUTCOMES_BY_CODE[int(f["outcome"])],
                int(f["price"]),
                int(f["quantity"]),
            )
            assert (result.order_id, result.remaining) == (f["orderId"], f["remaining"])
            expected.extend(result.trades)
        elif name == "Trade":
            t = expected.popleft()
            assert f == {
                "tradeId": t.trade_id,
                "kind": TRADE_KIND_CODES[t.kind],
                "makerOrderId": t.maker_order_id,
                "makerOwner": t.maker_owner,
                "makerSide": 0 if t.maker_side is Side.BUY else 1,
                "makerOutcome": 0 if t.maker_outcome is Outcome.YES else 1,
                "price": t.maker_price,
                "quantity": t.quantity,
                "takerOrderId": t.taker_order_id,
                "takerOwner": t.taker_owner,
                "makerFee": t.maker_fee,
                "takerFee": t.taker_fee,
            }
        elif name == "OrderCancelled" and f["reason"] == 0:
            market.cancel(str(f["owner"]), int(f["orderId"]))
        elif name == "MarketResolved":
            market.resolve(RESOLUTIONS_BY_CODE[int(f["resolution"])])
        elif name == "Claimed":
            market.claim(str(f["owner"]), int(f["yesQuantity"]), int(f["noQuantity"]))
    assert not expected
    return market


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    seed=st.integers(0, 2**32),
    length=st.integers(10, 40),
    automine=st.booleans(),
    mine_every=st.integers(1, 6),
    resolutions=st.tuples(st.sampled_from(list(Resolution)), st.sampled_from(list(Resolution))),
)
def test_random_flows_conserve_money_and_replay(
    seed: int,
    length: int,
    automine: bool,
    mine_every: int,
    resolutions: tuple[Resolution, Resolution],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Flow(Path(tmp) / "devnet", automine)
        try:
            # every flow starts with a mint on each market, so there are shares to sell
            for market in (0, 1):
                f.run(("place", 1, market, Side.BUY, Outcome.YES, 600, 30))
                f.run(("place", 2, market, Side.BUY, Outcome.NO, 400, 30))
            for i, op in enumerate(random_flow(seed, length)):
                f.run(op)
                if not automine and i % mine_every == 0:
                    f.node.mine()
                f.now += 1_000
            f.check()
            kinds = sorted(
                {
                    decode_event(MARKET, 1, e["fields"])["kind"]
                    for m in f.markets
                    for e in f.events(m.address)
                    if e["eventIndex"] == 1
                }
            )
            event(f"trade kinds {kinds}")
            for m, resolution in zip(f.markets, resolutions, strict=True):
                f.operator.call(f.node, calls.resolve(m, resolution))
            f.settle()
            for w in f.wallets:
                for m in f.markets:
                    yes, no = f.token(w, m.yes_id), f.token(w, m.no_id)
                    if yes or no:
                        w.call(f.node, calls.claim(m, yes, no))
            f.check()
            for m in f.markets:
                assert f.node.market_orders(m.address) == []
                tokens = f.contract_tokens(m.address)
                assert set(tokens) <= {m.collateral_id}
            assert len(f.events(f.config.registry_address)) == 2
            assert MARKET_REGISTRY.event(0).name == "MarketCreated"
        finally:
            f.node.close()
