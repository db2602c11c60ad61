"""``GET /v1/markets/{marketAddress}/orderbook``, ``…/prices`` and
``GET /v1/markets/{market}/activity``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from predmarket.books import service
from predmarket.books.deps import (
    BooksDep,
    DepthQuery,
    MarketAddressDep,
    TxIdQuery,
)
from predmarket.books.schemas import DEFAULT_DEPTH, Activity, OrderBook, PriceQuote
from predmarket.kit.deps import DbDep
from predmarket.markets.deps import market_ref
from predmarket.markets.errors import MarketNotFound
from predmarket.markets.service import MarketRef
from predmarket.openapi import public

router = APIRouter(prefix="/v1/markets")


@router.get(
    "/{marketAddress}/orderbook",
    response_model=OrderBook,
    tags=["Orderbook"],
    **public("get", errors=[MarketNotFound]),
)
async def get_orderbook(
    address: MarketAddressDep, books: BooksDep, depth: DepthQuery = DEFAULT_DEPTH
) -> Response:
    """The market's yes and no books (spec 2.2): up to `depth` price levels per side, best
    first, with the book's `version` and the realtime cursor `eventId`. Served from memory."""
    body = await service.orderbook_json(books, address, depth=depth)
    return Response(body, media_type="application/json")


@router.get(
    "/{marketAddress}/prices",
    response_model=PriceQuote,
    tags=["Prices"],
    **public("get", errors=[MarketNotFound]),
)
async def get_prices(address: MarketAddressDep, books: BooksDep) -> PriceQuote:
    """The market's price (spec 2.3): the last trade's yes tick / 1000 and its complement;
    0.5 / 0.5 with `priceTimestamp` 0 before the first trade."""
    return await service.price_quote(books, address)


@router.get(
    "/{market}/activity",
    response_model=Activity,
    tags=["Markets"],
    **public("activity", errors=[MarketNotFound]),
)
async def get_activity(
    db: DbDep, ref: Annotated[MarketRef, Depends(market_ref)], tx_id: TxIdQuery
) -> Activity:
    """Whether a transaction's events on this market are in the read model (`indexed`): poll
    it after submitting, then read the book."""
    return await service.activity(db, ref, tx_id=tx_id)
