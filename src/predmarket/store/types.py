"""Column types: on-chain amounts, UTC timestamps and JSON documents.

Amounts are Python ints in code and up to 2**256-1, beyond any native SQL integer:
- PostgreSQL stores them as ``NUMERIC(78,0)``, exact and ordered, so SQL may compare and sum them.
- SQLite has no exact wide number, so they are stored as text zero-padded to 78 digits. Fixed-width
  digit strings order like the numbers they spell, so ``ORDER BY`` and ``>=`` filters (volume sort,
  ``minVolume``) stay correct in SQL. No SQL arithmetic on amounts there: sums happen in Python.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, DateTime, Numeric, String
from sqlalchemy.dialects.postgresql import JSONB
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


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend.

    PostgreSQL stores ``timestamptz``. SQLite has no time zones: it keeps the text of a naive
    datetime, so values are normalised to UTC before storing (all rows then sort and compare
    correctly as text) and come back aware, in UTC. Naive datetimes are refused: a time without a
    zone is a bug waiting to happen.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"timestamp must be a datetime, got {type(value).__name__}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("timestamp must be timezone-aware (UTC)")
        utc = value.astimezone(UTC)
        return utc if dialect.name == "postgresql" else utc.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:  # noqa: ARG002
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class JsonDocument(TypeDecorator[object]):
    """A JSON document: ``JSONB`` on PostgreSQL (indexable, compact), JSON text on SQLite."""

    impl = JSON(none_as_null=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        # ``none_as_null``: Python None is SQL NULL, never the JSON text ``null``.
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB(none_as_null=True))
        return dialect.type_descriptor(JSON(none_as_null=True))
