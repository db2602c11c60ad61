"""The contracts: registry, market orders, trades of every kind, resolution, claims, events.

Balances are checked exactly for every wallet and contract involved: collateral to the base unit,
ALPH to the attoALPH (gas, deposits and the dust of token outputs included).
"""

from __future__ import annotations

from typing import Any

import pytest
from devnet_harness import DUST, HOUR_MS, Harness, craft, expect_error

from predmarket.alephium.address import contract_address
from predmarket.devnet import calls
from predmarket.devnet.abi import (
    MARKET,
    MARKET_REGISTRY,
    ORDER_DEPOSIT,
    call_script,
    decode_event,
)
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Resolution, Side, buy_lock, fee, notional

SHARE = 10**18
BUY, SELL = Side.BUY, Side.SELL
YES, NO = Outcome.YES, Outcome.NO


def market_events(h: Harness, m: MarketRef) -> list[tuple[str, dict[str, Any]]]:
    return [
        (MARKET.event(e["eventIndex"]).name, decode_event(MARKET, e["eventIndex"], e["fields"]))
        for e in h.events(m.address)
    ]


def mut(h: Harness, m: MarketRef) -> dict[str, int | bool]:
    fields = h.node.contract_state(m.address)["mutFields"]
    assert isinstance(fields, list)
    out: dict[str, int | bool] = {}
    for spec, f in zip(MARKET.mut_fields, fields, strict=True):
        out[spec.name] = f["value"] if spec.type == "Bool" else int(f["value"])
    return out


def check_market_assets(h: Harness, m: MarketRef) -> None:
    """The market holds exactly what the exchange accounts for, plus its ALPH deposits."""
    alph, tokens = h.contract_asset(m.address)
    f = mut(h, m)
    assert alph == 10**17 + f["depositsHeld"]
    if f["resolved"]:
        yes_ticks, no_ticks = {0: (1000, 0), 1: (0, 1000), 2: (500, 500)}[int(f["resolution"])]
        backing = (f["yesSupply"] * yes_ticks + f["noSupply"] * no_ticks) // 1000
    else:
        assert f["yesSupply"] == f["noSupply"]
        backing = f["yesSupply"]
    held = f["collateralEscrow"] + f["feesCollected"] + backing
    assert tokens.get(m.collateral_id, 0) == held
    assert tokens.get(m.yes_id, 0) == f["yesEscrow"]
    assert tokens.get(m.no_id, 0) == f["noEscrow"]
    for token_id, supply in ((m.yes_id, f["yesSupply"]), (m.no_id, f["noSupply"])):
        state = h.node.contract_state(contract_address(token_id))
        assert int(state["mutFields"][0]["value"]) == supply


@pytest.fixture
def m(harness: Harness) -> MarketRef:
    return harness.create_market()


@pytest.fixture
def alice(harness: Harness) -> DevnetWallet:
    return harness.wallet()


@pytest.fixture
def bob(harness: Harness) -> DevnetWallet:
    return harness.wallet()


@pytest.fixture
def carol(harness: Harness) -> DevnetWallet:
    return harness.wallet()


