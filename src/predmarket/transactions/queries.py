"""SQL of the transaction status read: what the indexer recorded for one transaction."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import RowMapping, select
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.store.tables.indexer import chain_event
from predmarket.store.tables.market import market


async def events_of(conn: AsyncConnection, tx_id: str) -> list[RowMapping]:
    """The contract events the transaction produced, in chain order (``ix_chain_event_tx_id``)."""
    stmt = (
        select(
            chain_event.c.contract_address,
            chain_event.c.event_index,
            chain_event.c.fields,
        )
        .where(chain_event.c.tx_id == tx_id)
        .order_by(chain_event.c.block_at, chain_event.c.event_counter, chain_event.c.event_position)
    )
    return list((await conn.execute(stmt)).mappings())


async def known_markets(conn: AsyncConnection, addresses: Iterable[str]) -> set[str]:
    """Which of ``addresses`` are markets of the read model."""
    wanted = sorted(set(addresses))
    if not wanted:
        return set()
    stmt = select(market.c.market_address).where(market.c.market_address.in_(wanted))
    return {str(a) for a in await conn.scalars(stmt)}


async def market_address(conn: AsyncConnection, market_id: int) -> str | None:
    found = await conn.scalar(select(market.c.market_address).where(market.c.id == market_id))
    return None if found is None else str(found)
