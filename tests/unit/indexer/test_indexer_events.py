"""Decoding contract events and market metadata (pure)."""

from __future__ import annotations

import json

import pytest

from predmarket.alephium.address import contract_address, lockup_from_public_key, parse_address
from predmarket.alephium.script import ValAddress, ValByteVec, ValU256, val_to_json
from predmarket.alephium.signing import generate_private_key, public_key_from_private
from predmarket.exchange import CancelReason, Outcome, Side, TradeKind
from predmarket.indexer.errors import EventDecodeError
from predmarket.indexer.events import (
    MarketMetadata,
    OrderCancelled,
    OrderPlaced,
    TradeEvent,
    decode_market_event,
    decode_registry_event,
    parse_metadata,
)

OWNER = lockup_from_public_key(public_key_from_private(generate_private_key()), "default")


def u(n: int) -> dict[str, object]:
    return dict(val_to_json(ValU256(n)))


def addr() -> dict[str, object]:
    return dict(val_to_json(ValAddress(OWNER)))


class TestMetadata:
    def test_known_keys_normalised(self) -> None:
        raw = json.dumps(
            {
                "tags": [" Elections", "EU", "elections", "", 3, "x" * 80],
                "eventSlug": "  eu-2026 ",
                "eventTitle": "EU elections",
                "description": "  Who wins?  ",
                "other": [1, 2],
            }
        ).encode()
        meta = parse_metadata(raw)
        assert meta == MarketMetadata(
            tags=("elections", "eu", "x" * 64),
            event_slug="eu-2026",
            event_title="EU elections",
            description="Who wins?",
        )
        assert meta.to_json() == {
            "tags": ["elections", "eu", "x" * 64],
            "eventSlug": "eu-2026",
            "eventTitle": "EU elections",
            "description": "Who wins?",
        }

    @pytest.mark.parametrize(
        "raw",
        [
            b"",
            b"{",
            b"[1]",
            b'"text"',
            b"null",
            b"\xff\xfe",
            b'{"tags": "a,b"}',
            b'{"eventSlug": 5}',
        ],
    )
    def test_anything_else_is_empty(self, raw: bytes) -> None:
        assert parse_metadata(raw) == MarketMetadata()
        assert parse_metadata(raw).to_json() == {"tags": []}


class TestDecode:
    def test_market_created(self) -> None:
        market = contract_address(bytes(range(32)))
        fields = [
            u(3),
            dict(val_to_json(ValAddress(parse_address(market)))),
            dict(val_to_json(ValByteVec(b"\x01" * 32))),
            dict(val_to_json(ValByteVec(b"\x02" * 32))),
            dict(val_to_json(ValByteVec("Will it rain? ☔".encode()))),
            dict(val_to_json(ValByteVec(b"  weather "))),
            u(1_900_000_000_000),
            dict(val_to_json(ValByteVec(b'{"tags": ["Rain"]}'))),
            addr(),
        ]
        ev = decode_registry_event(0, fields)
        assert (ev.index, ev.market, ev.question, ev.category) == (
            3,
            market,
            "Will it rain? ☔",
            "weather",
        )
        assert ev.yes_token == "01" * 32 and ev.metadata.tags == ("rain",)

    def test_order_events_get_the_exchange_enums(self) -> None:
        placed = decode_market_event(0, [u(7), addr(), u(1), u(0), u(640), u(10**18), u(0), u(0)])
        assert isinstance(placed, OrderPlaced)
        assert (placed.side, placed.outcome, placed.price) == (Side.SELL, Outcome.YES, 640)
        trade = decode_market_event(
            1, [u(1), u(1), u(2), addr(), u(0), u(1), u(300), u(10**17), u(3), addr(), u(5), u(6)]
        )
        assert isinstance(trade, TradeEvent)
        assert trade.kind is TradeKind.MINT
        assert (trade.taker_side, trade.taker_outcome, trade.taker_price) == (
            Side.BUY,
            Outcome.YES,
            700,
        )
        assert trade.yes_price == 700  # the maker bought NO at 300
        cancelled = decode_market_event(2, [u(2), addr(), u(1), u(10**17), u(1), u(0)])
        assert isinstance(cancelled, OrderCancelled) and cancelled.reason is CancelReason.SELF_TRADE

    @pytest.mark.parametrize(
        ("index", "fields"),
        [
            (0, [u(7)]),  # too few fields
            (0, [u(7), u(1), u(1), u(0), u(640), u(1), u(0), u(0)]),  # owner is not an address
            (0, [u(7), addr(), u(2), u(0), u(640), u(1), u(0), u(0)]),  # side 2 does not exist
            (9, []),  # no such event
            (0, [{"type": "U256", "value": "x"}] * 8),
        ],
    )
    def test_what_does_not_fit_the_abi_is_refused(self, index: int, fields: list) -> None:  # type: ignore[type-arg]
        with pytest.raises(EventDecodeError):
            decode_market_event(index, fields)
