"""The indexer's own state: where it is in each contract's event log, and what it applied.

- ``indexer_checkpoint``: per contract, the node's ``nextStart`` (its event counter) and the
  last block seen; written in the same transaction as the events it covers, so a restart
  resumes exactly where the last commit left off.
- ``chain_event``: every applied event under its natural key (contract, event counter, position
  in the counter's batch). The primary key makes applying an event twice impossible: a replay
  after a crash between commit and checkpoint fails the insert instead of double counting.
- ``indexed_tx``: transactions whose events are in the read model (``activity?txId=``).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, SmallInteger, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import address, hex32, timestamp
from predmarket.store.types import JsonDocument

indexer_checkpoint = Table(
    "indexer_checkpoint",
    metadata,
    address("contract_address", primary_key=True),
    Column(
        "next_start",
        BigInteger,
        nullable=False,
        server_default="0",
        comment="the node's nextStart: the next event counter to read",
    ),
    hex32("last_block_hash", nullable=True),
    Column("last_block_height", BigInteger, nullable=True),
    timestamp("last_block_at", nullable=True, comment="block time of the last applied batch"),
    timestamp("updated_at"),
    comment="Per contract: the next event counter to read and the last block applied.",
)

chain_event = Table(
    "chain_event",
    metadata,
    address("contract_address", primary_key=True),
    Column("event_counter", BigInteger, primary_key=True, comment="the batch's event counter"),
    Column("event_position", Integer, primary_key=True, comment="index within the batch"),
    Column("event_index", SmallInteger, nullable=False, comment="ABI event index"),
    hex32("tx_id"),
    hex32("block_hash"),
    timestamp("block_at"),
    Column("fields", JsonDocument(), nullable=False, comment="the node's JSON Vals"),
    timestamp("applied_at"),
    comment="Applied contract events, at most once each (the primary key is the event's key).",
)

# GET /v1/transactions/{txId}: the events a tx produced; reorg handling: a block's events.
Index(None, chain_event.c.tx_id)
Index(None, chain_event.c.block_hash)

indexed_tx = Table(
    "indexed_tx",
    metadata,
    hex32("tx_id", primary_key=True),
    hex32("block_hash"),
    Column("market_id", Integer, ForeignKey("market.id"), nullable=True),
    timestamp("indexed_at"),
    comment="Transactions whose events are in the read model.",
)
