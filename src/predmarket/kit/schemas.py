"""The project's schema bases and wire types.

- :class:`BaseSchema`: camelCase JSON names (``market_address`` ↔ ``marketAddress``); Python code
  may use either name when constructing.
- :class:`InputSchema`: request bodies; unknown fields are a 400, not silently dropped.
- :data:`Amount`: base-unit amounts, ``int`` in code, canonical decimal strings on the wire.
- :data:`UtcDateTime`: ISO 8601 UTC with milliseconds and ``Z`` on the wire.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from predmarket.store.types import AMOUNT_MAX

AMOUNT_PATTERN = r"^(0|[1-9][0-9]*)$"
# fullmatch, not the anchored pattern: "$" would let a trailing newline through.
_AMOUNT_RE = re.compile(r"0|[1-9][0-9]*")
_AMOUNT_MAX_DIGITS = len(str(AMOUNT_MAX))


class BaseSchema(BaseModel):
    """Every API schema: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


class InputSchema(BaseSchema):
    """Request bodies: an unknown field is a validation error naming it."""

    model_config = ConfigDict(extra="forbid")


def _parse_amount(value: object) -> int:
    # Python ints come from our own code (rows, computations); the wire sends strings. A JSON
    # integer is tolerated because Python parses it exactly; floats and bools never are.
    if isinstance(value, bool):
        raise PydanticCustomError("amount_type", "amount must be a decimal string")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        if len(value) > _AMOUNT_MAX_DIGITS or not _AMOUNT_RE.fullmatch(value):
            raise PydanticCustomError(
                "amount_format",
                "amount must be a canonical decimal string of base units: 0 or digits "
                "without a leading zero",
            )
        number = int(value)
    else:
        raise PydanticCustomError("amount_type", "amount must be a decimal string")
    if not 0 <= number <= AMOUNT_MAX:
        raise PydanticCustomError("amount_range", "amount must be between 0 and 2**256-1")
    return number


Amount = Annotated[
    int,
    BeforeValidator(_parse_amount),
    PlainSerializer(str, return_type=str, when_used="json"),
    WithJsonSchema(
        {"type": "string", "pattern": AMOUNT_PATTERN, "examples": ["1000000000000000000"]}
    ),
]
"""A non-negative amount of base units: ``int`` in Python, ``"123"`` in JSON."""


def _to_utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; every stored time is UTC, so naive means UTC.
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_utc(value: datetime) -> str:
    """``2025-01-02T03:04:05.678Z``: UTC, millisecond precision (truncated), ``Z`` suffix."""
    value = _to_utc(value)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


UtcDateTime = Annotated[
    datetime,
    AfterValidator(_to_utc),
    PlainSerializer(format_utc, return_type=str, when_used="json"),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "examples": ["2025-01-02T03:04:05.678Z"]}
    ),
]
"""A point in time, always UTC in Python and ``…Z`` with milliseconds in JSON."""


def example(*examples: dict[str, Any]) -> ConfigDict:
    """``model_config = example({...})``: the schema's example(s) in OpenAPI."""
    return ConfigDict(json_schema_extra={"examples": list(examples)})
