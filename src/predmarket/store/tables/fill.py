"""Fills: one row per Trade event (a maker order matched by a taker order)."""

from __future__ import annotations

from typing import Final

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, String, Table

from predmarket.exchange import TradeKind
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
from predmarket.store.tables.order import OUTCOMES, SIDES

TRADE_KINDS: Final = tuple(k.value for k in TradeKind)

fill = Table(
    "fill",
    metadata,
    big_id(),
    Column("market_id", Integer, ForeignKey("market.id"), nullable=False),
    Column("trade_seq", BigInteger, nullable=False, comment="Trade.tradeId, per market"),
    Column("kind", String(6), nullable=False),
    Column("maker_order_id", BigInteger, nullable=False, comment="chain order id"),
    address("maker_owner"),
    Column("maker_side", String(4), nullable=False),
    Column("maker_outcome", String(3), nullable=False),
    Column("taker_order_id", BigInteger, nullable=False, comment="chain order id"),
    address("taker_owner"),
    Column("taker_side", String(4), nullable=False),
    Column("taker_outcome", String(3), nullable=False),
    tick("price", comment="the maker's tick"),
    tick("taker_price", comment="the taker's tick: price, or 1000 - price in a mint or merge"),
    amount("quantity", comment="share base units"),
    amount("maker_fee"),
    amount("taker_fee"),
    hex32("tx_id"),
    hex32("block_hash"),
    Column("event_counter", BigInteger, nullable=False, comment="the node's event counter"),
    Column("event_position", Integer, nullable=False, comment="index in the counter's batch"),
    timestamp("traded_at", comment="block time"),
    one_of("kind", TRADE_KINDS),
    one_of("maker_side", SIDES),
    one_of("maker_outcome", OUTCOMES),
    one_of("taker_side", SIDES),
    one_of("taker_outcome", OUTCOMES),
    between("price", 1, 999),
    between("taker_price", 1, 999),
    comment="Trades; fill.id follows chain order, so it is the newest-first key.",
)

Index(None, fill.c.market_id, fill.c.trade_seq, unique=True)
# GET /v1/markets/{market}/fills, newest first.
Index(None, fill.c.market_id, fill.c.id)
# A wallet's fills, newest first: the maker side and the taker side each have an ordered index;
# the query is a UNION ALL of the two ordered by id (a merge of two index scans).
Index(None, fill.c.maker_owner, fill.c.id)
Index(None, fill.c.taker_owner, fill.c.id)
