"""Ticks, base units and the money arithmetic of a market (ints only).

A *tick* is 1/1000 of a share's payout: an order at tick 640 values one share at 0.64 of the
collateral a winning share redeems. Quantities are share base units (one share = ``SHARE`` base
units); one share base unit redeems exactly one collateral base unit, so ``notional`` is simply
``price * quantity / TICK_SCALE``.

Rounding rule: every amount a buyer pays is rounded **up** (in the protocol's favour):

- ``notional(p, q) = ceil(p * q / 1000)``
- ``fee(p, q)      = ceil(notional(p, q) * 250 / 10_000)``     (2.5 %)
- ``buy_lock(p, q) = ceil(p * q * 1.025 / 1000)``  (spec 2.4, one rounding)

Every valid quantity is a multiple of ``QUANTITY_STEP`` (10**7), so every division is exact:
with ``q = k * 10**7``, ``notional = p * k * 10**4``, ``fee = p * k * 250`` and
``buy_lock = p * k * 10_250 = notional + fee``. Nothing is ever actually rounded for valid orders,
which is what makes the book's accounting linear: the lock of an order equals the sum of the
locks of its parts, and the two notionals of a mint or merge add up to exactly ``q``. The
ceilings only matter for inputs the market rejects anyway; they keep the functions total and
never under-charge.
"""

from typing import Final

from predmarket.exchange.errors import InvalidPrice, InvalidQuantity

SHARE: Final = 10**18
"""Base units in one share (the collateral token has 18 decimals)."""
QUANTITY_STEP: Final = 10**7
"""Every order quantity is a positive multiple of this many base units."""
MIN_TICK: Final = 1
MAX_TICK: Final = 999
TICK_SCALE: Final = 1000
"""Ticks in a whole payout: a winning share redeems ``TICK_SCALE`` ticks."""
FEE_BPS: Final = 250
"""Trading fee on buy notional, in basis points (2.5 %)."""
BPS_SCALE: Final = 10_000

# buy_lock = notional * (1 + FEE_BPS / BPS_SCALE) = price * quantity * 10_250 / 10**7.
_LOCK_NUMERATOR: Final = BPS_SCALE + FEE_BPS
_LOCK_DENOMINATOR: Final = TICK_SCALE * BPS_SCALE


def notional(price: int, quantity: int) -> int:
    """Collateral value of ``quantity`` share base units at ``price`` ticks, rounded up."""
    return -(-price * quantity // TICK_SCALE)


def fee(price: int, quantity: int) -> int:
    """Trading fee a buyer pays on ``notional(price, quantity)``: 2.5 %, rounded up."""
    return -(-notional(price, quantity) * FEE_BPS // BPS_SCALE)


def buy_lock(price: int, quantity: int) -> int:
    """Collateral a buy order locks (spec 2.4 ``collateralRequired``).

    ``price * quantity / 1000 * 1.025`` rounded up once, i.e.
    ``ceil(price * quantity * 10_250 / 10**7)``. For every valid quantity this is exact and
    equals ``notional + fee``.
    """
    return -(-price * quantity * _LOCK_NUMERATOR // _LOCK_DENOMINATOR)


def is_valid_price(price: object) -> bool:
    """True when ``price`` is an int tick in ``MIN_TICK..MAX_TICK`` (bools are not ticks)."""
    return type(price) is int and MIN_TICK <= price <= MAX_TICK


def is_valid_quantity(quantity: object) -> bool:
    """True when ``quantity`` is a positive int multiple of ``QUANTITY_STEP``."""
    return type(quantity) is int and quantity > 0 and quantity % QUANTITY_STEP == 0


def validate_price(price: object, field: str = "price") -> int:
    """Return ``price`` if it is a valid order tick, else raise :class:`InvalidPrice`."""
    if type(price) is not int or not MIN_TICK <= price <= MAX_TICK:
        raise InvalidPrice(
            f"{field} must be an integer tick in {MIN_TICK}..{MAX_TICK}, got {price!r}",
            field=field,
        )
    return price


def validate_quantity(quantity: object, field: str = "quantity") -> int:
    """Return ``quantity`` if valid (positive multiple of 10**7), else raise InvalidQuantity."""
    if type(quantity) is not int or quantity <= 0 or quantity % QUANTITY_STEP:
        raise InvalidQuantity(
            f"{field} must be a positive integer multiple of {QUANTITY_STEP} base units, "
            f"got {quantity!r}",
            field=field,
        )
    return quantity
