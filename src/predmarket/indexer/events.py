"""Contract events as typed records, decoded by the published ABI (``predmarket.devnet.abi``).

The node hands events over as JSON ``Val``s; :func:`decode_registry_event` and
:func:`decode_market_event` name and type them, and turn the chain's ``U256`` enum codes into the
exchange's enums (the values the read model stores). Anything that does not fit the ABI raises
:class:`~predmarket.indexer.errors.EventDecodeError`: indexing a misread event would corrupt the
read model, so the indexer stops on it instead.

Market metadata (``MarketCreated.metadata``) is UTF-8 JSON
``{"tags": [str], "eventSlug": str?, "eventTitle": str?, "description": str?}``; every key is
optional, unknown keys are ignored and anything that is not a JSON object reads as ``{}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from pydantic import JsonValue

from predmarket.alephium.errors import AlephiumError
from predmarket.devnet.abi import (
    CANCEL_REASONS_BY_CODE,
    MARKET,
    MARKET_REGISTRY,
    OUTCOMES_BY_CODE,
    RESOLUTIONS_BY_CODE,
    SIDES_BY_CODE,
    TRADE_KINDS_BY_CODE,
    ContractAbi,
    decode_event,
)
from predmarket.exchange import CancelReason, Outcome, Resolution, Side, TradeKind
from predmarket.indexer.errors import EventDecodeError

#: Longest tag and category the read model keeps (``store.tables._columns.LABEL_LENGTH``).
MAX_LABEL: Final = 64
#: Longest event-group slug (``event_group.slug``).
MAX_SLUG: Final = 128

Named = dict[str, int | bool | bytes | str]
_E = TypeVar("_E")


# -- registry ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MarketMetadata:
    """The known keys of a market's metadata, normalised."""

    tags: tuple[str, ...] = ()
    event_slug: str | None = None
    event_title: str | None = None
    description: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        """What ``market.metadata`` stores: the known keys that are present."""
        out: dict[str, JsonValue] = {"tags": list(self.tags)}
        if self.event_slug is not None:
            out["eventSlug"] = self.event_slug
        if self.event_title is not None:
            out["eventTitle"] = self.event_title
        if self.description is not None:
            out["description"] = self.description
        return out


def normalise_label(text: str) -> str:
    """Tags (and their lookups): trimmed, lower case, at most 64 characters."""
    return text.strip().lower()[:MAX_LABEL]


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    stripped = value.strip()
    return stripped or None


def parse_metadata(raw: bytes) -> MarketMetadata:
    """Read ``MarketCreated.metadata``; never raises (bad input is empty metadata)."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return MarketMetadata()
    if not isinstance(doc, dict):
        return MarketMetadata()
    tags: list[str] = []
    raw_tags = doc.get("tags")
    if isinstance(raw_tags, list):
        for item in raw_tags:
            if isinstance(item, str):
                tag = normalise_label(item)
                if tag and tag not in tags:
                    tags.append(tag)
    slug = _text(doc.get("eventSlug"))
    if slug is not None:
        slug = slug[:MAX_SLUG]
    return MarketMetadata(
        tags=tuple(tags),
        event_slug=slug,
        event_title=_text(doc.get("eventTitle")),
        description=_text(doc.get("description")),
    )


@dataclass(frozen=True, slots=True)
class MarketCreated:
    index: int
    market: str
    yes_token: str
    no_token: str
    question: str
    category: str
    close_time_ms: int
    metadata: MarketMetadata
    creator: str


# -- market --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OrderPlaced:
    order_id: int
    owner: str
    side: Side
    outcome: Outcome
    price: int
    quantity: int
    #: What rests after the placement's own matching (0: filled at once).
    remaining: int
    deposit: int


@dataclass(frozen=True, slots=True)
class TradeEvent:
    trade_id: int
    kind: TradeKind
    maker_order_id: int
    maker_owner: str
    maker_side: Side
    maker_outcome: Outcome
    #: The maker's tick of the maker's outcome.
    price: int
    quantity: int
    taker_order_id: int
    taker_owner: str
    maker_fee: int
    taker_fee: int

    @property
    def taker_side(self) -> Side:
        if self.kind is TradeKind.NORMAL:
            return Side.SELL if self.maker_side is Side.BUY else Side.BUY
        return self.maker_side  # mint: both buy; merge: both sell

    @property
    def taker_outcome(self) -> Outcome:
        return self.maker_outcome if self.kind is TradeKind.NORMAL else self.maker_outcome.other

    @property
    def taker_price(self) -> int:
        return self.price if self.kind is TradeKind.NORMAL else 1000 - self.price

    @property
    def yes_price(self) -> int:
        """The trade as a YES tick: the maker's price, mirrored when the maker traded NO."""
        return self.price if self.maker_outcome is Outcome.YES else 1000 - self.price


