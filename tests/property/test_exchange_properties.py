"""Random order flows against the exchange engine.

A simulated wallet ledger follows every owner's collateral and shares from the results the
engine returns (``locked``, ``payouts``), and after every step the test checks, from the ledger
and the book rather than from the engine's own counters alone:

- collateral is conserved to the base unit: paid in == resting buy locks + backing of the
  outstanding shares + fees + paid out;
- shares are conserved: wallets + resting sells == supply, and yes supply == no supply until
  resolution;
- no book is crossed, directly or through a mint or merge;
- a cancellation refunds exactly the lock of the remainder;
- the engine agrees, trade for trade and order for order, with a deliberately naive list-based
  reference matcher that implements the rules straight from their definition.
"""

import copy
import pickle
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from predmarket.exchange import (
    QUANTITY_STEP,
    TICK_SCALE,
    Asset,
    Cancel,
    CancelReason,
    Market,
    MarketClosed,
    NotOrderOwner,
    Outcome,
    Payout,
    PlaceResult,
    Resolution,
    Side,
    TradeKind,
    buy_lock,
)

OWNERS = ("ann", "bob", "cyd")
BUY, SELL = Side.BUY, Side.SELL
YES, NO = Outcome.YES, Outcome.NO
ASSET = {YES: Asset.YES, NO: Asset.NO}
REDEMPTION = {Resolution.YES: (1000, 0), Resolution.NO: (0, 1000), Resolution.INVALID: (500, 500)}


# -- the reference matcher ---------------------------------------------------------------------


@dataclass
class RefOrder:
    id: int
    owner: str
    side: Side
    outcome: Outcome
    price: int
    remaining: int


@dataclass
class Reference:
    """Price-time priority straight from the definition: every resting order that would trade
    with the taker is a candidate at its effective price for the taker's outcome; the best price
    wins, then the lowest id. Linear scans, no cleverness."""

    orders: list[RefOrder] = field(default_factory=list)
    next_id: int = 1

    def place(
        self, owner: str, side: Side, outcome: Outcome, price: int, quantity: int
    ) -> tuple[list[tuple[object, ...]], list[tuple[int, str]], int]:
        order_id = self.next_id
        self.next_id += 1
        trades: list[tuple[object, ...]] = []
        cancels: list[tuple[int, str]] = []
        remaining = quantity
        while remaining:
            candidates: list[tuple[int, int, TradeKind, RefOrder]] = []
            for o in self.orders:
                same = o.outcome is outcome
                if side is BUY:
                    if same and o.side is SELL:
                        kind, effective = TradeKind.NORMAL, o.price
                    elif not same and o.side is BUY:
                        kind, effective = TradeKind.MINT, TICK_SCALE - o.price
                    else:
                        continue
                    if effective <= price:
                        candidates.append((effective, o.id, kind, o))
                else:
                    if same and o.side is BUY:
                        kind, effective = TradeKind.NORMAL, o.price
                    elif not same and o.side is SELL:
                        kind, effective = TradeKind.MERGE, TICK_SCALE - o.price
                    else:
                        continue
                    if effective >= price:
                        candidates.append((-effective, o.id, kind, o))
            if not candidates:
                break
            _, _, kind, maker = min(candidates, key=lambda c: (c[0], c[1]))
            if maker.owner == owner:
                self.orders.remove(maker)
                cancels.append((maker.id, "self-trade"))
                continue
            fill = min(remaining, maker.remaining)
            trades.append((kind, maker.id, maker.owner, maker.price, order_id, fill))
            maker.remaining -= fill
            if maker.remaining == 0:
                self.orders.remove(maker)
            remaining -= fill
        if remaining:
            self.orders.append(RefOrder(order_id, owner, side, outcome, price, remaining))
        return trades, cancels, remaining

    def cancel(self, order_id: int) -> None:
        self.orders = [o for o in self.orders if o.id != order_id]

    def book(self) -> list[tuple[object, ...]]:
        return [(o.id, o.owner, o.side, o.outcome, o.price, o.remaining) for o in self.orders]


# -- the wallet ledger and the invariants --------------------------------------------------------


@dataclass
class Wallet:
    paid_in: int = 0
    paid_out: int = 0
    shares: Counter[Asset] = field(default_factory=Counter)


