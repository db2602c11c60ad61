"""BaseSchema naming, InputSchema strictness, the Amount and UtcDateTime wire types."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from predmarket.kit.schemas import (
    AMOUNT_PATTERN,
    Amount,
    BaseSchema,
    InputSchema,
    UtcDateTime,
    format_utc,
)
from predmarket.store.types import AMOUNT_MAX


class Order(InputSchema):
    signer_address: str
    quantity: Amount


class Fill(BaseSchema):
    market_address: str
    volume: Amount
    created_at: UtcDateTime


class TestBaseSchema:
    def test_camel_case_on_the_wire_snake_case_in_python(self) -> None:
        fill = Fill(market_address="m", volume=5, created_at=datetime(2025, 1, 2, tzinfo=UTC))
        assert fill.model_dump(mode="json") == {
            "marketAddress": "m",
            "volume": "5",
            "createdAt": "2025-01-02T00:00:00.000Z",
        }

    def test_accepts_either_name(self) -> None:
        a = Fill.model_validate(
            {"marketAddress": "m", "volume": "1", "createdAt": "2025-01-01T00:00:00Z"}
        )
        b = Fill.model_validate(
            {"market_address": "m", "volume": "1", "created_at": "2025-01-01T00:00:00Z"}
        )
        assert a == b

    def test_extra_fields_are_ignored_on_read_schemas(self) -> None:
        fill = Fill.model_validate(
            {"marketAddress": "m", "volume": "1", "createdAt": "2025-01-01T00:00:00Z", "x": 1}
        )
        assert not hasattr(fill, "x")


class TestInputSchema:
    def test_unknown_field_is_named(self) -> None:
        with pytest.raises(ValidationError) as e:
            Order.model_validate({"signerAddress": "a", "quantity": "10", "price": 5})
        assert [(err["loc"], err["type"]) for err in e.value.errors()] == [
            (("price",), "extra_forbidden")
        ]


class TestAmount:
    @pytest.mark.parametrize("text", ["0", "1", "10000000", str(10**18), str(AMOUNT_MAX)])
    def test_canonical_strings_parse_to_ints_and_back(self, text: str) -> None:
        order = Order(signer_address="a", quantity=text)  # type: ignore[arg-type]
        assert order.quantity == int(text)
        assert order.model_dump(mode="json")["quantity"] == text
        assert order.model_dump()["quantity"] == int(text)  # python mode keeps the int

    @pytest.mark.parametrize(
        ("value", "kind"),
        [
            ("", "amount_format"),
            ("01", "amount_format"),
            ("-1", "amount_format"),
            ("+1", "amount_format"),
            ("1.0", "amount_format"),
            ("1e18", "amount_format"),
            (" 1", "amount_format"),
            ("1\n", "amount_format"),
            ("\uff11", "amount_format"),  # a full-width digit 1: int() would take it
            (str(AMOUNT_MAX + 1), "amount_range"),
            ("9" * 100, "amount_format"),
            (1.0, "amount_type"),
            (True, "amount_type"),
            (None, "amount_type"),
            (-1, "amount_range"),
        ],
    )
    def test_rejects_what_is_not_a_canonical_amount(self, value: object, kind: str) -> None:
        with pytest.raises(ValidationError) as e:
            Order.model_validate({"signerAddress": "a", "quantity": value})
        assert [err["type"] for err in e.value.errors()] == [kind]

    def test_python_ints_are_accepted(self) -> None:
        assert Order(signer_address="a", quantity=7).model_dump(mode="json")["quantity"] == "7"

    def test_json_schema_is_a_patterned_string(self) -> None:
        schema = Order.model_json_schema()["properties"]["quantity"]
        assert schema["type"] == "string"
        assert schema["pattern"] == AMOUNT_PATTERN

    @given(st.integers(0, AMOUNT_MAX))
    def test_round_trip(self, n: int) -> None:
        dumped = Order(signer_address="a", quantity=n).model_dump_json()
        assert Order.model_validate_json(dumped).quantity == n


class TestUtcDateTime:
    def test_milliseconds_and_z(self) -> None:
        t = datetime(2025, 1, 2, 3, 4, 5, 678_999, tzinfo=UTC)
        assert format_utc(t) == "2025-01-02T03:04:05.678Z"  # truncated, not rounded

    def test_offsets_are_converted_to_utc(self) -> None:
        t = datetime(2025, 1, 2, 3, 0, tzinfo=timezone(timedelta(hours=2)))
        fill = Fill(market_address="m", volume=0, created_at=t)
        assert fill.created_at.tzinfo == UTC
        assert fill.model_dump(mode="json")["createdAt"] == "2025-01-02T01:00:00.000Z"

    def test_naive_means_utc(self) -> None:
        fill = Fill(market_address="m", volume=0, created_at=datetime(2025, 1, 2))
        assert fill.model_dump(mode="json")["createdAt"] == "2025-01-02T00:00:00.000Z"

    def test_json_schema_is_a_date_time_string(self) -> None:
        schema = Fill.model_json_schema(mode="serialization")["properties"]["createdAt"]
        assert (schema["type"], schema["format"]) == ("string", "date-time")