@dataclass(frozen=True, slots=True)
class OrderCancelled:
    order_id: int
    owner: str
    reason: CancelReason
    quantity: int
    refund: int
    deposit: int


@dataclass(frozen=True, slots=True)
class MarketResolved:
    resolution: Resolution
    cancelled_orders: int


@dataclass(frozen=True, slots=True)
class Claimed:
    owner: str
    yes_quantity: int
    no_quantity: int
    payout: int


MarketEvent = OrderPlaced | TradeEvent | OrderCancelled | MarketResolved | Claimed


# -- decoding ------------------------------------------------------------------------------------


def _decode(
    contract: ContractAbi, event_index: int, fields: Sequence[Mapping[str, JsonValue]]
) -> Named:
    try:
        return decode_event(contract, event_index, fields)
    except (KeyError, ValueError, AlephiumError) as e:
        raise EventDecodeError(f"{contract.name} event {event_index}: {e}") from e


def _int(named: Named, key: str) -> int:
    value = named[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventDecodeError(f"{key} is not a U256")
    return value


def _str(named: Named, key: str) -> str:
    value = named[key]
    if not isinstance(value, str):
        raise EventDecodeError(f"{key} is not an address")
    return value


def _bytes(named: Named, key: str) -> bytes:
    value = named[key]
    if not isinstance(value, bytes):
        raise EventDecodeError(f"{key} is not a ByteVec")
    return value


def _code(table: Mapping[int, _E], named: Named, key: str) -> _E:
    code = _int(named, key)
    member = table.get(code)
    if member is None:
        raise EventDecodeError(f"{key} has no meaning for code {code}")
    return member


def _utf8(raw: bytes) -> str:
    # The registry takes any bytes; text that is not UTF-8 is shown with replacement characters.
    return raw.decode("utf-8", errors="replace")


def decode_registry_event(
    event_index: int, fields: Sequence[Mapping[str, JsonValue]]
) -> MarketCreated:
    """The registry's one event, MarketCreated."""
    n = _decode(MARKET_REGISTRY, event_index, fields)
    return MarketCreated(
        index=_int(n, "index"),
        market=_str(n, "market"),
        yes_token=_bytes(n, "yesToken").hex(),
        no_token=_bytes(n, "noToken").hex(),
        question=_utf8(_bytes(n, "question")),
        category=_utf8(_bytes(n, "category")).strip()[:MAX_LABEL],
        close_time_ms=_int(n, "closeTimeMs"),
        metadata=parse_metadata(_bytes(n, "metadata")),
        creator=_str(n, "creator"),
    )


def decode_market_event(event_index: int, fields: Sequence[Mapping[str, JsonValue]]) -> MarketEvent:
    """One of a market contract's events."""
    n = _decode(MARKET, event_index, fields)
    if event_index == 0:
        return OrderPlaced(
            order_id=_int(n, "orderId"),
            owner=_str(n, "owner"),
            side=_code(SIDES_BY_CODE, n, "side"),
            outcome=_code(OUTCOMES_BY_CODE, n, "outcome"),
            price=_int(n, "price"),
            quantity=_int(n, "quantity"),
            remaining=_int(n, "remaining"),
            deposit=_int(n, "deposit"),
        )
    if event_index == 1:
        return TradeEvent(
            trade_id=_int(n, "tradeId"),
            kind=_code(TRADE_KINDS_BY_CODE, n, "kind"),
            maker_order_id=_int(n, "makerOrderId"),
            maker_owner=_str(n, "makerOwner"),
            maker_side=_code(SIDES_BY_CODE, n, "makerSide"),
            maker_outcome=_code(OUTCOMES_BY_CODE, n, "makerOutcome"),
            price=_int(n, "price"),
            quantity=_int(n, "quantity"),
            taker_order_id=_int(n, "takerOrderId"),
            taker_owner=_str(n, "takerOwner"),
            maker_fee=_int(n, "makerFee"),
            taker_fee=_int(n, "takerFee"),
        )
    if event_index == 2:
        return OrderCancelled(
            order_id=_int(n, "orderId"),
            owner=_str(n, "owner"),
            reason=_code(CANCEL_REASONS_BY_CODE, n, "reason"),
            quantity=_int(n, "quantity"),
            refund=_int(n, "refund"),
            deposit=_int(n, "deposit"),
        )
    if event_index == 3:
        return MarketResolved(
            resolution=_code(RESOLUTIONS_BY_CODE, n, "resolution"),
            cancelled_orders=_int(n, "cancelledOrders"),
        )
    return Claimed(
        owner=_str(n, "owner"),
        yes_quantity=_int(n, "yesQuantity"),
        no_quantity=_int(n, "noQuantity"),
        payout=_int(n, "payout"),
    )