class Harness:
    def __init__(self) -> None:
        self.market = Market()
        self.reference = Reference()
        self.wallets = {o: Wallet() for o in OWNERS}
        self.calls: list[tuple[object, ...]] = []  # what was executed, for replays

    # ledger -----------------------------------------------------------------------------

    def receive(self, payouts: tuple[Payout, ...]) -> None:
        for p in payouts:
            assert p.amount > 0, p
            wallet = self.wallets[p.owner]
            if p.asset is Asset.COLLATERAL:
                wallet.paid_out += p.amount
            else:
                wallet.shares[p.asset] += p.amount

    def free_shares(self, owner: str, outcome: Outcome) -> int:
        return self.wallets[owner].shares[ASSET[outcome]]

    # operations -------------------------------------------------------------------------

    def place(self, owner: str, side: Side, outcome: Outcome, price: int, qty: int) -> None:
        market = self.market
        fees_before = market.fees_collected
        expected_id = market.next_order_id
        wallet = self.wallets[owner]
        if side is SELL:
            assert wallet.shares[ASSET[outcome]] >= qty
            wallet.shares[ASSET[outcome]] -= qty
        else:
            wallet.paid_in += buy_lock(price, qty)

        result = market.place(owner, side, outcome, price, qty)
        self.calls.append(("place", owner, side, outcome, price, qty))

        assert result.order_id == expected_id
        assert result.locked == (buy_lock(price, qty) if side is BUY else qty)
        self.check_result(result)
        self.receive(result.payouts)
        assert market.fees_collected - fees_before == result.fees

        ref_trades, ref_cancels, ref_remaining = self.reference.place(
            owner, side, outcome, price, qty
        )
        trades = [
            (t.kind, t.maker_order_id, t.maker_owner, t.maker_price, t.taker_order_id, t.quantity)
            for t in result.trades
        ]
        assert trades == ref_trades
        assert [(c.order_id, str(c.reason)) for c in result.cancels] == ref_cancels
        assert result.remaining == ref_remaining

    def check_result(self, result: PlaceResult) -> None:
        filled = 0
        for t in result.trades:
            assert t.taker_owner == result.owner and t.maker_owner != result.owner
            assert t.taker_side is result.side and t.taker_outcome is result.outcome
            if result.side is BUY:
                assert t.taker_price <= result.price  # the taker keeps the improvement
            else:
                assert t.taker_price >= result.price
            assert t.quantity > 0 and t.quantity % QUANTITY_STEP == 0
            filled += t.quantity
        assert filled == result.filled
        assert result.improvement_refund >= 0
        for c in result.cancels:
            assert c.reason is CancelReason.SELF_TRADE and c.owner == result.owner

    def cancel(self, owner: str, pick: int, foreign: bool) -> None:
        market = self.market
        mine = [o for o in market.orders() if (o.owner == owner) != foreign]
        if not mine:
            return
        order = mine[pick % len(mine)]
        if foreign:
            with pytest.raises(NotOrderOwner):
                market.cancel(owner, order.id)
            assert market.get_order(order.id) == order
            return
        result = market.cancel(owner, order.id)
        self.calls.append(("cancel", owner, order.id))
        self.check_cancel(result, order.side, order.price, order.remaining)
        self.receive((result.refund,))
        self.reference.cancel(order.id)

    @staticmethod
    def check_cancel(result: Cancel, side: Side, price: int, remaining: int) -> None:
        assert result.quantity == remaining
        if side is BUY:
            assert result.refund.asset is Asset.COLLATERAL
            assert result.refund.amount == buy_lock(price, remaining)
        else:
            assert result.refund.asset is ASSET[result.outcome]
            assert result.refund.amount == remaining

    def resolve(self, resolution: Resolution) -> None:
        before = {o.id: o for o in self.market.orders()}
        result = self.market.resolve(resolution)
        assert [c.order_id for c in result.cancels] == sorted(before)
        for c in result.cancels:
            order = before[c.order_id]
            assert c.reason is CancelReason.RESOLVED
            self.check_cancel(c, order.side, order.price, order.remaining)
        self.receive(result.payouts)
        self.reference.orders.clear()

    def claim(self, owner: str, yes_qty: int, no_qty: int, resolution: Resolution) -> None:
        wallet = self.wallets[owner]
        wallet.shares[Asset.YES] -= yes_qty
        wallet.shares[Asset.NO] -= no_qty
        result = self.market.claim(owner, yes_qty, no_qty)
        yes_ticks, no_ticks = REDEMPTION[resolution]
        expected = (yes_qty * yes_ticks + no_qty * no_ticks) // TICK_SCALE
        assert result.amount == expected
        assert expected * TICK_SCALE == yes_qty * yes_ticks + no_qty * no_ticks  # exact
        self.receive(result.payouts)

    # invariants -------------------------------------------------------------------------

    def check(self) -> None:
        market = self.market
        orders = market.orders()
        wallets = self.wallets.values()

        # The book as the engine shows it matches the reference book.
        engine_book = [(o.id, o.owner, o.side, o.outcome, o.price, o.remaining) for o in orders]
        assert engine_book == self.reference.book()

        # Escrow, recomputed from the resting orders.
        escrow = sum(o.locked for o in orders if o.side is BUY)
        assert escrow == market.collateral_escrow
        for outcome in (YES, NO):
            locked = sum(o.remaining for o in orders if o.side is SELL and o.outcome is outcome)
            assert locked == market.shares_escrow(outcome)
            # Shares are conserved: in wallets or locked in resting sells.
            held = sum(w.shares[ASSET[outcome]] for w in wallets)
            assert held >= 0 and all(w.shares[ASSET[outcome]] >= 0 for w in wallets)
            assert held + locked == market.supply(outcome)

        # Collateral is conserved to the base unit, from the ledger's side.
        paid_in = sum(w.paid_in for w in wallets)
        paid_out = sum(w.paid_out for w in wallets)
        assert paid_in == market.collateral_deposited
        assert paid_out == market.collateral_withdrawn
        if market.resolution is None:
            assert market.yes_supply == market.no_supply
            backing = market.yes_supply
        else:
            yes_ticks, no_ticks = REDEMPTION[market.resolution]
            backing = (market.yes_supply * yes_ticks + market.no_supply * no_ticks) // TICK_SCALE
        assert backing == market.collateral_backing
        assert paid_in == escrow + backing + market.fees_collected + paid_out

        # No crossed book, directly or through a mint / merge.
        bid = {o: market.best_bid(o) for o in (YES, NO)}
        ask = {o: market.best_ask(o) for o in (YES, NO)}
        for outcome in (YES, NO):
            b, a = bid[outcome], ask[outcome]
            if b is not None and a is not None:
                assert b < a
        if bid[YES] is not None and bid[NO] is not None:
            assert bid[YES] + bid[NO] < TICK_SCALE
        if ask[YES] is not None and ask[NO] is not None:
            assert ask[YES] + ask[NO] > TICK_SCALE

        # Aggregated depth agrees with the orders.
        for outcome in (YES, NO):
            depth = market.depth(outcome, levels=1000)
            for levels, side in ((depth.bids, BUY), (depth.asks, SELL)):
                expected: dict[int, tuple[int, int]] = {}
                for o in orders:
                    if o.side is side and o.outcome is outcome:
                        qty, count = expected.get(o.price, (0, 0))
                        expected[o.price] = (qty + o.remaining, count + 1)
                prices = sorted(expected, reverse=side is BUY)
                assert [(lv.price, lv.total_quantity, lv.order_count) for lv in levels] == [
                    (p, *expected[p]) for p in prices
                ]
            assert bid[outcome] == (depth.bids[0].price if depth.bids else None)
            assert ask[outcome] == (depth.asks[0].price if depth.asks else None)


