"""Read-model rows for tests, inserted directly (no indexer, no chain).

    async with engine.begin() as conn:
        m = await make_market(conn, category="sports", tags=["football"], volume=10**21)
        await make_fill(conn, m["id"], price=600, quantity=10**18)

Every helper returns the inserted row as a dict (with its ``id``). Defaults make a valid, open
market; pass any column as a keyword to override it. Addresses and ids are unique per call.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import coincurve
from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import predmarket.store.tables  # noqa: F401  (registers every table on the metadata)
from predmarket.alephium.address import address_from_public_key, contract_address
from predmarket.store.meta import metadata
from predmarket.store.tables.event_group import event_group
from predmarket.store.tables.fill import fill
from predmarket.store.tables.market import market
from predmarket.store.tables.market_tag import market_tag
from predmarket.store.tables.order import order

_serial = itertools.count(1)


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("/".join(map(str, parts)).encode()).digest()


def market_address(n: int | None = None) -> str:
    """A valid contract address (the n-th; a fresh one when n is None)."""
    return contract_address(_digest("market", next(_serial) if n is None else n))


def wallet_address(n: int | None = None) -> str:
    """A valid P2PKH address (the n-th; a fresh one when n is None)."""
    secret = _digest("wallet", next(_serial) if n is None else n)
    return address_from_public_key(coincurve.PrivateKey(secret).public_key.format())


def hex32(*parts: object) -> str:
    return _digest("hex", next(_serial), *parts).hex()


def utcnow() -> datetime:
    return datetime.now(UTC)


async def clear_read_model(conn: AsyncConnection) -> None:
    """Delete every row of every table (children first)."""
    for table in reversed(metadata.sorted_tables):
        await conn.execute(delete(table))


async def row_counts(engine: AsyncEngine) -> dict[str, int]:
    """Rows per table (reads must leave them unchanged)."""
    async with engine.connect() as conn:
        return {
            t.name: int((await conn.execute(select(func.count()).select_from(t))).scalar_one())
            for t in metadata.sorted_tables
        }


async def make_event(conn: AsyncConnection, **overrides: Any) -> dict[str, Any]:
    n = next(_serial)
    row: dict[str, Any] = {
        "slug": f"event-{n}",
        "title": f"Event {n}",
        "category": "general",
        "created_at": utcnow(),
    }
    row.update(overrides)
    row["id"] = (await conn.execute(insert(event_group).values(row))).inserted_primary_key[0]
    return row


async def make_market(
    conn: AsyncConnection, *, tags: Sequence[str] = (), **overrides: Any
) -> dict[str, Any]:
    """An open market closing in 30 days unless overridden; ``tags`` go to ``market_tag``."""
    n = next(_serial)
    now = utcnow()
    row: dict[str, Any] = {
        "market_address": market_address(n),
        "contract_id": _digest("contract", n).hex(),
        "registry_address": "registry",
        "registry_index": n,
        "yes_token_id": _digest("yes", n).hex(),
        "no_token_id": _digest("no", n).hex(),
        "question": f"Will thing {n} happen?",
        "category": "general",
        "creator": wallet_address(0),
        "event_group_id": None,
        "close_at": now + timedelta(days=30),
        "metadata": None,
        "created_at": now,
        "created_block_hash": _digest("block", n).hex(),
        "created_tx_id": _digest("tx", n).hex(),
        "status": "open",
        "resolution": None,
        "volume": 0,
        "updated_at": now,
    }
    row.update(overrides)
    row["id"] = (await conn.execute(insert(market).values(row))).inserted_primary_key[0]
    if tags:
        await conn.execute(insert(market_tag), [{"market_id": row["id"], "tag": t} for t in tags])
    row["tags"] = sorted(tags)
    return row


async def make_fill(conn: AsyncConnection, market_id: int, **overrides: Any) -> dict[str, Any]:
    """A normal trade (a yes sell resting, a yes buy taking) at 500 for one share."""
    n = next(_serial)
    seq = (
        await conn.execute(
            select(fill.c.trade_seq)
            .where(fill.c.market_id == market_id)
            .order_by(fill.c.trade_seq.desc())
            .limit(1)
        )
    ).scalar()
    row: dict[str, Any] = {
        "market_id": market_id,
        "trade_seq": (seq or 0) + 1,
        "kind": "normal",
        "maker_order_id": 2 * n,
        "maker_owner": wallet_address(1),
        "maker_side": "sell",
        "maker_outcome": "yes",
        "taker_order_id": 2 * n + 1,
        "taker_owner": wallet_address(2),
        "taker_side": "buy",
        "taker_outcome": "yes",
        "price": 500,
        "taker_price": 500,
        "quantity": 10**18,
        "maker_fee": 0,
        "taker_fee": 0,
        "tx_id": _digest("filltx", n).hex(),
        "block_hash": _digest("fillblock", n).hex(),
        "event_counter": n,
        "event_position": 0,
        "traded_at": utcnow(),
    }
    row.update(overrides)
    row["id"] = (await conn.execute(insert(fill).values(row))).inserted_primary_key[0]
    return row


async def make_order(conn: AsyncConnection, market_id: int, **overrides: Any) -> dict[str, Any]:
    """A resting buy of one yes share at 500."""
    n = next(_serial)
    now = utcnow()
    row: dict[str, Any] = {
        "market_id": market_id,
        "chain_order_id": n,
        "owner": wallet_address(1),
        "side": "buy",
        "outcome": "yes",
        "price": 500,
        "quantity": 10**18,
        "remaining": 10**18,
        "status": "open",
        "placed_tx_id": _digest("ordertx", n).hex(),
        "placed_block_hash": _digest("orderblock", n).hex(),
        "created_at": now,
        "updated_at": now,
    }
    row.update(overrides)
    row["id"] = (await conn.execute(insert(order).values(row))).inserted_primary_key[0]
    return row
