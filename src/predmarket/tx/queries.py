"""What the builders read from the read model: the market traded on and the order cancelled."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.market import market
from predmarket.store.tables.order import order


@dataclass(frozen=True, slots=True)
class TradedMarket:
    """The columns of a market row a build needs."""

    id: int
    market_address: str
    contract_id: str
    registry_address: str
    yes_token_id: str
    no_token_id: str
    status: str
    close_at: datetime


@dataclass(frozen=True, slots=True)
class RestingOrder:
    id: int
    chain_order_id: int
    owner: str
    status: str


async def get_market(conn: AsyncConnection, market_address: str) -> TradedMarket | None:
    """The market with this contract address (``uq_market_market_address``)."""
    row = (
        await conn.execute(
            select(
                market.c.id,
                market.c.market_address,
                market.c.contract_id,
                market.c.registry_address,
                market.c.yes_token_id,
                market.c.no_token_id,
                market.c.status,
                market.c.close_at,
            ).where(market.c.market_address == market_address)
        )
    ).one_or_none()
    return None if row is None else TradedMarket(*row)


async def get_order(
    conn: AsyncConnection, market_id: int, chain_order_id: int
) -> RestingOrder | None:
    """One order of a market by the contract's order id (``uq_order_market_id_chain_order_id``)."""
    row = (
        await conn.execute(
            select(order.c.id, order.c.chain_order_id, order.c.owner, order.c.status).where(
                order.c.market_id == market_id, order.c.chain_order_id == chain_order_id
            )
        )
    ).one_or_none()
    return None if row is None else RestingOrder(*row)