# -- strategies ----------------------------------------------------------------------------------

owners = st.sampled_from(OWNERS)
# Mostly near the middle so orders cross, mint and merge often; sometimes anywhere.
prices = st.one_of(st.integers(485, 515), st.integers(1, 999))
units = st.sampled_from([1, 10**4, 10**11])


@st.composite
def operations(draw: st.DrawFn) -> tuple[object, ...]:
    owner = draw(owners)
    if draw(st.integers(0, 6)) == 0:
        return ("cancel", owner, draw(st.integers(0, 50)), draw(st.integers(0, 4)) == 0)
    side = draw(st.sampled_from([BUY, SELL]))
    outcome = draw(st.sampled_from([YES, NO]))
    return ("place", owner, side, outcome, draw(prices), draw(st.integers(1, 12)), draw(units))


flows = st.lists(operations(), min_size=20, max_size=80)


def seed(harness: Harness, unit: int) -> None:
    """Mint complete sets so every owner starts with yes and no shares to sell."""
    qty = 20 * unit * QUANTITY_STEP
    for yes_owner, no_owner in zip(OWNERS, OWNERS[1:] + OWNERS[:1], strict=True):
        harness.place(yes_owner, BUY, YES, 500, qty)
        harness.place(no_owner, BUY, NO, 500, qty)
        harness.check()


