"""The initial read model: markets, taxonomy, orders, fills, positions, indexer state, outbox.

Revision ID: 0001
Revises: (none)
Created: 2026-11-22

Creates exactly ``predmarket.store.meta.metadata`` as of this revision (a test compares the
upgraded database with the metadata on SQLite and PostgreSQL). Amount, timestamp and JSON columns
use ``predmarket.store.types``; see docs/data-model.md for what every index serves.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from predmarket.store import types

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "category",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("market_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("open_market_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_category")),
        comment="Every category with its market counts (all and open).",
    )
    op.create_index(
        op.f("ix_category_market_count_name"), "category", ["market_count", "name"], unique=False
    )
    op.create_table(
        "chain_event",
        sa.Column("contract_address", sa.String(length=80), nullable=False),
        sa.Column(
            "event_counter", sa.BigInteger(), nullable=False, comment="the batch's event counter"
        ),
        sa.Column("event_position", sa.Integer(), nullable=False, comment="index within the batch"),
        sa.Column("event_index", sa.SmallInteger(), nullable=False, comment="ABI event index"),
        sa.Column("tx_id", sa.String(length=64), nullable=False),
        sa.Column("block_hash", sa.String(length=64), nullable=False),
        sa.Column("block_at", types.UtcDateTime(), nullable=False),
        sa.Column("fields", types.JsonDocument(), nullable=False, comment="the node's JSON Vals"),
        sa.Column("applied_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint(
            "contract_address", "event_counter", "event_position", name=op.f("pk_chain_event")
        ),
        comment="Applied contract events, at most once each (the primary key is the event's key).",
    )
    op.create_index(op.f("ix_chain_event_block_hash"), "chain_event", ["block_hash"], unique=False)
    op.create_index(op.f("ix_chain_event_tx_id"), "chain_event", ["tx_id"], unique=False)
    op.create_table(
        "event_group",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("slug", sa.String(length=128), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=64), server_default="", nullable=False),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_group")),
        sa.UniqueConstraint("slug", name=op.f("uq_event_group_slug")),
        comment="Linked-market groups; markets point here with market.event_group_id.",
    )
    op.create_index(
        op.f("ix_event_group_category_created_at_id"),
        "event_group",
        ["category", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_event_group_created_at_id"), "event_group", ["created_at", "id"], unique=False
    )
    op.create_table(
        "indexer_checkpoint",
        sa.Column("contract_address", sa.String(length=80), nullable=False),
        sa.Column(
            "next_start",
            sa.BigInteger(),
            server_default="0",
            nullable=False,
            comment="the node's nextStart: the next event counter to read",
        ),
        sa.Column("last_block_hash", sa.String(length=64), nullable=True),
        sa.Column("last_block_height", sa.BigInteger(), nullable=True),
        sa.Column(
            "last_block_at",
            types.UtcDateTime(),
            nullable=True,
            comment="block time of the last applied batch",
        ),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("contract_address", name=op.f("pk_indexer_checkpoint")),
        comment="Per contract: the next event counter to read and the last block applied.",
    )
    op.create_table(
        "outbox",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.Identity(always=False),
            nullable=False,
        ),
        sa.Column("topic", sa.String(length=255), nullable=False),
        sa.Column("operation", sa.String(length=6), nullable=False),
        sa.Column("entity", sa.String(length=64), nullable=False),
        sa.Column("key", types.JsonDocument(), nullable=False),
        sa.Column("payload", types.JsonDocument(), nullable=False),
        sa.Column("source", sa.String(length=7), nullable=False),
        sa.Column("created_at", types.UtcDateTime(), nullable=False),
        sa.CheckConstraint(
            "operation IN ('insert', 'update', 'delete')", name=op.f("ck_outbox_operation")
        ),
        sa.CheckConstraint("source IN ('indexer', 'api', 'outbox')", name=op.f("ck_outbox_source")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        comment="Realtime event log; id is the event id, monotonic and never reused.",
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_outbox_topic_id"), "outbox", ["topic", "id"], unique=False)
    op.create_table(
        "tag",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("market_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("open_market_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_tag")),
        comment="Every tag with its market counts (all and open).",
    )
    op.create_index(op.f("ix_tag_market_count_name"), "tag", ["market_count", "name"], unique=False)
    op.create_table(
        "market",
        sa.Column("id", sa.Integer(), sa.Identity(always=False), nullable=False),
        sa.Column("market_address", sa.String(length=80), nullable=False),
        sa.Column("contract_id", sa.String(length=64), nullable=False),
        sa.Column("registry_address", sa.String(length=80), nullable=False),
        sa.Column("registry_index", sa.BigInteger(), nullable=False, comment="MarketCreated.index"),
        sa.Column("yes_token_id", sa.String(length=64), nullable=False),
        sa.Column("no_token_id", sa.String(length=64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("creator", sa.String(length=80), nullable=False),
        sa.Column("event_group_id", sa.Integer(), nullable=True),
        sa.Column("close_at", types.UtcDateTime(), nullable=False),
        sa.Column(
            "metadata",
            types.JsonDocument(),
            nullable=True,
            comment="MarketCreated.metadata, parsed",
        ),
        sa.Column(
            "created_at",
            types.UtcDateTime(),
            nullable=False,
            comment="block time of the MarketCreated event",
        ),
        sa.Column("created_block_hash", sa.String(length=64), nullable=False),
        sa.Column("created_tx_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="open", nullable=False),
        sa.Column("resolution", sa.String(length=16), nullable=True),
        sa.Column("resolved_at", types.UtcDateTime(), nullable=True),
        sa.Column("resolved_tx_id", sa.String(length=64), nullable=True),
        sa.Column(
            "volume", types.Amount(), nullable=False, comment="traded quantity, share base units"
        ),
        sa.Column("trade_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("last_trade_at", types.UtcDateTime(), nullable=True),
        sa.Column("last_fill_id", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column(
            "last_price_yes",
            sa.SmallInteger(),
            nullable=True,
            comment="yes tick of the latest trade",
        ),
        sa.Column("best_bid_yes", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("best_ask_yes", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("best_bid_no", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("best_ask_no", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column(
            "open_interest",
            types.Amount(),
            nullable=False,
            comment="complete sets outstanding (yes supply), share base units",
        ),
        sa.Column(
            "book_version",
            sa.BigInteger(),
            server_default="0",
            nullable=False,
            comment="bumped by every change to either book",
        ),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.CheckConstraint(
            "resolution IS NULL OR resolution IN ('yes', 'no', 'invalid')",
            name=op.f("ck_market_resolution"),
        ),
        sa.CheckConstraint("status IN ('open', 'resolved')", name=op.f("ck_market_status")),
        sa.CheckConstraint("best_ask_no BETWEEN 0 AND 1000", name=op.f("ck_market_best_ask_no")),
        sa.CheckConstraint("best_ask_yes BETWEEN 0 AND 1000", name=op.f("ck_market_best_ask_yes")),
        sa.CheckConstraint("best_bid_no BETWEEN 0 AND 1000", name=op.f("ck_market_best_bid_no")),
        sa.CheckConstraint("best_bid_yes BETWEEN 0 AND 1000", name=op.f("ck_market_best_bid_yes")),
        sa.CheckConstraint(
            "last_price_yes IS NULL OR last_price_yes BETWEEN 0 AND 1000",
            name=op.f("ck_market_last_price_yes"),
        ),
        sa.ForeignKeyConstraint(
            ["event_group_id"],
            ["event_group.id"],
            name=op.f("fk_market_event_group_id_event_group"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market")),
        sa.UniqueConstraint("contract_id", name=op.f("uq_market_contract_id")),
        sa.UniqueConstraint("market_address", name=op.f("uq_market_market_address")),
        comment="One row per market contract; the list summary is kept current by the indexer.",
    )
    op.create_index(
        op.f("ix_market_best_bid_yes_id"), "market", ["best_bid_yes", "id"], unique=False
    )
    op.create_index(
        op.f("ix_market_category_status_best_bid_yes_id"),
        "market",
        ["category", "status", "best_bid_yes", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_category_status_created_at_id"),
        "market",
        ["category", "status", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_category_status_last_fill_id_id"),
        "market",
        ["category", "status", "last_fill_id", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_category_status_volume_id"),
        "market",
        ["category", "status", "volume", "id"],
        unique=False,
    )
    op.create_index(op.f("ix_market_created_at_id"), "market", ["created_at", "id"], unique=False)
    op.create_index(
        op.f("ix_market_creator_created_at_id"),
        "market",
        ["creator", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_event_group_id_id"), "market", ["event_group_id", "id"], unique=False
    )
    op.create_index(
        op.f("ix_market_last_fill_id_id"), "market", ["last_fill_id", "id"], unique=False
    )
    op.create_index(
        op.f("ix_market_registry_address_registry_index"),
        "market",
        ["registry_address", "registry_index"],
        unique=True,
    )
    op.create_index(
        op.f("ix_market_status_best_bid_yes_id"),
        "market",
        ["status", "best_bid_yes", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_status_created_at_id"),
        "market",
        ["status", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_status_last_fill_id_id"),
        "market",
        ["status", "last_fill_id", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_market_status_volume_id"), "market", ["status", "volume", "id"], unique=False
    )
    op.create_index(op.f("ix_market_volume_id"), "market", ["volume", "id"], unique=False)
    op.create_table(
        "fill",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.Identity(always=False),
            nullable=False,
        ),
        sa.Column("market_id", sa.Integer(), nullable=False),
        sa.Column(
            "trade_seq", sa.BigInteger(), nullable=False, comment="Trade.tradeId, per market"
        ),
        sa.Column("kind", sa.String(length=6), nullable=False),
        sa.Column("maker_order_id", sa.BigInteger(), nullable=False, comment="chain order id"),
        sa.Column("maker_owner", sa.String(length=80), nullable=False),
        sa.Column("maker_side", sa.String(length=4), nullable=False),
        sa.Column("maker_outcome", sa.String(length=3), nullable=False),
        sa.Column("taker_order_id", sa.BigInteger(), nullable=False, comment="chain order id"),
        sa.Column("taker_owner", sa.String(length=80), nullable=False),
        sa.Column("taker_side", sa.String(length=4), nullable=False),
        sa.Column("taker_outcome", sa.String(length=3), nullable=False),
        sa.Column("price", sa.SmallInteger(), nullable=False, comment="the maker's tick"),
        sa.Column(
            "taker_price",
            sa.SmallInteger(),
            nullable=False,
            comment="the taker's tick: price, or 1000 - price in a mint or merge",
        ),
        sa.Column("quantity", types.Amount(), nullable=False, comment="share base units"),
        sa.Column("maker_fee", types.Amount(), nullable=False),
        sa.Column("taker_fee", types.Amount(), nullable=False),
        sa.Column("tx_id", sa.String(length=64), nullable=False),
        sa.Column("block_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "event_counter", sa.BigInteger(), nullable=False, comment="the node's event counter"
        ),
        sa.Column(
            "event_position", sa.Integer(), nullable=False, comment="index in the counter's batch"
        ),
        sa.Column("traded_at", types.UtcDateTime(), nullable=False, comment="block time"),
        sa.CheckConstraint("kind IN ('normal', 'mint', 'merge')", name=op.f("ck_fill_kind")),
        sa.CheckConstraint("maker_outcome IN ('yes', 'no')", name=op.f("ck_fill_maker_outcome")),
        sa.CheckConstraint("maker_side IN ('buy', 'sell')", name=op.f("ck_fill_maker_side")),
        sa.CheckConstraint("taker_outcome IN ('yes', 'no')", name=op.f("ck_fill_taker_outcome")),
        sa.CheckConstraint("taker_side IN ('buy', 'sell')", name=op.f("ck_fill_taker_side")),
        sa.CheckConstraint("price BETWEEN 1 AND 999", name=op.f("ck_fill_price")),
        sa.CheckConstraint("taker_price BETWEEN 1 AND 999", name=op.f("ck_fill_taker_price")),
        sa.ForeignKeyConstraint(
            ["market_id"], ["market.id"], name=op.f("fk_fill_market_id_market")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fill")),
        comment="Trades; fill.id follows chain order, so it is the newest-first key.",
    )
    op.create_index(op.f("ix_fill_maker_owner_id"), "fill", ["maker_owner", "id"], unique=False)
    op.create_index(op.f("ix_fill_market_id_id"), "fill", ["market_id", "id"], unique=False)
    op.create_index(
        op.f("ix_fill_market_id_trade_seq"), "fill", ["market_id", "trade_seq"], unique=True
    )
    op.create_index(op.f("ix_fill_taker_owner_id"), "fill", ["taker_owner", "id"], unique=False)
    op.create_table(
        "indexed_tx",
        sa.Column("tx_id", sa.String(length=64), nullable=False),
        sa.Column("block_hash", sa.String(length=64), nullable=False),
        sa.Column("market_id", sa.Integer(), nullable=True),
        sa.Column("indexed_at", types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["market_id"], ["market.id"], name=op.f("fk_indexed_tx_market_id_market")
        ),
        sa.PrimaryKeyConstraint("tx_id", name=op.f("pk_indexed_tx")),
        comment="Transactions whose events are in the read model.",
    )
    op.create_table(
        "market_tag",
        sa.Column("market_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["market_id"], ["market.id"], name=op.f("fk_market_tag_market_id_market")
        ),
        sa.PrimaryKeyConstraint("market_id", "tag", name=op.f("pk_market_tag")),
        comment="Tags of a market, from its metadata (normalised: trimmed, lower case).",
    )
    op.create_index(
        op.f("ix_market_tag_tag_market_id"), "market_tag", ["tag", "market_id"], unique=False
    )
    op.create_table(
        "order",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.Identity(always=False),
            nullable=False,
        ),
        sa.Column("market_id", sa.Integer(), nullable=False),
        sa.Column(
            "chain_order_id", sa.BigInteger(), nullable=False, comment="the contract's order id"
        ),
        sa.Column("owner", sa.String(length=80), nullable=False),
        sa.Column("side", sa.String(length=4), nullable=False),
        sa.Column("outcome", sa.String(length=3), nullable=False),
        sa.Column("price", sa.SmallInteger(), nullable=False),
        sa.Column("quantity", types.Amount(), nullable=False, comment="share base units ordered"),
        sa.Column(
            "remaining", types.Amount(), nullable=False, comment="share base units still resting"
        ),
        sa.Column(
            "locked_collateral",
            types.Amount(),
            nullable=False,
            comment="collateral still locked (buy orders)",
        ),
        sa.Column(
            "locked_shares",
            types.Amount(),
            nullable=False,
            comment="shares still locked (sell orders)",
        ),
        sa.Column(
            "deposit",
            types.Amount(),
            nullable=False,
            comment="ALPH storage deposit held while the order rests",
        ),
        sa.Column("status", sa.String(length=9), server_default="open", nullable=False),
        sa.Column("cancel_reason", sa.String(length=10), nullable=True),
        sa.Column("placed_tx_id", sa.String(length=64), nullable=False),
        sa.Column("placed_block_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "closed_tx_id",
            sa.String(length=64),
            nullable=True,
            comment="the tx that filled or cancelled it",
        ),
        sa.Column(
            "created_at", types.UtcDateTime(), nullable=False, comment="block time of OrderPlaced"
        ),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.Column("closed_at", types.UtcDateTime(), nullable=True),
        sa.CheckConstraint(
            "cancel_reason IS NULL OR cancel_reason IN ('owner', 'self-trade', 'resolved')",
            name=op.f("ck_order_cancel_reason"),
        ),
        sa.CheckConstraint("outcome IN ('yes', 'no')", name=op.f("ck_order_outcome")),
        sa.CheckConstraint("side IN ('buy', 'sell')", name=op.f("ck_order_side")),
        sa.CheckConstraint(
            "status IN ('open', 'filled', 'cancelled')", name=op.f("ck_order_status")
        ),
        sa.CheckConstraint("price BETWEEN 1 AND 999", name=op.f("ck_order_price")),
        sa.ForeignKeyConstraint(
            ["market_id"], ["market.id"], name=op.f("fk_order_market_id_market")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_order")),
        comment=(
            "Orders as the contracts placed them; remaining and status follow Trade and "
            "OrderCancelled events."
        ),
    )
    op.create_index(
        op.f("ix_order_market_id_chain_order_id"),
        "order",
        ["market_id", "chain_order_id"],
        unique=True,
    )
    op.create_index(op.f("ix_order_market_id_id"), "order", ["market_id", "id"], unique=False)
    op.create_index(
        op.f("ix_order_market_id_status_id"), "order", ["market_id", "status", "id"], unique=False
    )
    op.create_index(op.f("ix_order_owner_id"), "order", ["owner", "id"], unique=False)
    op.create_index(
        op.f("ix_order_owner_status_id"), "order", ["owner", "status", "id"], unique=False
    )
    op.create_table(
        "position",
        sa.Column("market_id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=80), nullable=False),
        sa.Column(
            "yes_shares",
            types.Amount(),
            nullable=False,
            comment="held, including shares locked by resting sell orders",
        ),
        sa.Column(
            "no_shares",
            types.Amount(),
            nullable=False,
            comment="held, including shares locked by resting sell orders",
        ),
        sa.Column(
            "yes_cost",
            types.Amount(),
            nullable=False,
            comment="collateral paid for the yes shares held, fees included",
        ),
        sa.Column(
            "no_cost",
            types.Amount(),
            nullable=False,
            comment="collateral paid for the no shares held, fees included",
        ),
        sa.Column(
            "claimed_payout",
            types.Amount(),
            nullable=False,
            comment="collateral received from claims",
        ),
        sa.Column("updated_at", types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["market_id"], ["market.id"], name=op.f("fk_position_market_id_market")
        ),
        sa.PrimaryKeyConstraint("market_id", "owner", name=op.f("pk_position")),
        comment="Per (market, wallet) holdings, derived from fills and claims by the indexer.",
    )
    op.create_index(
        op.f("ix_position_owner_market_id"), "position", ["owner", "market_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_position_owner_market_id"), table_name="position")
    op.drop_table("position")
    op.drop_index(op.f("ix_order_owner_status_id"), table_name="order")
    op.drop_index(op.f("ix_order_owner_id"), table_name="order")
    op.drop_index(op.f("ix_order_market_id_status_id"), table_name="order")
    op.drop_index(op.f("ix_order_market_id_id"), table_name="order")
    op.drop_index(op.f("ix_order_market_id_chain_order_id"), table_name="order")
    op.drop_table("order")
    op.drop_index(op.f("ix_market_tag_tag_market_id"), table_name="market_tag")
    op.drop_table("market_tag")
    op.drop_table("indexed_tx")
    op.drop_index(op.f("ix_fill_taker_owner_id"), table_name="fill")
    op.drop_index(op.f("ix_fill_market_id_trade_seq"), table_name="fill")
    op.drop_index(op.f("ix_fill_market_id_id"), table_name="fill")
    op.drop_index(op.f("ix_fill_maker_owner_id"), table_name="fill")
    op.drop_table("fill")
    op.drop_index(op.f("ix_market_volume_id"), table_name="market")
    op.drop_index(op.f("ix_market_status_volume_id"), table_name="market")
    op.drop_index(op.f("ix_market_status_last_fill_id_id"), table_name="market")
    op.drop_index(op.f("ix_market_status_created_at_id"), table_name="market")
    op.drop_index(op.f("ix_market_status_best_bid_yes_id"), table_name="market")
    op.drop_index(op.f("ix_market_registry_address_registry_index"), table_name="market")
    op.drop_index(op.f("ix_market_last_fill_id_id"), table_name="market")
    op.drop_index(op.f("ix_market_event_group_id_id"), table_name="market")
    op.drop_index(op.f("ix_market_creator_created_at_id"), table_name="market")
    op.drop_index(op.f("ix_market_created_at_id"), table_name="market")
    op.drop_index(op.f("ix_market_category_status_volume_id"), table_name="market")
    op.drop_index(op.f("ix_market_category_status_last_fill_id_id"), table_name="market")
    op.drop_index(op.f("ix_market_category_status_created_at_id"), table_name="market")
    op.drop_index(op.f("ix_market_category_status_best_bid_yes_id"), table_name="market")
    op.drop_index(op.f("ix_market_best_bid_yes_id"), table_name="market")
    op.drop_table("market")
    op.drop_index(op.f("ix_tag_market_count_name"), table_name="tag")
    op.drop_table("tag")
    op.drop_index(op.f("ix_outbox_topic_id"), table_name="outbox")
    op.drop_table("outbox")
    op.drop_table("indexer_checkpoint")
    op.drop_index(op.f("ix_event_group_created_at_id"), table_name="event_group")
    op.drop_index(op.f("ix_event_group_category_created_at_id"), table_name="event_group")
    op.drop_table("event_group")
    op.drop_index(op.f("ix_chain_event_tx_id"), table_name="chain_event")
    op.drop_index(op.f("ix_chain_event_block_hash"), table_name="chain_event")
    op.drop_table("chain_event")
    op.drop_index(op.f("ix_category_market_count_name"), table_name="category")
    op.drop_table("category")
