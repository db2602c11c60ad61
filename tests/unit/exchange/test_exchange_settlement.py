"""Resolution cancels the book; claims pay winners 1:1, losers 0, INVALID half."""

import pytest

from predmarket.exchange import (
    SHARE,
    Asset,
    CancelReason,
    ClaimResult,
    Market,
    MarketStatus,
    Outcome,
    Payout,
    PayoutReason,
    Resolution,
    Side,
)

M = SHARE // 1000
BUY, SELL = Side.BUY, Side.SELL
YES, NO = Outcome.YES, Outcome.NO


def traded_market() -> Market:
    """y holds 4 yes, n holds 4 no (minted at 600/400); two orders rest."""
    market = Market()
    market.place("y", BUY, YES, 600, 4 * SHARE)
    market.place("n", BUY, NO, 400, 4 * SHARE)
    market.place("a", BUY, YES, 300, 2 * SHARE)  # locks 615 M
    market.place("y", SELL, YES, 800, SHARE)  # locks 1 yes share
    return market


def test_resolve_cancels_and_refunds_every_resting_order_in_id_order() -> None:
    market = traded_market()
    bid, ask = (o.id for o in market.orders())

    result = market.resolve(Resolution.YES)

    assert market.status is MarketStatus.RESOLVED and market.resolution is Resolution.YES
    assert [(c.order_id, c.reason) for c in result.cancels] == [
        (bid, CancelReason.RESOLVED),
        (ask, CancelReason.RESOLVED),
    ]
    assert result.payouts == (
        Payout("a", Asset.COLLATERAL, 615 * M, PayoutReason.CANCEL),
        Payout("y", Asset.YES, SHARE, PayoutReason.CANCEL),
    )
    assert market.open_order_count == 0
    assert market.collateral_escrow == 0
    assert market.shares_escrow(YES) == 0
    assert market.best_bid(YES) is None and market.best_ask(YES) is None


def test_claims_after_yes() -> None:
    market = traded_market()
    market.resolve(Resolution.YES)
    assert market.collateral_backing == 4 * SHARE

    won = market.claim("y", 4 * SHARE, 0)
    lost = market.claim("n", 0, 4 * SHARE)

    assert won == ClaimResult("y", 4 * SHARE, 0, 4 * SHARE)
    assert won.payouts == (Payout("y", Asset.COLLATERAL, 4 * SHARE, PayoutReason.CLAIM),)
    assert lost.amount == 0 and lost.payouts == ()
    assert market.yes_supply == market.no_supply == 0
    # Only the fees stay: 2.5 % of 2400 + 1600.
    assert market.collateral_held == market.fees_collected == 100 * M


def test_claims_after_no() -> None:
    market = traded_market()
    market.resolve(Resolution.NO)
    assert market.claim("y", 4 * SHARE, 0).amount == 0
    assert market.claim("n", 0, 3 * SHARE).amount == 3 * SHARE
    assert market.no_supply == SHARE and market.collateral_backing == SHARE
    assert market.claim("n", 0, SHARE).amount == SHARE
    assert market.collateral_held == 100 * M


def test_claims_after_invalid_pay_half_of_either_outcome() -> None:
    market = traded_market()
    market.resolve(Resolution.INVALID)
    assert market.collateral_backing == 4 * SHARE  # (4 + 4) x 500 / 1000

    assert market.claim("y", 4 * SHARE, 0).amount == 2 * SHARE
    assert market.collateral_backing == 2 * SHARE
    assert market.claim("n", 0, 10_000_000).amount == 5_000_000  # the smallest amount: exact
    both = market.claim("x", 0, 4 * SHARE - 10_000_000)
    assert both.amount == 2 * SHARE - 5_000_000
    assert market.collateral_held == 100 * M


def test_a_holder_of_both_outcomes_claims_them_together() -> None:
    market = traded_market()
    market.resolve(Resolution.INVALID)
    assert market.claim("z", SHARE, 3 * SHARE).amount == 2 * SHARE


def test_claims_burn_supply_until_it_is_gone() -> None:
    market = traded_market()
    market.resolve(Resolution.YES)
    market.claim("y", 3 * SHARE, 0)
    market.claim("y", SHARE, 0)
    assert market.yes_supply == 0


@pytest.mark.parametrize("resolution", list(Resolution))
def test_conservation_through_settlement(resolution: Resolution) -> None:
    market = traded_market()
    market.resolve(resolution)
    market.claim("y", 4 * SHARE, 0)
    market.claim("n", 0, 4 * SHARE)
    assert market.collateral_deposited - market.collateral_withdrawn == market.fees_collected
