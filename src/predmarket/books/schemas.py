"""Responses of the books domain: order book snapshots (spec 2.2), price quotes (2.3), activity."""

from __future__ import annotations

from typing import Final

from pydantic import Field

from predmarket.kit.schemas import Amount, BaseSchema, UtcDateTime, example

#: ``depth`` of ``GET …/orderbook``: price levels per side (spec 8).
DEFAULT_DEPTH: Final = 20
MAX_DEPTH: Final = 100

_ADDRESS = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"
_TX = "7f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b"


class PriceLevel(BaseSchema):
    """One price of one side of a book: the open orders resting there, aggregated."""

    model_config = example({"price": 640, "totalQuantity": "25000000000000000000", "orderCount": 3})

    price: int = Field(ge=1, le=999, description="tick")
    total_quantity: Amount = Field(description="share base units resting at this price")
    order_count: int = Field(ge=1)


class BookSide(BaseSchema):
    """One outcome's book: bids best (highest) first, asks best (lowest) first."""

    model_config = example(
        {
            "bids": [{"price": 640, "totalQuantity": "25000000000000000000", "orderCount": 3}],
            "asks": [{"price": 660, "totalQuantity": "10000000000000000000", "orderCount": 1}],
        }
    )

    bids: list[PriceLevel]
    asks: list[PriceLevel]


class OrderBook(BaseSchema):
    """A market's two linked books (spec 2.2), with their version and realtime cursor.

    ``version`` counts the order events the market has seen (placed, updated, filled,
    cancelled): every ``order`` frame on ``market:{marketAddress}:orders`` adds one. ``eventId``
    is the realtime cursor: the snapshot reflects every event of the market's topics up to and
    including that outbox id, so a stream opened with ``lastEventId=eventId`` continues exactly
    where the snapshot stops. Best prices are ticks; an empty side is 0.
    """

    model_config = example(
        {
            "marketAddress": _ADDRESS,
            "yes": {
                "bids": [{"price": 640, "totalQuantity": "25000000000000000000", "orderCount": 3}],
                "asks": [{"price": 660, "totalQuantity": "10000000000000000000", "orderCount": 1}],
            },
            "no": {
                "bids": [{"price": 330, "totalQuantity": "5000000000000000000", "orderCount": 1}],
                "asks": [],
            },
            "bestBidYes": 640,
            "bestAskYes": 660,
            "bestBidNo": 330,
            "bestAskNo": 0,
            "version": 42,
            "eventId": "1834",
        }
    )

    market_address: str
    yes: BookSide
    no: BookSide
    best_bid_yes: int = Field(ge=0, le=1000, description="highest yes bid; 0 when none")
    best_ask_yes: int = Field(ge=0, le=1000, description="lowest yes ask; 0 when none")
    best_bid_no: int = Field(ge=0, le=1000, description="highest no bid; 0 when none")
    best_ask_no: int = Field(ge=0, le=1000, description="lowest no ask; 0 when none")
    version: int = Field(ge=0, description="book version: +1 per order event of the market")
    event_id: str = Field(
        pattern=r"^(0|[1-9][0-9]*)$",
        description="realtime cursor: the last outbox event id the snapshot reflects; pass it as "
        "lastEventId (0: no event yet, connect without a cursor)",
    )


class PriceQuote(BaseSchema):
    """Spec 2.3. The price is the last trade's: ``yesPrice`` = its yes tick / 1000 and
    ``noPrice`` = 1 - ``yesPrice``; 0.5 / 0.5 with ``priceTimestamp`` 0 before the first trade."""

    model_config = example(
        {
            "marketAddress": _ADDRESS,
            "yesPrice": 0.64,
            "noPrice": 0.36,
            "priceTimestamp": 1767225600000,
        },
        {"marketAddress": _ADDRESS, "yesPrice": 0.5, "noPrice": 0.5, "priceTimestamp": 0},
    )

    market_address: str
    yes_price: float = Field(ge=0, le=1)
    no_price: float = Field(ge=0, le=1)
    price_timestamp: int = Field(
        ge=0, description="block time of the last trade, ms since the epoch; 0 without trades"
    )


class Activity(BaseSchema):
    """Whether a transaction's effects on this market are in the read model yet."""

    model_config = example(
        {
            "marketAddress": _ADDRESS,
            "txId": _TX,
            "indexed": True,
            "blockHash": "00a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f",
            "indexedAt": "2026-01-01T00:00:00.123Z",
        },
        {
            "marketAddress": _ADDRESS,
            "txId": _TX,
            "indexed": False,
            "blockHash": None,
            "indexedAt": None,
        },
    )

    market_address: str
    tx_id: str
    indexed: bool
    block_hash: str | None = Field(description="block of the indexed transaction")
    indexed_at: UtcDateTime | None = Field(description="when the indexer applied it")
