"""Column types for on-chain amounts.

Amounts are Python ints in code and up to 2**256-1, beyond any native SQL integer:
- PostgreSQL stores them as ``NUMERIC(78,0)``, exact and ordered, so SQL may compare and sum them.
- SQLite has no exact wide number, so they are stored as text zero-padded to 78 digits. Fixed-width
  digit strings order like the numbers they spell, so ``ORDER BY`` and ``>=`` filters (volume sort,
  ``minVolume``) stay correct in SQL. No SQL arithmetic on amounts there: sums happen in Python.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import Numeric, String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

AMOUNT_DIGITS = 78
AMOUNT_MAX = 2**256 - 1


class Amount(TypeDecorator[int]):
    """A non-negative integer amount of base units, 0..2**256-1, exact on every backend."""

    impl = String(AMOUNT_DIGITS)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(Numeric(AMOUNT_DIGITS, 0, asdecimal=True))
        return dialect.type_descriptor(String(AMOUNT_DIGITS))

    def process_bind_param(self, value: int | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"amount must be an int, got {type(value).__name__}")
        if not 0 <= value <= AMOUNT_MAX:
            raise ValueError(f"amount {value} out of range 0..2**256-1")
        if dialect.name == "postgresql":
            return Decimal(value)
        return str(value).zfill(AMOUNT_DIGITS)

    def process_result_value(self, value: Any, dialect: Dialect) -> int | None:  # noqa: ARG002
        if value is None:
            return None
        return int(value)