class TestRegistry:
    def test_operator_creates_a_market(self, harness: Harness) -> None:
        h = harness
        op_before = h.alph(h.operator)
        close = h.clock.now + HOUR_MS
        sent = h.operator.call(
            h.node, calls.create_market(h.config.registry_id, "Q?", "sports", close, b'{"t":1}')
        )
        assert h.alph(h.operator) == op_before - 3 * 10**17 - h.fee(sent)
        (event,) = h.events(h.config.registry_address)
        fields = decode_event(MARKET_REGISTRY, 0, event["fields"])
        ref = MarketRef.from_event(event["fields"], h.collateral)
        assert fields["index"] == 0
        assert fields["question"] == b"Q?" and fields["category"] == b"sports"
        assert fields["closeTimeMs"] == close and fields["metadata"] == b'{"t":1}'
        assert fields["creator"] == h.config.operator_address
        assert h.node.contract_state(h.config.registry_address)["mutFields"] == [
            {"type": "U256", "value": "1"}
        ]
        state = h.node.contract_state(ref.address)
        assert state["asset"] == {"attoAlphAmount": str(10**17), "tokens": []}
        imm = state["immFields"]
        assert imm[3] == {"type": "ByteVec", "value": ref.yes_id.hex()}
        for token in (ref.yes_id, ref.no_id):
            state = h.node.contract_state(contract_address(token))
            assert state["immFields"][0]["value"] == ref.market_id.hex()
        # a second market gets the next index and other ids
        second = h.create_market("Another?")
        assert second.market_id != ref.market_id

    def test_only_the_operator_creates_markets(self, harness: Harness, alice: DevnetWallet) -> None:
        h = harness
        call = calls.create_market(h.config.registry_id, "Q?", "x", h.clock.now + HOUR_MS)
        before = h.snapshot(alice)
        reason = f"AssertionFailedWithErrorCode({h.config.registry_address}, 1)"
        expect_error(lambda: h.run(alice, call), 400, "Execution error", reason, "NOT_OPERATOR")
        raw, sig = craft(h, alice, call.script, alph=call.alph)
        expect_error(lambda: h.node.submit(raw, sig), 400, "TxScriptExeFailed", reason)
        assert h.snapshot(alice) == before
        assert h.events(h.config.registry_address) == []

    def test_close_time_must_be_in_the_future(self, harness: Harness) -> None:
        h = harness
        call = calls.create_market(h.config.registry_id, "Q?", "x", h.clock.now)
        expect_error(lambda: h.run(h.operator, call), 400, ", 14)", "INVALID_CLOSE_TIME")


