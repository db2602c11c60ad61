"""Typed errors of the market rules.

Every error carries a stable machine-readable ``code`` (the service maps it onto its error
envelope, spec 7.3), the ``chain_code`` a market contract reverts with when the same rule fails
on chain (spec 7.3: 12 ``INVALID_FILL``, 13 ``INVALID_PRICE``; ``None`` when the chain has no
published code for it), and ``field`` naming the offending input when there is one.
"""

from typing import ClassVar


class ExchangeError(Exception):
    """Base of every error raised by :mod:`predmarket.exchange`."""

    code: ClassVar[str] = "EXCHANGE_ERROR"
    chain_code: ClassVar[int | None] = None

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidRequest(ExchangeError):
    """An argument has the wrong type or an unknown enum value (e.g. ``side="hold"``)."""

    code = "INVALID_REQUEST"


class InvalidPrice(ExchangeError):
    """A price is not an integer tick in 1..999 (chain revert 13)."""

    code = "INVALID_PRICE"
    chain_code = 13


class InvalidFill(ExchangeError):
    """A quantity the market cannot fill (chain revert 12)."""

    code = "INVALID_FILL"
    chain_code = 12


class InvalidQuantity(InvalidFill):
    """A quantity is not a positive integer multiple of 10**7 base units."""


class ClaimExceedsSupply(InvalidFill):
    """A claim hands in more shares of an outcome than are outstanding."""


class InsufficientShares(ExchangeError):
    """A sell offers more shares than exist outside the book (impossible on chain)."""

    code = "INSUFFICIENT_BALANCE"


class UnknownOrder(ExchangeError):
    """No resting order has this id (never placed, already filled or already cancelled)."""

    code = "NOT_FOUND"


class NotOrderOwner(ExchangeError):
    """Only the owner of a resting order may cancel it."""

    code = "NOT_ORDER_OWNER"


class MarketClosed(ExchangeError):
    """Orders cannot be placed on a closed or resolved market."""

    code = "MARKET_CLOSED"


class AlreadyResolved(ExchangeError):
    """The market already has an outcome; it cannot be resolved (or closed) again."""

    code = "ALREADY_RESOLVED"


class NotResolved(ExchangeError):
    """Claims are only possible once the market is resolved."""

    code = "MARKET_NOT_RESOLVED"