def run(harness: Harness, flow: list[tuple[object, ...]]) -> None:
    for op in flow:
        if op[0] == "place":
            _, owner, side, outcome, price, steps, unit = op
            assert isinstance(owner, str) and isinstance(side, Side)
            assert isinstance(outcome, Outcome) and isinstance(price, int)
            assert isinstance(steps, int) and isinstance(unit, int)
            qty = steps * unit * QUANTITY_STEP
            if side is SELL:
                # Sell only what the wallet holds: clip to the holdings, skip when empty.
                free = harness.free_shares(owner, outcome)
                qty = min(qty, free - free % QUANTITY_STEP)
                if qty == 0:
                    continue
            harness.place(owner, side, outcome, price, qty)
        else:
            _, owner, pick, foreign = op
            assert isinstance(owner, str) and isinstance(pick, int)
            harness.cancel(owner, pick, bool(foreign))
        harness.check()


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(flows, st.one_of(st.none(), units))
def test_random_flows_keep_every_invariant_and_match_the_reference(
    flow: list[tuple[object, ...]], seed_unit: int | None
) -> None:
    harness = Harness()
    harness.check()
    if seed_unit is not None:
        seed(harness, seed_unit)
    run(harness, flow)


@SETTINGS
@given(flows, st.sampled_from(list(Resolution)), st.lists(st.integers(0, 3), min_size=6))
def test_settlement_pays_out_everything_but_the_fees(
    flow: list[tuple[object, ...]], resolution: Resolution, splits: list[int]
) -> None:
    harness = Harness()
    seed(harness, 10**4)
    run(harness, flow)
    harness.resolve(resolution)
    harness.check()
    assert harness.market.open_order_count == 0
    with pytest.raises(MarketClosed):
        harness.market.place("ann", BUY, YES, 500, QUANTITY_STEP)

    # Every owner claims all its shares, in up to a few parts.
    for i, owner in enumerate(OWNERS):
        wallet = harness.wallets[owner]
        yes_left, no_left = wallet.shares[Asset.YES], wallet.shares[Asset.NO]
        parts = splits[2 * i] + 1
        for part in range(parts, 0, -1):
            yes_qty = (yes_left // part) // QUANTITY_STEP * QUANTITY_STEP
            no_qty = (no_left // part) // QUANTITY_STEP * QUANTITY_STEP
            if part == 1:
                yes_qty, no_qty = yes_left, no_left
            if yes_qty or no_qty:
                harness.claim(owner, yes_qty, no_qty, resolution)
                harness.check()
            yes_left -= yes_qty
            no_left -= no_qty

    market = harness.market
    assert market.yes_supply == market.no_supply == 0
    assert market.collateral_held == market.fees_collected
    # Nobody got more than was paid in, net of the fees.
    total_in = sum(w.paid_in for w in harness.wallets.values())
    total_out = sum(w.paid_out for w in harness.wallets.values())
    assert total_in - total_out == market.fees_collected


def replay(market: Market, calls: list[tuple[object, ...]]) -> list[object]:
    results: list[object] = []
    for call in calls:
        if call[0] == "place":
            _, owner, side, outcome, price, qty = call
            results.append(market.place(owner, side, outcome, price, qty))  # type: ignore[arg-type]
        else:
            _, owner, order_id = call
            results.append(market.cancel(owner, order_id))  # type: ignore[arg-type]
    return results


def snapshot(market: Market) -> tuple[object, ...]:
    return (
        market.orders(),
        market.depth(YES, 1000),
        market.depth(NO, 1000),
        market.next_order_id,
        market.collateral_escrow,
        market.collateral_deposited,
        market.collateral_withdrawn,
        market.fees_collected,
        market.volume,
        market.yes_supply,
        market.shares_escrow(YES),
        market.shares_escrow(NO),
    )


@settings(max_examples=100, deadline=None)
@given(flows, st.floats(0, 1))
def test_copies_and_pickles_continue_exactly_like_the_original(
    flow: list[tuple[object, ...]], split: float
) -> None:
    harness = Harness()
    seed(harness, 1)
    run(harness, flow)
    calls = harness.calls
    cut = int(len(calls) * split)

    original = Market()
    replay(original, calls[:cut])
    copies = [pickle.loads(pickle.dumps(original)), copy.deepcopy(original)]
    expected = replay(original, calls[cut:])
    for market in copies:
        assert replay(market, calls[cut:]) == expected
        assert snapshot(market) == snapshot(original) == snapshot(harness.market)
