"""Orders: one row per order placed on a market contract, open until filled or cancelled.

The table is named ``order``, a reserved word in SQL: SQLAlchemy quotes it; hand-written SQL
must write ``"order"``.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, String, Table

from predmarket.exchange import CancelReason, Outcome, Side
from predmarket.store.meta import metadata
from predmarket.store.tables._columns import (
    address,
    amount,
    between,
    big_id,
    hex32,
    one_of,
    tick,
    timestamp,
)

ORDER_STATUSES: Final = ("open", "filled", "cancelled")
SIDES: Final = tuple(s.value for s in Side)
OUTCOMES: Final = tuple(o.value for o in Outcome)
CANCEL_REASONS: Final = tuple(r.value for r in CancelReason)

order = Table(
    "order",
    metadata,
    big_id(),
    Column("market_id", Integer, ForeignKey("market.id"), nullable=False),
    Column("chain_order_id", BigInteger, nullable=False, comment="the contract's order id"),
    address("owner"),
    Column("side", String(4), nullable=False),
    Column("outcome", String(3), nullable=False),
    tick("price"),
    amount("quantity", comment="share base units ordered"),
    amount("remaining", comment="share base units still resting"),
    amount("locked_collateral", comment="collateral still locked (buy orders)"),
    amount("locked_shares", comment="shares still locked (sell orders)"),
    amount("deposit", comment="ALPH storage deposit held while the order rests"),
    Column("status", String(9), nullable=False, server_default="open"),
    Column("cancel_reason", String(10), nullable=True),
    hex32("placed_tx_id"),
    hex32("placed_block_hash"),
    hex32("closed_tx_id", nullable=True, comment="the tx that filled or cancelled it"),
    timestamp("created_at", comment="block time of OrderPlaced"),
    timestamp("updated_at"),
    timestamp("closed_at", nullable=True),
    one_of("side", SIDES),
    one_of("outcome", OUTCOMES),
    between("price", 1, 999),
    one_of("status", ORDER_STATUSES),
    one_of("cancel_reason", CANCEL_REASONS, nullable=True),
    comment="Orders as the contracts placed them; remaining and status follow Trade and "
    "OrderCancelled events.",
)

# The contract's order ids are per market.
Index(None, order.c.market_id, order.c.chain_order_id, unique=True)
# GET /v1/markets/{market}/orders, newest first (id follows chain order), with or without a
# status filter; the open orders of a market rebuild its in-memory book.
Index(None, order.c.market_id, order.c.id)
Index(None, order.c.market_id, order.c.status, order.c.id)
# A wallet's orders, newest first, with or without a status filter.
Index(None, order.c.owner, order.c.id)
Index(None, order.c.owner, order.c.status, order.c.id)
