"""Records are frozen; the fast constructors build exactly what the dataclasses build."""

import dataclasses

import pytest

from predmarket.exchange import (
    SHARE,
    Asset,
    Cancel,
    CancelReason,
    Order,
    Outcome,
    PlaceResult,
    Side,
    Trade,
    TradeKind,
)
from predmarket.exchange.types import new_cancel, new_place_result, new_trade, outcome_asset


def test_new_trade_equals_trade() -> None:
    args = (7, TradeKind.MINT, 3 * SHARE, 2, "m", Side.BUY, Outcome.NO, 420, 5, "t")
    built = new_trade(*args)
    assert built == Trade(*args)
    assert dataclasses.astuple(built) == args


def test_new_place_result_equals_place_result() -> None:
    trade = Trade(1, TradeKind.NORMAL, SHARE, 1, "m", Side.SELL, Outcome.YES, 500, 2, "t")
    cancel = Cancel(3, "t", Side.SELL, Outcome.YES, 480, SHARE, CancelReason.SELF_TRADE)
    args = (2, "t", Side.BUY, Outcome.YES, 510, 2 * SHARE, SHARE, (trade,), (cancel,))
    built = new_place_result(*args)
    assert built == PlaceResult(*args)
    assert dataclasses.astuple(built)[:7] == args[:7]


def test_new_cancel_equals_cancel() -> None:
    args = (4, "o", Side.BUY, Outcome.NO, 10, SHARE, CancelReason.OWNER)
    assert new_cancel(*args) == Cancel(*args)


def test_records_are_frozen() -> None:
    trade = new_trade(1, TradeKind.NORMAL, SHARE, 1, "m", Side.SELL, Outcome.YES, 500, 2, "t")
    with pytest.raises(dataclasses.FrozenInstanceError):
        trade.quantity = 0  # type: ignore[misc]
    order = Order(1, "o", Side.BUY, Outcome.YES, 500, SHARE, SHARE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        order.remaining = 0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kind", "maker_side", "maker_outcome", "taker_side", "taker_outcome", "taker_price", "yes"),
    [
        (TradeKind.NORMAL, Side.SELL, Outcome.YES, Side.BUY, Outcome.YES, 300, 300),
        (TradeKind.NORMAL, Side.BUY, Outcome.NO, Side.SELL, Outcome.NO, 300, 700),
        (TradeKind.MINT, Side.BUY, Outcome.NO, Side.BUY, Outcome.YES, 700, 700),
        (TradeKind.MERGE, Side.SELL, Outcome.YES, Side.SELL, Outcome.NO, 700, 300),
    ],
)
def test_trade_derived_fields(
    kind: TradeKind,
    maker_side: Side,
    maker_outcome: Outcome,
    taker_side: Side,
    taker_outcome: Outcome,
    taker_price: int,
    yes: int,
) -> None:
    trade = Trade(1, kind, SHARE, 1, "m", maker_side, maker_outcome, 300, 2, "t")
    assert trade.taker_side is taker_side
    assert trade.taker_outcome is taker_outcome
    assert trade.taker_price == taker_price
    assert trade.yes_price == yes
    if kind is TradeKind.NORMAL:
        assert trade.volume == trade.maker_notional == trade.taker_notional == 300 * SHARE // 1000
    else:
        assert trade.volume == trade.maker_notional + trade.taker_notional == SHARE


def test_order_lock_views() -> None:
    buy = Order(1, "o", Side.BUY, Outcome.NO, 400, 3 * SHARE, 2 * SHARE)
    assert buy.filled == SHARE
    assert buy.locked_asset is Asset.COLLATERAL
    assert buy.locked == 820 * SHARE // 1000
    sell = Order(2, "o", Side.SELL, Outcome.NO, 400, 3 * SHARE, 2 * SHARE)
    assert sell.locked_asset is Asset.NO and sell.locked == 2 * SHARE
    assert outcome_asset(Outcome.YES) is Asset.YES
    assert Outcome.YES.other is Outcome.NO and Outcome.NO.other is Outcome.YES


def test_enums_are_their_wire_strings() -> None:
    assert [str(s) for s in Side] == ["buy", "sell"]
    assert [str(r) for r in TradeKind] == ["normal", "mint", "merge"]
    assert str(CancelReason.SELF_TRADE) == "self-trade"
