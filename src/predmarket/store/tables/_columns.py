"""Column shapes shared by the tables, so the same fact has the same type everywhere."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sqlalchemy import BigInteger, CheckConstraint, Column, Identity, Integer, SmallInteger, String

from predmarket.store.types import Amount, UtcDateTime

#: Longest address we store: the spec's path rule allows 30..80 characters (base58 plus ``:N``).
ADDRESS_LENGTH: Final = 80
#: Block hashes, tx ids, contract ids and token ids: 32 bytes as lowercase hex.
HEX32_LENGTH: Final = 64
#: Categories and tags: the registry caps a category at 64 bytes of UTF-8.
LABEL_LENGTH: Final = 64

#: A 64-bit id that is still SQLite's ``INTEGER PRIMARY KEY`` (an alias of the rowid, so it is
#: assigned automatically there); ``BIGINT`` on PostgreSQL.
BigId = BigInteger().with_variant(Integer(), "sqlite")


def big_id(name: str = "id") -> Column[int]:
    """A surrogate 64-bit primary key: an identity column on PostgreSQL, the rowid on SQLite."""
    return Column(name, BigId, Identity(), primary_key=True)


def small_id(name: str = "id") -> Column[int]:
    """A surrogate 32-bit primary key for small tables (markets, event groups)."""
    return Column(name, Integer, Identity(), primary_key=True)


def address(name: str, *, nullable: bool = False, **kw: Any) -> Column[str]:
    return Column(name, String(ADDRESS_LENGTH), nullable=nullable, **kw)


def hex32(name: str, *, nullable: bool = False, **kw: Any) -> Column[str]:
    return Column(name, String(HEX32_LENGTH), nullable=nullable, **kw)


def amount(name: str, *, nullable: bool = False, **kw: Any) -> Column[int]:
    # A Python-side default goes through Amount's bind processing (zero-padded on SQLite); a
    # server default could not, so amounts never have one.
    if not nullable:
        kw.setdefault("default", 0)
    return Column(name, Amount(), nullable=nullable, **kw)


def tick(name: str, *, nullable: bool = False, **kw: Any) -> Column[int]:
    return Column(name, SmallInteger, nullable=nullable, **kw)


def timestamp(name: str, *, nullable: bool = False, **kw: Any) -> Column[Any]:
    return Column(name, UtcDateTime(), nullable=nullable, **kw)


def one_of(column: str, values: Iterable[str], *, nullable: bool = False) -> CheckConstraint:
    """``CHECK (column IN (...))``, named ``ck_<table>_<column>`` by the naming convention."""
    listed = ", ".join(f"'{v}'" for v in values)
    condition = f"{column} IN ({listed})"
    if nullable:
        condition = f"{column} IS NULL OR {condition}"
    return CheckConstraint(condition, name=column)


def between(column: str, low: int, high: int, *, nullable: bool = False) -> CheckConstraint:
    """``CHECK (column BETWEEN low AND high)``, named ``ck_<table>_<column>``."""
    condition = f"{column} BETWEEN {low} AND {high}"
    if nullable:
        condition = f"{column} IS NULL OR {condition}"
    return CheckConstraint(condition, name=column)
