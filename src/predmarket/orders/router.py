"""``GET /v1/markets/{market}/orders`` and ``GET /v1/markets/{market}/fills``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from predmarket.kit.deps import DbDep
from predmarket.kit.facets import FacetsParam
from predmarket.kit.fields import FieldSelection, fields_param
from predmarket.kit.pagination import PageRequest, page_params
from predmarket.markets.deps import market_ref
from predmarket.markets.errors import MarketNotFound
from predmarket.markets.service import MarketRef, check_address
from predmarket.openapi import public
from predmarket.orders import service
from predmarket.orders.schemas import (
    LIST_DEFAULT_LIMIT,
    LIST_MAX_LIMIT,
    Fill,
    FillPage,
    Order,
    OrderPage,
    OrderStatus,
    OutcomeName,
    SideName,
    TradeKindName,
)

router = APIRouter(prefix="/v1/markets", tags=["Markets"])

MarketRefDep = Annotated[MarketRef, Depends(market_ref)]
ListPageDep = Annotated[
    PageRequest, Depends(page_params(default_limit=LIST_DEFAULT_LIMIT, max_limit=LIST_MAX_LIMIT))
]
OrderFields = Annotated[FieldSelection, Depends(fields_param(Order, always=("orderId",)))]
FillFields = Annotated[FieldSelection, Depends(fields_param(Fill, always=("tradeId",)))]
OwnerQuery = Annotated[str | None, Query(max_length=80, description="a wallet address")]


@router.get(
    "/{market}/orders", response_model=OrderPage, **public("orders", errors=[MarketNotFound])
)
async def list_orders(
    db: DbDep,
    ref: MarketRefDep,
    page: ListPageDep,
    fields: OrderFields,
    facets: FacetsParam = False,
    status: Annotated[OrderStatus | None, Query(description="open, filled or cancelled")] = None,
    owner: OwnerQuery = None,
    side: Annotated[SideName | None, Query(description="buy or sell")] = None,
    outcome: Annotated[OutcomeName | None, Query(description="yes or no")] = None,
) -> OrderPage | Response:
    """The market's orders, newest first (`{market}` is its id or contract address).

    Facets count the matching orders by `status`; every order carries its market's `category`
    and `tag`s."""
    result = await service.list_orders(
        db,
        ref,
        page,
        status=status,
        owner=check_address(owner, field="query.owner"),
        side=side,
        outcome=outcome,
        facets=facets,
    )
    return fields.respond(result, items="orders")


@router.get("/{market}/fills", response_model=FillPage, **public("fills", errors=[MarketNotFound]))
async def list_fills(
    db: DbDep,
    ref: MarketRefDep,
    page: ListPageDep,
    fields: FillFields,
    facets: FacetsParam = False,
    owner: Annotated[
        str | None,
        Query(max_length=80, description="a wallet address: its trades as maker or taker"),
    ] = None,
    kind: Annotated[TradeKindName | None, Query(description="normal, mint or merge")] = None,
) -> FillPage | Response:
    """The market's trades, newest first (`{market}` is its id or contract address).

    Facets: every fill carries its market's `category` and `tag`s; fills have no `status`
    (always an empty list)."""
    result = await service.list_fills(
        db, ref, page, owner=check_address(owner, field="query.owner"), kind=kind, facets=facets
    )
    return fields.respond(result, items="fills")
