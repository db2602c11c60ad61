"""Orders and fills of a market, as the list endpoints return them.

Both are supersets of the realtime frames' payloads (``order`` and ``trade`` entities), with the
same names and types for the fields they share, so a client can merge frames into rows.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from predmarket.kit.facets import OptionalFacets
from predmarket.kit.pagination import Pagination
from predmarket.kit.schemas import Amount, BaseSchema, UtcDateTime, example

#: ``limit`` of the orders and fills lists.
LIST_DEFAULT_LIMIT: Final = 50
LIST_MAX_LIMIT: Final = 200

SideName = Literal["buy", "sell"]
OutcomeName = Literal["yes", "no"]
OrderStatus = Literal["open", "filled", "cancelled"]
CancelReasonName = Literal["owner", "self-trade", "resolved"]
TradeKindName = Literal["normal", "mint", "merge"]

_MARKET = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"
_OWNER = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH"
_TAKER = "1BvKAqsWqSXRTxKC8AHNjUDUbjQ8cYtU9UpTZjHcXXTnJ"
_TX = "7f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b"
_TX2 = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
_BLOCK = "00a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f"

ORDER_EXAMPLE = {
    "orderId": 17,
    "marketAddress": _MARKET,
    "owner": _OWNER,
    "side": "buy",
    "outcome": "yes",
    "price": 640,
    "quantity": "10000000000000000000",
    "remaining": "4000000000000000000",
    "status": "open",
    "cancelReason": None,
    "txId": _TX2,
    "placedTxId": _TX,
    "closedTxId": None,
    "createdAt": "2026-01-01T00:00:00.000Z",
    "updatedAt": "2026-01-01T00:05:00.000Z",
    "closedAt": None,
}

FILL_EXAMPLE = {
    "tradeId": "9",
    "kind": "mint",
    "makerOrderId": 17,
    "takerOrderId": 21,
    "maker": _OWNER,
    "taker": _TAKER,
    "outcome": "yes",
    "makerSide": "buy",
    "takerOutcome": "no",
    "takerSide": "buy",
    "price": 640,
    "takerPrice": 360,
    "yesPrice": 640,
    "quantity": "6000000000000000000",
    "makerFee": "96000000000000000",
    "takerFee": "54000000000000000",
    "txId": _TX2,
    "blockHash": _BLOCK,
    "timestamp": "2026-01-01T00:05:00.000Z",
}


class Order(BaseSchema):
    """An order as the market's contract placed it, with what is left of it.

    ``remaining`` is what still rests (0 once filled or cancelled). ``txId`` is the transaction
    of the order's latest change (as in realtime frames); ``placedTxId`` and ``closedTxId``
    (the fill or cancel that took it off the book) are both kept.
    """

    model_config = example(ORDER_EXAMPLE)

    order_id: int = Field(ge=1, description="the contract's order id (per market, from 1)")
    market_address: str
    owner: str
    side: SideName
    outcome: OutcomeName
    price: int = Field(ge=1, le=999, description="limit price, tick")
    quantity: Amount = Field(description="share base units ordered")
    remaining: Amount = Field(description="share base units still resting")
    status: OrderStatus
    cancel_reason: CancelReasonName | None = Field(description="set when cancelled")
    tx_id: str = Field(description="transaction of the latest change")
    placed_tx_id: str
    closed_tx_id: str | None
    created_at: UtcDateTime = Field(description="block time of the placement")
    updated_at: UtcDateTime
    closed_at: UtcDateTime | None


class OrderPage(BaseSchema):
    model_config = example(
        {"orders": [ORDER_EXAMPLE], "pagination": {"limit": 50, "nextCursor": None}}
    )

    orders: list[Order]
    pagination: Pagination
    facets: OptionalFacets = None


class Fill(BaseSchema):
    """One trade: a resting maker order matched by a taker order.

    ``price`` is the maker's tick of the maker's ``outcome``; in a mint or merge the taker
    trades the other outcome at ``takerPrice`` = 1000 - ``price``. ``yesPrice`` is the trade's
    tick expressed for YES (the tick the price quote uses). Buyers pay the 2.5 % fee.
    """

    model_config = example(FILL_EXAMPLE)

    trade_id: str = Field(
        pattern=r"^(0|[1-9][0-9]*)$", description="the contract's trade id (per market)"
    )
    kind: TradeKindName
    maker_order_id: int
    taker_order_id: int
    maker: str
    taker: str
    outcome: OutcomeName = Field(description="the maker's outcome")
    maker_side: SideName
    taker_outcome: OutcomeName
    taker_side: SideName
    price: int = Field(ge=1, le=999, description="the maker's tick")
    taker_price: int = Field(ge=1, le=999, description="the taker's tick")
    yes_price: int = Field(ge=1, le=999, description="the trade's tick for YES")
    quantity: Amount
    maker_fee: Amount
    taker_fee: Amount
    tx_id: str
    block_hash: str
    timestamp: UtcDateTime = Field(description="block time")


class FillPage(BaseSchema):
    model_config = example(
        {"fills": [FILL_EXAMPLE], "pagination": {"limit": 50, "nextCursor": None}}
    )

    fills: list[Fill]
    pagination: Pagination
    facets: OptionalFacets = None
