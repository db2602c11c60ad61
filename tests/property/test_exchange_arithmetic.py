"""The money arithmetic is exact for every valid quantity (so the book's accounting is linear)."""

from hypothesis import given
from hypothesis import strategies as st

from predmarket.exchange import (
    MAX_TICK,
    MIN_TICK,
    QUANTITY_STEP,
    TICK_SCALE,
    buy_lock,
    fee,
    notional,
)

ticks = st.integers(MIN_TICK, MAX_TICK)
# Valid quantities: every multiple of the step, from one step to far beyond any real supply.
quantities = st.integers(1, 10**24).map(lambda k: k * QUANTITY_STEP)
any_quantities = st.integers(0, 10**30)


@given(ticks, quantities)
def test_divisions_are_exact_for_valid_quantities(price: int, quantity: int) -> None:
    assert price * quantity % TICK_SCALE == 0
    n = notional(price, quantity)
    assert n * TICK_SCALE == price * quantity
    assert fee(price, quantity) * 40 == n  # exactly 2.5 %
    lock = buy_lock(price, quantity)
    assert lock * 1_000_000 == price * quantity * 1025  # spec 2.4 with no rounding at all
    assert lock == n + fee(price, quantity)


@given(ticks, quantities, quantities)
def test_locks_and_notionals_are_additive(price: int, a: int, b: int) -> None:
    assert buy_lock(price, a + b) == buy_lock(price, a) + buy_lock(price, b)
    assert notional(price, a + b) == notional(price, a) + notional(price, b)
    assert fee(price, a + b) == fee(price, a) + fee(price, b)


@given(ticks, quantities)
def test_complementary_notionals_sum_to_the_quantity(price: int, quantity: int) -> None:
    # A mint's two buyers (or a merge's two sellers) split exactly ``quantity`` collateral.
    assert notional(price, quantity) + notional(TICK_SCALE - price, quantity) == quantity


@given(ticks, quantities)
def test_improvement_is_never_negative(price: int, quantity: int) -> None:
    for better in range(MIN_TICK, price + 1, max(1, price // 7)):
        assert buy_lock(price, quantity) - buy_lock(better, quantity) >= 0


@given(ticks, any_quantities)
def test_rounding_is_up_and_by_less_than_one_unit(price: int, quantity: int) -> None:
    n = notional(price, quantity)
    assert 0 <= n * TICK_SCALE - price * quantity < TICK_SCALE
    f = fee(price, quantity)
    assert 0 <= f * 40 - n < 40
    lock = buy_lock(price, quantity)
    assert 0 <= lock * 1_000_000 - price * quantity * 1025 < 1_000_000
    # One rounding of the whole lock never exceeds rounding its two parts separately.
    assert lock <= n + f


@given(quantities)
def test_invalid_resolution_half_is_exact(quantity: int) -> None:
    assert quantity * 500 % TICK_SCALE == 0
