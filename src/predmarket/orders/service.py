"""A market's orders and fills, newest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import RowMapping, Select, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.books import queries as books_queries
from predmarket.exchange import TICK_SCALE
from predmarket.kit.facets import ColumnFacet, FacetCount, Facets, count_facets
from predmarket.kit.pagination import PageRequest, paginate
from predmarket.markets.errors import MarketNotFound
from predmarket.markets.service import MarketRef
from predmarket.orders import queries
from predmarket.orders.schemas import Fill, FillPage, Order, OrderPage
from predmarket.store.tables.order import order


async def _market_or_raise(db: AsyncConnection, ref: MarketRef) -> RowMapping:
    row = await books_queries.get_market_ref(db, id=ref.id, address=ref.address)
    if row is None:
        raise MarketNotFound()
    return row


async def _facets(
    db: AsyncConnection, market: RowMapping, stmt: Select[Any], *, status: ColumnFacet | None
) -> Facets:
    """Facets of a market's rows: every row shares the market's category and tags, so those
    counts are the number of matching rows; ``status`` counts per value when rows have one."""
    total = int(await db.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    if total == 0:
        return Facets(category=[], tag=[], status=[])
    tags = await queries.market_tags(db, int(market["id"]))
    statuses = (await count_facets(db, stmt, {"status": status}))["status"] if status else []
    return Facets(
        category=[FacetCount(value=market["category"], count=total)] if market["category"] else [],
        tag=[FacetCount(value=t, count=total) for t in tags],
        status=statuses,
    )


def _order(row: RowMapping, market_address: str) -> Order:
    return Order(
        order_id=row["chain_order_id"],
        market_address=market_address,
        owner=row["owner"],
        side=row["side"],
        outcome=row["outcome"],
        price=row["price"],
        quantity=row["quantity"],
        remaining=row["remaining"],
        status=row["status"],
        cancel_reason=row["cancel_reason"],
        tx_id=row["closed_tx_id"] or row["placed_tx_id"],
        placed_tx_id=row["placed_tx_id"],
        closed_tx_id=row["closed_tx_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        closed_at=row["closed_at"],
    )


def _fill(row: RowMapping) -> Fill:
    price = int(row["price"])
    return Fill(
        trade_id=str(row["trade_seq"]),
        kind=row["kind"],
        maker_order_id=row["maker_order_id"],
        taker_order_id=row["taker_order_id"],
        maker=row["maker_owner"],
        taker=row["taker_owner"],
        outcome=row["maker_outcome"],
        maker_side=row["maker_side"],
        taker_outcome=row["taker_outcome"],
        taker_side=row["taker_side"],
        price=price,
        taker_price=row["taker_price"],
        yes_price=price if row["maker_outcome"] == "yes" else TICK_SCALE - price,
        quantity=row["quantity"],
        maker_fee=row["maker_fee"],
        taker_fee=row["taker_fee"],
        tx_id=row["tx_id"],
        block_hash=row["block_hash"],
        timestamp=row["traded_at"],
    )


async def list_orders(
    db: AsyncConnection,
    ref: MarketRef,
    page: PageRequest,
    *,
    status: str | None = None,
    owner: str | None = None,
    side: str | None = None,
    outcome: str | None = None,
    facets: bool = False,
) -> OrderPage:
    """One page of the market's orders, newest first."""
    market = await _market_or_raise(db, ref)
    stmt = queries.orders(int(market["id"]), status=status, owner=owner, side=side, outcome=outcome)
    result = await paginate(db, stmt, page, queries.ORDERS_ORDER)
    address = str(market["market_address"])
    return OrderPage(
        orders=[_order(r, address) for r in result.items],
        pagination=result.pagination,
        facets=await _facets(db, market, stmt, status=ColumnFacet(order.c.status))
        if facets
        else None,
    )


async def list_fills(
    db: AsyncConnection,
    ref: MarketRef,
    page: PageRequest,
    *,
    owner: str | None = None,
    kind: str | None = None,
    facets: bool = False,
) -> FillPage:
    """One page of the market's fills, newest first."""
    market = await _market_or_raise(db, ref)
    stmt = queries.fills(int(market["id"]), owner=owner, kind=kind)
    result = await paginate(db, stmt, page, queries.FILLS_ORDER)
    return FillPage(
        fills=[_fill(r) for r in result.items],
        pagination=result.pagination,
        facets=await _facets(db, market, stmt, status=None) if facets else None,
    )
