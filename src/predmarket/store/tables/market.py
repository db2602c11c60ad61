"""Markets: one row per market contract, with the summary fields the lists sort and filter on.

The indexer keeps the denormalised summary (volume, trade count, best prices, open interest, book
version) current in the same transaction as the events that change it, so every list query reads
one table and every sort has an index.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, String, Table, Text

from predmarket.exchange import Resolution
from predmarket.store.meta import metadata
from predmarket.store.tables._columns import (
    LABEL_LENGTH,
    address,
    amount,
    between,
    hex32,
    one_of,
    small_id,
    tick,
    timestamp,
)
from predmarket.store.types import JsonDocument

#: ``open`` until the MarketResolved event, then ``resolved``. Trading also stops at ``close_at``;
#: that is a time, not an event, so readers compare ``close_at`` with the clock themselves.
MARKET_STATUSES: Final = ("open", "resolved")
RESOLUTIONS: Final = tuple(r.value for r in Resolution)
#: What an empty side of a book reports (spec 2.1: summaries carry ticks in 0..1000).
NO_BID: Final = 0
NO_ASK: Final = 0  # one rule for both sides: 0 means "no order on this side"

market = Table(
    "market",
    metadata,
    small_id(),
    # identity on chain
    address("market_address", unique=True),
    hex32("contract_id", unique=True),
    address("registry_address"),
    Column("registry_index", BigInteger, nullable=False, comment="MarketCreated.index"),
    hex32("yes_token_id"),
    hex32("no_token_id"),
    # what the market asks
    Column("question", Text, nullable=False),
    Column("category", String(LABEL_LENGTH), nullable=False),
    address("creator"),
    Column("event_group_id", Integer, ForeignKey("event_group.id"), nullable=True),
    timestamp("close_at"),
    Column("metadata", JsonDocument(), nullable=True, comment="MarketCreated.metadata, parsed"),
    # creation
    timestamp("created_at", comment="block time of the MarketCreated event"),
    hex32("created_block_hash"),
    hex32("created_tx_id"),
    # resolution
    Column("status", String(16), nullable=False, server_default="open"),
    Column("resolution", String(16), nullable=True),
    timestamp("resolved_at", nullable=True),
    hex32("resolved_tx_id", nullable=True),
    # trading summary
    amount("volume", comment="traded quantity, share base units"),
    Column("trade_count", BigInteger, nullable=False, server_default="0"),
    timestamp("last_trade_at", nullable=True),
    # fill.id of the latest trade, 0 before the first: a non-null, total "recently traded" key,
    # so the sort has one index and keyset cursors need no NULL ordering rules (which differ
    # between SQLite and PostgreSQL).
    Column("last_fill_id", BigInteger, nullable=False, server_default="0"),
    tick("last_price_yes", nullable=True, comment="yes tick of the latest trade"),
    tick("best_bid_yes", server_default=str(NO_BID)),
    tick("best_ask_yes", server_default=str(NO_ASK)),
    tick("best_bid_no", server_default=str(NO_BID)),
    tick("best_ask_no", server_default=str(NO_ASK)),
    amount("open_interest", comment="complete sets outstanding (yes supply), share base units"),
    Column(
        "book_version",
        BigInteger,
        nullable=False,
        server_default="0",
        comment="bumped by every change to either book",
    ),
    timestamp("updated_at"),
    one_of("status", MARKET_STATUSES),
    one_of("resolution", RESOLUTIONS, nullable=True),
    between("last_price_yes", 0, 1000, nullable=True),
    between("best_bid_yes", 0, 1000),
    between("best_ask_yes", 0, 1000),
    between("best_bid_no", 0, 1000),
    between("best_ask_no", 0, 1000),
    comment="One row per market contract; the list summary is kept current by the indexer.",
)

# One market per (registry, MarketCreated.index).
Index(None, market.c.registry_address, market.c.registry_index, unique=True)

# GET /v1/markets sorts: created-at, volume, best-bid-yes, recently-traded, each with the id as
# the tie-break of keyset cursors (both directions scan the same index).
_SORT_KEYS: Final = (
    market.c.created_at,
    market.c.volume,
    market.c.best_bid_yes,
    market.c.last_fill_id,
)
for _key in _SORT_KEYS:
    # status=open|resolved
    Index(None, market.c.status, _key, market.c.id)
    # category=... with status=open|resolved
    Index(None, market.c.category, market.c.status, _key, market.c.id)
    # status=all
    Index(None, _key, market.c.id)

# creator=... (selective: the creator's markets, newest first); markets of an event group.
Index(None, market.c.creator, market.c.created_at, market.c.id)
Index(None, market.c.event_group_id, market.c.id)