class TestOrders:
    def test_a_resting_buy_locks_collateral_and_the_deposit(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        h = harness
        alph, coll = h.alph(alice), h.token(alice, m.collateral_id)
        sent = h.place(alice, m, BUY, YES, 600, SHARE)
        assert sent.build["gasAmount"] == 1_000 + 2 * 2_000 + 2 * 4_500 + 80_000
        assert h.fee(sent) + ORDER_DEPOSIT == 209_400_000_000_000_000  # ≈ 0.21 ALPH
        lock = buy_lock(600, SHARE)
        assert lock == 615 * 10**15
        assert h.token(alice, m.collateral_id) == coll - lock
        assert h.alph(alice) == alph - ORDER_DEPOSIT - h.fee(sent)
        assert h.contract_asset(m.address) == (10**17 + ORDER_DEPOSIT, {m.collateral_id: lock})
        assert h.node.market_orders(m.address) == [
            {
                "orderId": 1,
                "owner": alice.address,
                "side": "buy",
                "outcome": "yes",
                "price": 600,
                "quantity": str(SHARE),
                "remaining": str(SHARE),
                "deposit": str(ORDER_DEPOSIT),
            }
        ]
        assert market_events(h, m) == [
            (
                "OrderPlaced",
                {
                    "orderId": 1,
                    "owner": alice.address,
                    "side": 0,
                    "outcome": 0,
                    "price": 600,
                    "quantity": SHARE,
                    "remaining": SHARE,
                    "deposit": ORDER_DEPOSIT,
                },
            )
        ]
        check_market_assets(h, m)

    def test_mint(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        h = harness
        a0, b0 = h.alph(alice), h.alph(bob)
        ca, cb = h.token(alice, m.collateral_id), h.token(bob, m.collateral_id)
        s1 = h.place(alice, m, BUY, YES, 600, SHARE)
        s2 = h.place(bob, m, BUY, NO, 400, SHARE)
        # deposits come back whole (the maker's was refunded, the taker's order never rested)
        assert h.alph(alice) == a0 - h.fee(s1)
        assert h.alph(bob) == b0 - h.fee(s2)
        assert h.token(alice, m.collateral_id) == ca - buy_lock(600, SHARE)
        assert h.token(bob, m.collateral_id) == cb - buy_lock(400, SHARE)
        assert (h.token(alice, m.yes_id), h.token(bob, m.no_id)) == (SHARE, SHARE)
        assert h.contract_asset(m.address) == (
            10**17,
            {m.collateral_id: SHARE + fee(600, SHARE) + fee(400, SHARE)},
        )
        events = market_events(h, m)
        assert [name for name, _ in events] == ["OrderPlaced", "OrderPlaced", "Trade"]
        assert events[2][1] == {
            "tradeId": 1,
            "kind": 1,
            "makerOrderId": 1,
            "makerOwner": alice.address,
            "makerSide": 0,
            "makerOutcome": 0,
            "price": 600,
            "quantity": SHARE,
            "takerOrderId": 2,
            "takerOwner": bob.address,
            "makerFee": fee(600, SHARE),
            "takerFee": fee(400, SHARE),
        }
        assert events[1][1]["remaining"] == 0 and events[1][1]["deposit"] == 0
        f = mut(h, m)
        assert (f["yesSupply"], f["noSupply"], f["openOrders"]) == (SHARE, SHARE, 0)
        check_market_assets(h, m)

    def test_normal_trade_with_price_improvement_then_merge(
        self,
        harness: Harness,
        m: MarketRef,
        alice: DevnetWallet,
        bob: DevnetWallet,
        carol: DevnetWallet,
    ) -> None:
        h = harness
        h.place(alice, m, BUY, YES, 600, SHARE)
        h.place(bob, m, BUY, NO, 400, SHARE)  # alice: 1 YES, bob: 1 NO
        half = SHARE // 2
        a0, c0 = h.alph(alice), h.alph(carol)
        ca, cc = h.token(alice, m.collateral_id), h.token(carol, m.collateral_id)
        s1 = h.place(alice, m, SELL, YES, 700, half)
        s2 = h.place(carol, m, BUY, YES, 750, half)  # fills at the maker's 700
        assert h.token(carol, m.yes_id) == half
        assert h.token(carol, m.collateral_id) == cc - buy_lock(700, half)  # improvement back
        assert h.token(alice, m.collateral_id) == ca + notional(700, half)
        assert h.token(alice, m.yes_id) == half
        assert h.alph(alice) == a0 - h.fee(s1)
        assert h.alph(carol) == c0 - h.fee(s2)
        # merge: alice sells YES at 600, bob sells NO at 400
        ca, cb = h.token(alice, m.collateral_id), h.token(bob, m.collateral_id)
        h.place(alice, m, SELL, YES, 600, half)
        h.place(bob, m, SELL, NO, 400, half)
        assert h.token(alice, m.collateral_id) == ca + notional(600, half)
        assert h.token(bob, m.collateral_id) == cb + notional(400, half)
        assert (h.token(alice, m.yes_id), h.token(bob, m.no_id)) == (0, half)
        kinds = [e["kind"] for name, e in market_events(h, m) if name == "Trade"]
        assert kinds == [1, 0, 2]
        f = mut(h, m)
        assert (f["yesSupply"], f["noSupply"]) == (half, half)
        check_market_assets(h, m)

    def test_the_taker_pays_the_dust_of_a_partly_filled_maker(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        h = harness
        a0, b0 = h.alph(alice), h.alph(bob)
        s1 = h.place(alice, m, BUY, YES, 600, 2 * SHARE)
        s2 = h.place(bob, m, BUY, NO, 400, SHARE)
        # alice's order still rests with its whole deposit; her YES output's dust came from bob
        assert h.alph(alice) == a0 - h.fee(s1) - ORDER_DEPOSIT + DUST
        assert h.alph(bob) == b0 - h.fee(s2) - DUST
        assert h.node.market_orders(m.address)[0]["remaining"] == str(SHARE)
        check_market_assets(h, m)

    def test_a_resting_taker_pays_its_own_dust_from_its_deposit(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet, carol: DevnetWallet
    ) -> None:
        h = harness
        h.place(alice, m, BUY, YES, 600, SHARE)
        h.place(h.wallet(), m, BUY, NO, 400, SHARE)  # alice now holds 1 YES
        h.place(alice, m, SELL, YES, 650, SHARE)
        c0 = h.alph(carol)
        s = h.place(carol, m, BUY, YES, 700, 2 * SHARE)  # fills 1 at 650, rests 1
        # two token outputs (YES and the improvement refund): twice the dust from the deposit
        deposit = ORDER_DEPOSIT - 2 * DUST
        placed = [e for name, e in market_events(h, m) if name == "OrderPlaced"][-1]
        assert placed["remaining"] == SHARE and placed["deposit"] == deposit
        assert h.alph(carol) == c0 - h.fee(s) - deposit
        check_market_assets(h, m)
        # the deposit comes back whole on cancel
        c = h.cancel(carol, m, placed["orderId"])
        assert h.alph(carol) == c0 - h.fee(s) - h.fee(c)
        check_market_assets(h, m)

    def test_an_approval_above_the_deposit_comes_back(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        h = harness
        a0 = h.alph(alice)
        sent = h.place(alice, m, BUY, YES, 600, SHARE, deposit=ORDER_DEPOSIT + 5 * DUST)
        assert h.alph(alice) == a0 - h.fee(sent) - ORDER_DEPOSIT
        # below the deposit the call reverts with INSUFFICIENT_APPROVAL
        expect_error(
            lambda: h.place(alice, m, BUY, YES, 600, SHARE, deposit=ORDER_DEPOSIT - 1),
            400,
            ", 3)",
        )

    @pytest.mark.parametrize(
        ("price", "quantity", "code"),
        [(0, SHARE, 13), (1000, SHARE, 13), (600, SHARE + 1, 12), (600, 0, 12)],
    )
    def test_bad_tick_and_bad_quantity(
        self,
        harness: Harness,
        m: MarketRef,
        alice: DevnetWallet,
        price: int,
        quantity: int,
        code: int,
    ) -> None:
        h = harness
        before = h.snapshot(alice)
        call = calls.place_order(m, BUY, YES, price, quantity)
        reason = f"AssertionFailedWithErrorCode({m.address}, {code})"
        expect_error(
            lambda: h.run(alice, call),
            400,
            f"Execution error when estimating gas for tx script or contract: {reason}",
        )
        raw, sig = craft(h, alice, call.script, alph=call.alph, tokens=call.tokens)
        expect_error(lambda: h.node.submit(raw, sig), 400, f"TxScriptExeFailed({reason}")
        assert h.snapshot(alice) == before

    def test_cancel(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        h = harness
        a0, ca = h.alph(alice), h.token(alice, m.collateral_id)
        s1 = h.place(alice, m, BUY, NO, 250, 3 * SHARE)
        # not the owner, unknown order: rejected, nothing changes
        before = h.snapshot(alice, bob)
        expect_error(lambda: h.cancel(bob, m, 1), 400, f"({m.address}, 7)", "NOT_ORDER_OWNER")
        raw, sig = craft(h, bob, calls.cancel_order(m, 1).script)
        expect_error(lambda: h.node.submit(raw, sig), 400, f"({m.address}, 7)")
        expect_error(lambda: h.cancel(alice, m, 2), 400, f"({m.address}, 6)", "UNKNOWN_ORDER")
        assert h.snapshot(alice, bob) == before
        s2 = h.cancel(alice, m, 1)
        assert h.alph(alice) == a0 - h.fee(s1) - h.fee(s2)
        assert h.token(alice, m.collateral_id) == ca
        assert h.node.market_orders(m.address) == []
        name, cancelled = market_events(h, m)[-1]
        assert (name, cancelled) == (
            "OrderCancelled",
            {
                "orderId": 1,
                "owner": alice.address,
                "reason": 0,
                "quantity": 3 * SHARE,
                "refund": buy_lock(250, 3 * SHARE),
                "deposit": ORDER_DEPOSIT,
            },
        )
        expect_error(lambda: h.cancel(alice, m, 1), 400, f"({m.address}, 6)")
        check_market_assets(h, m)

    def test_self_trade_cancels_the_resting_order(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        h = harness
        a0, ca = h.alph(alice), h.token(alice, m.collateral_id)
        s1 = h.place(alice, m, BUY, YES, 600, SHARE)
        s2 = h.place(alice, m, BUY, NO, 400, SHARE)  # would mint against her own bid
        events = market_events(h, m)
        assert events[-1] == (
            "OrderCancelled",
            {
                "orderId": 1,
                "owner": alice.address,
                "reason": 1,
                "quantity": SHARE,
                "refund": buy_lock(600, SHARE),
                "deposit": ORDER_DEPOSIT,
            },
        )
        assert [o["orderId"] for o in h.node.market_orders(m.address)] == [2]
        assert h.token(alice, m.collateral_id) == ca - buy_lock(400, SHARE)
        assert h.alph(alice) == a0 - h.fee(s1) - h.fee(s2) - ORDER_DEPOSIT
        check_market_assets(h, m)

    def test_selling_shares_one_does_not_hold(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        expect_error(
            lambda: harness.place(alice, m, SELL, YES, 600, SHARE),
            400,
            "Not enough balance for token",
        )

    def test_unexpected_tokens_and_bad_enums(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        h = harness
        lock = ((m.collateral_id, buy_lock(600, SHARE)),)
        before = h.snapshot(alice)
        for args, code in (
            ([2, 0, 600, SHARE], 4),
            ([0, 2, 600, SHARE], 4),
            ([1, 0, 600, SHARE], 11),
        ):
            script = call_script(
                MARKET, "placeOrder", m.market_id, args, alph=ORDER_DEPOSIT, tokens=lock
            )
            expect_error(
                lambda s=script: h.run(alice, calls.Call(s, ORDER_DEPOSIT, lock)),
                400,
                f"({m.address}, {code})",
            )
        assert h.snapshot(alice) == before


class TestClose:
    def test_no_orders_after_close_time(self, harness: Harness, alice: DevnetWallet) -> None:
        h = harness
        m = h.create_market(close_in_ms=1_000)
        h.place(alice, m, BUY, YES, 600, SHARE)
        h.clock.advance(1_000)
        expect_error(lambda: h.place(alice, m, BUY, YES, 600, SHARE), 400, f"({m.address}, 5)")
        h.cancel(alice, m, 1)  # cancelling stays possible


class TestResolution:
    @pytest.mark.parametrize(
        ("resolution", "yes_pays", "no_pays"),
        [(Resolution.YES, 1000, 0), (Resolution.NO, 0, 1000), (Resolution.INVALID, 500, 500)],
    )
    def test_resolve_and_claim(
        self,
        harness: Harness,
        m: MarketRef,
        alice: DevnetWallet,
        bob: DevnetWallet,
        carol: DevnetWallet,
        resolution: Resolution,
        yes_pays: int,
        no_pays: int,
    ) -> None:
        h = harness
        h.place(alice, m, BUY, YES, 600, 2 * SHARE)
        h.place(bob, m, BUY, NO, 400, SHARE)  # 1 YES to alice, 1 NO to bob; alice rests 1
        c0, cc = h.alph(carol), h.token(carol, m.collateral_id)
        s_carol = h.place(carol, m, BUY, NO, 100, SHARE)  # rests until resolution
        a0, ca = h.alph(alice), h.token(alice, m.collateral_id)

        # only the operator resolves
        expect_error(lambda: h.run(alice, calls.resolve(m, resolution)), 400, f"({m.address}, 1)")
        # no claims before resolution
        expect_error(lambda: h.claim(alice, m, SHARE, 0), 400, f"({m.address}, 9)")
        op0 = h.alph(h.operator)
        s_res = h.resolve(m, resolution)
        assert h.alph(h.operator) == op0 - h.fee(s_res)
        events = market_events(h, m)
        assert [n for n, _ in events[-3:]] == ["OrderCancelled", "OrderCancelled", "MarketResolved"]
        assert [e["reason"] for _, e in events[-3:-1]] == [2, 2]
        assert events[-1][1] == {
            "resolution": {"yes": 0, "no": 1, "invalid": 2}[resolution],
            "cancelledOrders": 2,
        }
        # resting orders were refunded: alice's remaining bid, carol's whole bid and deposits
        assert h.token(carol, m.collateral_id) == cc
        assert h.alph(carol) == c0 - h.fee(s_carol)
        assert h.token(alice, m.collateral_id) == ca + buy_lock(600, SHARE)
        # the partly filled order's whole deposit (part of it as the dust of the refund output)
        assert h.alph(alice) == a0 + ORDER_DEPOSIT
        assert h.node.market_orders(m.address) == []
        expect_error(lambda: h.resolve(m, resolution), 400, f"({m.address}, 8)")
        expect_error(lambda: h.place(carol, m, BUY, NO, 100, SHARE), 400, f"({m.address}, 5)")

        # claims
        ca, a0 = h.token(alice, m.collateral_id), h.alph(alice)
        s = h.claim(alice, m, SHARE, 0)
        assert h.token(alice, m.collateral_id) == ca + SHARE * yes_pays // 1000
        assert h.token(alice, m.yes_id) == 0
        assert h.alph(alice) == a0 - h.fee(s)
        cb = h.token(bob, m.collateral_id)
        h.claim(bob, m, 0, SHARE)
        assert h.token(bob, m.collateral_id) == cb + SHARE * no_pays // 1000
        claimed = [e for n, e in market_events(h, m) if n == "Claimed"]
        assert claimed == [
            {
                "owner": alice.address,
                "yesQuantity": SHARE,
                "noQuantity": 0,
                "payout": SHARE * yes_pays // 1000,
            },
            {
                "owner": bob.address,
                "yesQuantity": 0,
                "noQuantity": SHARE,
                "payout": SHARE * no_pays // 1000,
            },
        ]
        f = mut(h, m)
        assert (f["yesSupply"], f["noSupply"], f["resolved"]) == (0, 0, True)
        # what is left in the market is exactly the fees
        _, tokens = h.contract_asset(m.address)
        assert tokens == {m.collateral_id: f["feesCollected"]}
        check_market_assets(h, m)


class TestEvents:
    def test_counting_follows_the_node(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        h = harness
        expect_error(
            lambda: h.node.events(m.address, 0), 404, f"Contract events of {m.address} not found"
        )
        expect_error(lambda: h.node.event_count(m.address), 404, "not found")
        for i in range(5):
            h.place(alice, m, BUY, YES, 100 + i, SHARE)
        assert h.node.event_count(m.address) == 5
        page = h.node.events(m.address, 0, 2)
        assert page["nextStart"] == 2 and [e["fields"][4]["value"] for e in page["events"]] == [
            "100",
            "101",
        ]
        page = h.node.events(m.address, 4, 10)
        assert page["nextStart"] == 5 and len(page["events"]) == 1
        assert h.node.events(m.address, 5) == {"events": [], "nextStart": 5}
        assert h.node.events(m.address, 9) == {"events": [], "nextStart": 9}
        event = h.node.events(m.address, 0, 1)["events"][0]
        assert set(event) == {
            "blockHash",
            "txId",
            "timestamp",
            "contractAddress",
            "eventIndex",
            "fields",
        }
        assert event["contractAddress"] == m.address
        status = h.node.tx_status(bytes.fromhex(event["txId"]))
        assert status["blockHash"] == event["blockHash"]

    def test_limit_is_capped_at_100(
        self, harness: Harness, m: MarketRef, alice: DevnetWallet
    ) -> None:
        h = harness
        for i in range(101):
            h.place(alice, m, BUY, YES, 1 + i, 10**7)
        page = h.node.events(m.address, 0, 1_000)
        assert page["nextStart"] == 100 and len(page["events"]) == 100

    def test_one_batch_per_contract_and_block(self, interval: Harness) -> None:
        h = interval
        m = h.create_market()
        h.node.mine()
        alice, bob = DevnetWallet.generate(), DevnetWallet.generate()
        h.node.faucet(alice.address)
        h.node.faucet(bob.address)
        h.node.mine()
        h.place(alice, m, BUY, YES, 600, SHARE)
        h.place(bob, m, BUY, NO, 400, SHARE)
        assert h.node.mine() == 2
        assert h.node.event_count(m.address) == 1  # one batch for the block
        page = h.node.events(m.address, 0, 1)
        assert [e["eventIndex"] for e in page["events"]] == [0, 0, 1]
        assert page["nextStart"] == 1


class TestMinedFailure:
    def test_a_tx_that_fails_when_mined_is_included_and_reverted(self, interval: Harness) -> None:
        h = interval
        m = h.create_market(close_in_ms=10_000)
        alice = DevnetWallet.generate()
        h.node.faucet(alice.address)
        h.node.mine()
        a0, ca = h.alph(alice), h.token(alice, m.collateral_id)
        sent = h.place(alice, m, BUY, YES, 600, SHARE)  # admitted: the market is open
        assert h.node.tx_status(sent.tx_id) == {"type": "MemPooled"}
        h.clock.advance(10_000)
        assert h.node.mine() == 1
        status = h.node.tx_status(sent.tx_id)
        assert status["type"] == "Confirmed"
        details = h.node.tx_details(sent.tx_id)
        assert details["scriptExecutionOk"] is False
        assert f"AssertionFailedWithErrorCode({m.address}, 5)" in str(details["failure"])
        # gas charged, everything approved back, no contract effect
        assert h.alph(alice) == a0 - h.fee(sent)
        assert h.token(alice, m.collateral_id) == ca
        assert h.contract_asset(m.address) == (10**17, {})
        expect_error(lambda: h.node.events(m.address, 0), 404)
        generated = details["generatedOutputs"]
        assert {o["address"] for o in generated} == {alice.address}
        assert sum(int(o["attoAlphAmount"]) for o in generated) == ORDER_DEPOSIT
