"""Ticks, quantities and the money arithmetic (exact amounts worked out by hand)."""

import pytest

from predmarket.exchange import (
    FEE_BPS,
    MAX_TICK,
    MIN_TICK,
    QUANTITY_STEP,
    SHARE,
    TICK_SCALE,
    InvalidFill,
    InvalidPrice,
    InvalidQuantity,
    buy_lock,
    fee,
    notional,
    validate_price,
    validate_quantity,
)
from predmarket.exchange.units import is_valid_price, is_valid_quantity

MILLI = SHARE // 1000  # 0.001 share


def test_constants() -> None:
    assert SHARE == 1_000_000_000_000_000_000
    assert QUANTITY_STEP == 10_000_000
    assert (MIN_TICK, MAX_TICK, TICK_SCALE) == (1, 999, 1000)
    assert FEE_BPS == 250


def test_one_share_at_640() -> None:
    # 0.64 collateral, 2.5 % of it is 0.016, together 0.656.
    assert notional(640, SHARE) == 640 * MILLI
    assert fee(640, SHARE) == 16 * MILLI
    assert buy_lock(640, SHARE) == 656 * MILLI


def test_smallest_valid_quantity() -> None:
    # 10**7 base units at 500: notional 5_000_000, fee 125_000, lock 5_125_000 (no rounding).
    assert notional(500, QUANTITY_STEP) == 5_000_000
    assert fee(500, QUANTITY_STEP) == 125_000
    assert buy_lock(500, QUANTITY_STEP) == 5_125_000


def test_lock_is_spec_formula() -> None:
    # spec 2.4: price x quantity / 1000 x 1.025
    assert buy_lock(999, 7 * SHARE) == 999 * 7 * SHARE * 1025 // 1_000_000
    assert buy_lock(1, QUANTITY_STEP) == 10_250


def test_rounding_is_up_for_inputs_that_do_not_divide() -> None:
    assert notional(1, 1) == 1  # 0.001 -> 1
    assert notional(1, 1000) == 1
    assert notional(1, 1001) == 2
    assert fee(1, 1000) == 1  # notional 1, 2.5 % of it is 0.025 -> 1
    assert fee(400, 100_000) == 1_000  # notional 40_000: exact
    assert buy_lock(1, 1) == 1  # 0.001025 -> 1
    assert buy_lock(3, 333) == 2  # 1.023975 -> 2


@pytest.mark.parametrize("price", [1, 2, 500, 998, 999])
def test_valid_prices(price: int) -> None:
    assert validate_price(price) == price
    assert is_valid_price(price)


@pytest.mark.parametrize("price", [0, 1000, -1, 1001, True, 1.5, 500.0, "500", None])
def test_invalid_prices(price: object) -> None:
    assert not is_valid_price(price)
    with pytest.raises(InvalidPrice) as info:
        validate_price(price)
    assert info.value.code == "INVALID_PRICE"
    assert info.value.chain_code == 13
    assert info.value.field == "price"
    assert "price" in str(info.value)


@pytest.mark.parametrize("quantity", [QUANTITY_STEP, 2 * QUANTITY_STEP, SHARE, 10**30])
def test_valid_quantities(quantity: int) -> None:
    assert validate_quantity(quantity) == quantity
    assert is_valid_quantity(quantity)


@pytest.mark.parametrize(
    "quantity",
    [0, -QUANTITY_STEP, QUANTITY_STEP + 1, QUANTITY_STEP - 1, 5, 1e7, "10000000", True, None],
)
def test_invalid_quantities(quantity: object) -> None:
    assert not is_valid_quantity(quantity)
    with pytest.raises(InvalidQuantity) as info:
        validate_quantity(quantity, field="yes_quantity")
    assert isinstance(info.value, InvalidFill)
    assert info.value.code == "INVALID_FILL"
    assert info.value.chain_code == 12
    assert info.value.field == "yes_quantity"
    assert "yes_quantity" in str(info.value)
