"""Matching on linked books: normal, mint and merge trades with exact amounts.

Amounts are written in thousandths of a share (``M``): a fill of ``q`` shares at tick ``p`` has
notional ``p * q`` M and a buyer's fee of ``p * q / 40`` M.
"""

import pytest

from predmarket.exchange import (
    SHARE,
    Asset,
    CancelReason,
    Level,
    Market,
    Outcome,
    Payout,
    PayoutReason,
    Side,
    TradeKind,
)

M = SHARE // 1000
BUY, SELL = Side.BUY, Side.SELL
YES, NO = Outcome.YES, Outcome.NO
FILL = PayoutReason.FILL
IMPROVEMENT = PayoutReason.PRICE_IMPROVEMENT
COLL = Asset.COLLATERAL


def minted_market(yes_owner: str = "y", no_owner: str = "n", shares: int = 10) -> Market:
    """A market where ``yes_owner`` holds ``shares`` yes and ``no_owner`` as many no shares."""
    market = Market()
    market.place(yes_owner, BUY, YES, 500, shares * SHARE)
    market.place(no_owner, BUY, NO, 500, shares * SHARE)
    assert market.yes_supply == market.no_supply == shares * SHARE
    return market


class TestNormal:
    def test_taker_buy_fills_at_the_resting_ask_and_gets_the_improvement_back(self) -> None:
        market = minted_market()
        fees_before = market.fees_collected
        sell = market.place("y", SELL, YES, 550, 4 * SHARE)
        assert sell.trades == () and sell.rests
        assert market.shares_escrow(YES) == 4 * SHARE

        buy = market.place("alice", BUY, YES, 600, 4 * SHARE)

        assert buy.locked == 2460 * M  # 4 x 0.600 x 1.025
        (trade,) = buy.trades
        assert trade.kind is TradeKind.NORMAL
        assert (trade.maker_order_id, trade.taker_order_id) == (sell.order_id, buy.order_id)
        assert (trade.maker_owner, trade.taker_owner) == ("y", "alice")
        assert (trade.maker_side, trade.taker_side) == (SELL, BUY)
        assert trade.maker_outcome is trade.taker_outcome is YES
        assert trade.maker_price == trade.taker_price == 550
        assert trade.quantity == 4 * SHARE
        assert (trade.maker_fee, trade.taker_fee) == (0, 55 * M)
        # The buyer pays 2200 + 55 of its 2460 lock; 205 comes back at once.
        assert buy.improvement_refund == 205 * M
        assert buy.payouts == (
            Payout("alice", Asset.YES, 4 * SHARE, FILL),
            Payout("y", COLL, 2200 * M, FILL),
            Payout("alice", COLL, 205 * M, IMPROVEMENT),
        )
        assert market.fees_collected - fees_before == 55 * M
        assert buy.remaining == 0 and market.open_order_count == 0
        assert market.shares_escrow(YES) == 0

    def test_taker_sell_fills_at_the_resting_bid(self) -> None:
        market = minted_market()
        bid = market.place("bob", BUY, YES, 620, 3 * SHARE)
        assert market.collateral_escrow == 1906_500 * M // 1000  # 3 x 0.62 x 1.025

        sell = market.place("y", SELL, YES, 600, 3 * SHARE)

        (trade,) = sell.trades
        assert trade.kind is TradeKind.NORMAL
        assert trade.maker_order_id == bid.order_id
        assert (trade.maker_side, trade.taker_side) == (BUY, SELL)
        assert trade.maker_price == 620
        assert (trade.maker_fee, trade.taker_fee) == (46_500 * M // 1000, 0)
        assert sell.payouts == (
            Payout("y", COLL, 1860 * M, FILL),
            Payout("bob", Asset.YES, 3 * SHARE, FILL),
        )
        assert sell.improvement_refund == 0
        assert market.collateral_escrow == 0

    def test_partial_fills_and_the_remainder_rests(self) -> None:
        market = minted_market()
        ask = market.place("y", SELL, YES, 550, 5 * SHARE)

        first = market.place("a", BUY, YES, 560, 2 * SHARE)
        assert first.filled == 2 * SHARE and first.remaining == 0
        resting = market.get_order(ask.order_id)
        assert resting is not None
        assert (resting.quantity, resting.remaining, resting.filled) == (
            5 * SHARE,
            3 * SHARE,
            2 * SHARE,
        )

        second = market.place("b", BUY, YES, 560, 4 * SHARE)
        assert [t.quantity for t in second.trades] == [3 * SHARE]
        assert second.remaining == SHARE and second.rests
        assert market.get_order(ask.order_id) is None
        assert market.best_bid(YES) == 560 and market.best_ask(YES) is None
        order = second.resting_order
        assert order is not None and order.locked == 574 * M  # 1 x 0.56 x 1.025
        assert market.collateral_escrow == 574 * M

    def test_fifo_within_a_level(self) -> None:
        market = minted_market()
        ids = [market.place(o, SELL, YES, 550, 2 * SHARE).order_id for o in ("y", "y2", "y3")]
        # y2 and y3 hold no shares here, but the engine only checks the free supply.
        result = market.place("z", BUY, YES, 550, 3 * SHARE)
        assert [(t.maker_order_id, t.quantity) for t in result.trades] == [
            (ids[0], 2 * SHARE),
            (ids[1], SHARE),
        ]
        assert market.depth(YES).asks == (Level(550, 3 * SHARE, 2),)

    def test_sweeps_levels_best_first(self) -> None:
        market = minted_market()
        for price in (570, 550, 560):
            market.place("y", SELL, YES, price, SHARE)
        result = market.place("z", BUY, YES, 565, 3 * SHARE)
        assert [t.maker_price for t in result.trades] == [550, 560]
        assert result.remaining == SHARE
        assert market.best_bid(YES) == 565 and market.best_ask(YES) == 570

    def test_non_crossing_orders_rest(self) -> None:
        market = minted_market()
        market.place("a", BUY, YES, 400, SHARE)
        market.place("a", BUY, YES, 400, 2 * SHARE)
        market.place("a", BUY, YES, 390, SHARE)
        market.place("y", SELL, YES, 600, SHARE)
        market.place("n", SELL, NO, 650, SHARE)
        depth = market.depth(YES)
        assert depth.bids == (Level(400, 3 * SHARE, 2), Level(390, SHARE, 1))
        assert depth.asks == (Level(600, SHARE, 1),)
        assert market.depth(YES, levels=1).bids == (Level(400, 3 * SHARE, 2),)
        assert market.depth(NO).asks == (Level(650, SHARE, 1),)
        assert (market.best_bid(NO), market.best_ask(NO)) == (None, 650)


class TestMint:
    def test_buy_yes_meets_resting_buy_no(self) -> None:
        market = Market()
        maker = market.place("nora", BUY, NO, 300, 2 * SHARE)
        assert market.collateral_escrow == 615 * M  # 2 x 0.3 x 1.025

        taker = market.place("yuri", BUY, YES, 750, 2 * SHARE)

        (trade,) = taker.trades
        assert trade.kind is TradeKind.MINT
        assert trade.maker_order_id == maker.order_id
        assert (trade.maker_side, trade.taker_side) == (BUY, BUY)
        assert (trade.maker_outcome, trade.taker_outcome) == (NO, YES)
        assert (trade.maker_price, trade.taker_price, trade.yes_price) == (300, 700, 700)
        # yes buyer pays 1400 + 35, no buyer 600 + 15: 2000 backs two complete sets.
        assert (trade.taker_fee, trade.maker_fee) == (35 * M, 15 * M)
        assert taker.locked == 1537_500 * M // 1000
        assert taker.improvement_refund == 102_500 * M // 1000
        assert taker.payouts == (
            Payout("yuri", Asset.YES, 2 * SHARE, FILL),
            Payout("nora", Asset.NO, 2 * SHARE, FILL),
            Payout("yuri", COLL, 102_500 * M // 1000, IMPROVEMENT),
        )
        assert market.yes_supply == market.no_supply == 2 * SHARE
        assert market.fees_collected == 50 * M
        assert market.collateral_escrow == 0
        assert market.collateral_held == 2000 * M + 50 * M

    def test_buy_no_meets_resting_buy_yes(self) -> None:
        market = Market()
        market.place("yuri", BUY, YES, 640, SHARE)
        taker = market.place("nora", BUY, NO, 400, SHARE)
        (trade,) = taker.trades
        assert trade.kind is TradeKind.MINT
        assert (trade.maker_price, trade.taker_price, trade.yes_price) == (640, 360, 640)
        assert taker.improvement_refund == 41 * M  # (400 - 360) x 1.025
        assert market.yes_supply == market.no_supply == SHARE

    def test_no_mint_when_prices_sum_below_1000(self) -> None:
        market = Market()
        market.place("a", BUY, NO, 300, SHARE)
        result = market.place("b", BUY, YES, 699, SHARE)
        assert result.trades == () and result.rests
        assert market.yes_supply == 0


class TestMerge:
    def test_sell_yes_meets_resting_sell_no(self) -> None:
        market = minted_market(shares=2)
        held = market.collateral_held
        maker = market.place("n", SELL, NO, 350, 2 * SHARE)

        taker = market.place("y", SELL, YES, 600, 2 * SHARE)

        (trade,) = taker.trades
        assert trade.kind is TradeKind.MERGE
        assert trade.maker_order_id == maker.order_id
        assert (trade.maker_side, trade.taker_side) == (SELL, SELL)
        assert (trade.maker_outcome, trade.taker_outcome) == (NO, YES)
        assert (trade.maker_price, trade.taker_price) == (350, 650)
        assert trade.fees == 0
        assert taker.payouts == (
            Payout("y", COLL, 1300 * M, FILL),
            Payout("n", COLL, 700 * M, FILL),
        )
        assert market.yes_supply == market.no_supply == 0
        assert market.shares_escrow(NO) == 0
        assert market.collateral_held == held - 2 * SHARE

    def test_no_merge_when_prices_sum_above_1000(self) -> None:
        market = minted_market()
        market.place("n", SELL, NO, 450, SHARE)
        result = market.place("y", SELL, YES, 551, SHARE)
        assert result.trades == () and result.rests


class TestBestPrice:
    def test_buy_takes_the_cheaper_of_ask_and_mint(self) -> None:
        market = minted_market()
        ask = market.place("y", SELL, YES, 560, SHARE).order_id
        bid_no = market.place("m", BUY, NO, 450, SHARE).order_id  # a yes at 550
        result = market.place("z", BUY, YES, 600, 2 * SHARE)
        assert [(t.kind, t.maker_order_id, t.taker_price) for t in result.trades] == [
            (TradeKind.MINT, bid_no, 550),
            (TradeKind.NORMAL, ask, 560),
        ]

    def test_buy_prefers_the_ask_when_it_is_cheaper(self) -> None:
        market = minted_market()
        market.place("m", BUY, NO, 450, SHARE)  # a yes at 550
        ask = market.place("y", SELL, YES, 540, SHARE).order_id
        result = market.place("z", BUY, YES, 545, 2 * SHARE)
        assert [t.maker_order_id for t in result.trades] == [ask]
        assert result.remaining == SHARE  # the mint at 550 is above the limit

    def test_sell_takes_the_dearer_of_bid_and_merge(self) -> None:
        market = minted_market()
        bid = market.place("b", BUY, YES, 480, SHARE).order_id
        ask_no = market.place("n", SELL, NO, 510, SHARE).order_id  # pays 490 for a yes
        result = market.place("y", SELL, YES, 450, 2 * SHARE)
        assert [(t.kind, t.maker_order_id, t.taker_price) for t in result.trades] == [
            (TradeKind.MERGE, ask_no, 490),
            (TradeKind.NORMAL, bid, 480),
        ]

    @pytest.mark.parametrize("normal_first", [True, False])
    def test_tie_goes_to_the_earlier_resting_order_buy(self, normal_first: bool) -> None:
        market = minted_market()
        ask = ("y", SELL, YES, 550)
        bid_no = ("m", BUY, NO, 450)  # a yes at 550: the same effective price
        first, second = (
            market.place(*args, SHARE).order_id
            for args in ((ask, bid_no) if normal_first else (bid_no, ask))
        )
        result = market.place("z", BUY, YES, 550, 2 * SHARE)
        assert [t.maker_order_id for t in result.trades] == [first, second]
        assert {t.taker_price for t in result.trades} == {550}

    @pytest.mark.parametrize("normal_first", [True, False])
    def test_tie_goes_to_the_earlier_resting_order_sell(self, normal_first: bool) -> None:
        market = minted_market()
        bid = ("b", BUY, YES, 480)
        ask_no = ("n", SELL, NO, 520)  # pays 480 for a yes: the same effective price
        first, second = (
            market.place(*args, SHARE).order_id
            for args in ((bid, ask_no) if normal_first else (ask_no, bid))
        )
        result = market.place("y", SELL, YES, 480, 2 * SHARE)
        assert [t.maker_order_id for t in result.trades] == [first, second]

    def test_mint_candidates_keep_time_priority_within_a_level(self) -> None:
        market = Market()
        a = market.place("a", BUY, NO, 400, SHARE).order_id
        b = market.place("b", BUY, NO, 400, SHARE).order_id
        result = market.place("z", BUY, YES, 600, SHARE + SHARE // 2)
        assert [(t.maker_order_id, t.quantity) for t in result.trades] == [
            (a, SHARE),
            (b, SHARE // 2),
        ]


class TestSelfTrade:
    def test_own_resting_ask_is_cancelled_and_matching_continues(self) -> None:
        market = minted_market()
        own = market.place("y", SELL, YES, 550, SHARE).order_id
        other = market.place("y2", SELL, YES, 560, SHARE).order_id
        # y buys its own price level away: its ask is cancelled, it trades with y2 instead.
        result = market.place("y", BUY, YES, 600, SHARE)
        (cancel,) = result.cancels
        assert cancel.order_id == own and cancel.reason is CancelReason.SELF_TRADE
        assert cancel.refund == Payout("y", Asset.YES, SHARE, PayoutReason.CANCEL)
        assert [t.maker_order_id for t in result.trades] == [other]
        assert result.payouts[-1] == cancel.refund
        assert market.get_order(own) is None
        assert market.shares_escrow(YES) == 0

    def test_own_complementary_bid_is_cancelled_instead_of_minting(self) -> None:
        market = Market()
        own = market.place("a", BUY, NO, 450, SHARE).order_id
        result = market.place("a", BUY, YES, 600, SHARE)
        assert result.trades == ()
        (cancel,) = result.cancels
        assert cancel.order_id == own and cancel.reason is CancelReason.SELF_TRADE
        assert cancel.refund.amount == 461_250 * M // 1000  # 1 x 0.45 x 1.025
        assert result.rests and market.best_bid(YES) == 600 and market.best_bid(NO) is None
        assert market.collateral_escrow == 615 * M
        assert market.yes_supply == 0

    def test_own_complementary_ask_is_cancelled_instead_of_merging(self) -> None:
        market = minted_market(yes_owner="h", no_owner="x")
        market.place("x", SELL, NO, 500, SHARE)
        market.place("h", BUY, NO, 500, SHARE)  # h now holds yes and no shares
        own = market.place("h", SELL, NO, 400, SHARE).order_id
        result = market.place("h", SELL, YES, 500, SHARE)
        assert result.trades == ()
        assert [c.order_id for c in result.cancels] == [own]
        assert result.cancels[0].refund == Payout("h", Asset.NO, SHARE, PayoutReason.CANCEL)
        assert market.yes_supply == market.no_supply == 10 * SHARE

    def test_own_resting_bid_is_cancelled_for_a_sell(self) -> None:
        market = minted_market()
        own = market.place("y", BUY, YES, 500, SHARE).order_id
        result = market.place("y", SELL, YES, 500, SHARE)
        assert [c.order_id for c in result.cancels] == [own]
        assert result.cancels[0].refund.amount == 512_500 * M // 1000
        assert market.collateral_escrow == 0
        assert market.best_ask(YES) == 500


class TestCancel:
    def test_cancel_refunds_the_lock_of_the_remainder(self) -> None:
        market = minted_market()
        bid = market.place("a", BUY, YES, 400, 3 * SHARE)
        market.place("y", SELL, YES, 400, SHARE)
        assert market.collateral_escrow == 820 * M  # 2 x 0.4 x 1.025

        cancel = market.cancel("a", bid.order_id)

        assert cancel.quantity == 2 * SHARE and cancel.reason is CancelReason.OWNER
        assert cancel.refund == Payout("a", COLL, 820 * M, PayoutReason.CANCEL)
        assert market.collateral_escrow == 0
        assert market.best_bid(YES) is None and market.open_order_count == 0

    def test_cancel_of_a_sell_returns_the_shares(self) -> None:
        market = minted_market()
        ask = market.place("y", SELL, YES, 700, 4 * SHARE)
        cancel = market.cancel("y", ask.order_id)
        assert cancel.refund == Payout("y", Asset.YES, 4 * SHARE, PayoutReason.CANCEL)
        assert market.shares_escrow(YES) == 0

    def test_cancel_keeps_priority_of_the_others(self) -> None:
        market = minted_market()
        a, b, c = (market.place(o, SELL, YES, 550, SHARE).order_id for o in ("y", "y", "y"))
        market.cancel("y", b)
        market.cancel("y", a)
        assert market.depth(YES).asks == (Level(550, SHARE, 1),)
        result = market.place("z", BUY, YES, 550, SHARE)
        assert [t.maker_order_id for t in result.trades] == [c]
        assert market.best_ask(YES) is None

    def test_many_cancels_behind_an_old_head(self) -> None:
        market = minted_market()
        head = market.place("y", SELL, YES, 550, SHARE // 10).order_id
        ids = [market.place("y", SELL, YES, 550, SHARE // 10).order_id for _ in range(80)]
        for order_id in ids[:-1]:
            market.cancel("y", order_id)
        assert market.depth(YES).asks == (Level(550, SHARE // 5, 2),)
        assert [o.id for o in market.orders()] == [head, ids[-1]]
        result = market.place("z", BUY, YES, 550, SHARE)
        assert [t.maker_order_id for t in result.trades] == [head, ids[-1]]

    def test_compacting_a_level_keeps_fifo(self) -> None:
        market = minted_market()
        tenth = SHARE // 10
        head = market.place("y", SELL, YES, 550, tenth).order_id
        ids = [market.place("y", SELL, YES, 550, tenth).order_id for _ in range(60)]
        # The 32nd cancel behind the live head leaves 32 dead entries for 29 live orders,
        # which compacts the level.
        for order_id in ids[:32]:
            market.cancel("y", order_id)
        survivors = [head, *ids[32:]]
        assert [o.id for o in market.orders()] == survivors
        result = market.place("z", BUY, YES, 550, len(survivors) * tenth)
        assert [t.maker_order_id for t in result.trades] == survivors

    def test_best_price_moves_when_the_best_level_empties(self) -> None:
        market = minted_market()
        best = market.place("a", BUY, YES, 450, SHARE).order_id
        market.place("a", BUY, YES, 300, SHARE)
        market.place("a", BUY, YES, 20, SHARE)
        market.cancel("a", best)
        assert market.best_bid(YES) == 300
        market.place("y", SELL, YES, 300, SHARE)
        assert market.best_bid(YES) == 20
