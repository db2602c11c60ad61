"""Positions: the shares a wallet holds in a market and what they cost it."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import address, amount, timestamp

position = Table(
    "position",
    metadata,
    Column("market_id", Integer, ForeignKey("market.id"), primary_key=True),
    address("owner", primary_key=True),
    amount("yes_shares", comment="held, including shares locked by resting sell orders"),
    amount("no_shares", comment="held, including shares locked by resting sell orders"),
    amount("yes_cost", comment="collateral paid for the yes shares held, fees included"),
    amount("no_cost", comment="collateral paid for the no shares held, fees included"),
    amount("claimed_payout", comment="collateral received from claims"),
    timestamp("updated_at"),
    comment="Per (market, wallet) holdings, derived from fills and claims by the indexer.",
)

# A wallet's positions across markets.
Index(None, position.c.owner, position.c.market_id)
