"""Every list query the API runs is served by an index that yields its order.

A few thousand markets, orders and fills are inserted into a migrated database, statistics are
gathered (ANALYZE), and each query's plan is read from the database itself:
PostgreSQL ``EXPLAIN (FORMAT JSON)`` must scan the expected index and never sort; SQLite
``EXPLAIN QUERY PLAN`` must name the index and never build a temporary B-tree for ORDER BY.
The queries are written the way the API's keyset pages are: a filter, ``ORDER BY key, id``
(both directions), ``LIMIT``.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Select, and_, delete, insert, select, text, union_all
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

import predmarket.store.tables  # noqa: F401
from predmarket.store.meta import metadata
from predmarket.store.tables.fill import fill
from predmarket.store.tables.market import market
from predmarket.store.tables.market_tag import market_tag
from predmarket.store.tables.order import order
from predmarket.store.tables.outbox import outbox

pytestmark = pytest.mark.db

MARKETS = 3000
ORDERS = 8000
FILLS = 4000
OUTBOX = 4000
CATEGORIES = [f"category-{i}" for i in range(15)]
OWNERS = [f"owner-{i}" for i in range(60)]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
PAGE = 50
# Real data is skewed: a few hot keys hold many rows, most keys few. For a cold key the index
# finds a handful of rows and PostgreSQL may rightly sort those few (a bitmap scan and a tiny
# sort); for a hot key only an ordered index scan avoids sorting thousands of rows. Both kinds
# are checked.
HOT_MARKET_ID = 1
HOT_CATEGORY = CATEGORIES[0]
HOT_OWNER = OWNERS[0]
HOT_TOPIC = "market:market-000001:orders"


def _skewed(rng: random.Random, hot: Any, cold: list[Any], share: float = 0.1) -> Any:
    return hot if rng.random() < share else rng.choice(cold)


class Explain(Executable, ClauseElement):
    """``EXPLAIN <statement>`` with the statement's bound parameters processed as usual."""

    inherit_cache = False

    def __init__(self, statement: ClauseElement, prefix: str) -> None:
        self.statement = statement
        self.prefix = prefix


@compiles(Explain)
def _compile_explain(element: Explain, compiler: Any, **kw: Any) -> str:
    return f"{element.prefix} {compiler.process(element.statement, **kw)}"


def _rows(rng: random.Random) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    markets = []
    for i in range(MARKETS):
        traded = rng.random() < 0.7
        markets.append(
            {
                "market_address": f"market-{i:06d}",
                "contract_id": f"{i:064x}",
                "registry_address": "registry",
                "registry_index": i,
                "yes_token_id": f"{i:063x}1",
                "no_token_id": f"{i:063x}2",
                "question": f"Will thing {i} happen?",
                "category": _skewed(rng, HOT_CATEGORY, CATEGORIES[1:]),
                "creator": _skewed(rng, HOT_OWNER, OWNERS[1:]),
                "close_at": T0 + timedelta(days=30),
                "created_at": T0 + timedelta(minutes=i),
                "created_block_hash": "b" * 64,
                "created_tx_id": f"{i:064x}",
                "status": "resolved" if rng.random() < 0.2 else "open",
                "volume": rng.randrange(10**24) if traded else 0,
                "last_fill_id": i + 1 if traded else 0,
                "best_bid_yes": rng.randrange(0, 1000),
                "updated_at": T0,
            }
        )
    yield "market", markets
    yield (
        "market_tag",
        [
            {"market_id": m, "tag": tag}
            for m in range(1, MARKETS + 1)
            for tag in rng.sample(["rain", "uk", "sport", "crypto", "election", "tech"], 2)
        ],
    )
    yield (
        "order",
        [
            {
                "market_id": _skewed(rng, HOT_MARKET_ID, list(range(2, 101))),
                "chain_order_id": n,
                "owner": _skewed(rng, HOT_OWNER, OWNERS[1:]),
                "side": rng.choice(["buy", "sell"]),
                "outcome": rng.choice(["yes", "no"]),
                "price": rng.randrange(1, 1000),
                "quantity": 10**18,
                "remaining": 10**18,
                "status": rng.choice(["open", "open", "filled", "cancelled"]),
                "placed_tx_id": f"{n:064x}",
                "placed_block_hash": "b" * 64,
                "created_at": T0 + timedelta(seconds=n),
                "updated_at": T0,
            }
            for n in range(ORDERS)
        ],
    )
    yield (
        "fill",
        [
            {
                "market_id": _skewed(rng, HOT_MARKET_ID, list(range(2, 101))),
                "trade_seq": n,
                "kind": "normal",
                "maker_order_id": n,
                "maker_owner": _skewed(rng, HOT_OWNER, OWNERS[1:]),
                "maker_side": "sell",
                "maker_outcome": "yes",
                "taker_order_id": n + 1,
                "taker_owner": _skewed(rng, HOT_OWNER, OWNERS[1:]),
                "taker_side": "buy",
                "taker_outcome": "yes",
                "price": 500,
                "taker_price": 500,
                "quantity": 10**18,
                "tx_id": f"{n:064x}",
                "block_hash": "b" * 64,
                "event_counter": n,
                "event_position": 0,
                "traded_at": T0 + timedelta(seconds=n),
            }
            for n in range(FILLS)
        ],
    )
    yield (
        "outbox",
        [
            {
                "topic": HOT_TOPIC if n % 8 == 0 else f"market:market-{n % 40:06d}:orders",
                "operation": "insert",
                "entity": "order",
                "key": {"orderId": str(n)},
                "payload": {},
                "source": "indexer",
                "created_at": T0,
            }
            for n in range(OUTBOX)
        ],
    )


async def _load(url: str) -> None:
    from predmarket.store.engine import create_engine

    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            for table in reversed(metadata.sorted_tables):
                await conn.execute(delete(table))
            for name, rows in _rows(random.Random(11)):
                await conn.execute(insert(metadata.tables[name]), rows)
        async with engine.connect() as conn:
            await conn.execute(text("ANALYZE"))
            await conn.commit()
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def loaded(migrated_url: str) -> str:
    """The module's database with the rows loaded and statistics gathered."""
    asyncio.run(_load(migrated_url))
    return migrated_url


@pytest.fixture
async def conn(loaded: str) -> Any:
    from predmarket.store.engine import create_engine

    engine: AsyncEngine = create_engine(loaded)
    try:
        async with engine.connect() as c:
            yield c
    finally:
        await engine.dispose()


def _walk_pg(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _walk_pg(child)


@dataclass(frozen=True)
class Plan:
    indexes: frozenset[str]
    sorts: bool
    scans_a_table: bool
    text: str


async def _plan(conn: AsyncConnection, stmt: Select[Any]) -> Plan:
    if conn.dialect.name == "postgresql":
        raw = (await conn.execute(Explain(stmt, "EXPLAIN (FORMAT JSON)"))).scalar_one()
        root = (json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"]
        nodes = list(_walk_pg(root))
        kinds = {n["Node Type"] for n in nodes}
        return Plan(
            indexes=frozenset(str(n["Index Name"]) for n in nodes if "Index Name" in n),
            sorts=bool(kinds & {"Sort", "Incremental Sort"}),
            scans_a_table="Seq Scan" in kinds,
            text=json.dumps(root, indent=1),
        )
    rows = (await conn.execute(Explain(stmt, "EXPLAIN QUERY PLAN"))).all()
    details = [str(r[-1]) for r in rows]
    used = set()
    for d in details:
        match = re.search(r"USING (?:COVERING )?INDEX (\w+)", d)
        if match:
            used.add(match.group(1))
        if "INTEGER PRIMARY KEY" in d:
            used.add("rowid")
    full_scans = [re.match(r"SCAN (\w+)$", d) for d in details]
    return Plan(
        indexes=frozenset(used),
        sorts=any("TEMP B-TREE" in d for d in details),
        # "SCAN anon_1" reads a subquery's rows, not a table.
        scans_a_table=any(m is not None and m.group(1) in metadata.tables for m in full_scans),
        text="\n".join(details),
    )


def _uses(plan: Plan, acceptable: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(i, pattern) for i in plan.indexes for pattern in acceptable)


async def assert_ordered(conn: AsyncConnection, stmt: Select[Any], *acceptable: str) -> None:
    """One of ``acceptable`` indexes (names or patterns) yields the rows in the query's order:
    no sort at all."""
    plan = await _plan(conn, stmt)
    assert _uses(plan, acceptable), f"none of {acceptable} used:\n{plan.text}"
    assert not plan.sorts, f"sorts:\n{plan.text}"
    assert not plan.scans_a_table, f"scans a whole table:\n{plan.text}"


async def assert_indexed(conn: AsyncConnection, stmt: Select[Any], *acceptable: str) -> None:
    """One of ``acceptable`` indexes finds the rows. For a cold key PostgreSQL may sort the
    few rows it found (cheaper than ordered random reads); SQLite must still not sort."""
    plan = await _plan(conn, stmt)
    assert _uses(plan, acceptable), f"none of {acceptable} used:\n{plan.text}"
    assert not plan.scans_a_table, f"scans a whole table:\n{plan.text}"
    if conn.dialect.name != "postgresql":
        assert not plan.sorts, f"sorts:\n{plan.text}"


# -- GET /v1/markets --------------------------------------------------------------------------

SORTS = {
    "created-at": ("created_at", market.c.created_at),
    "volume": ("volume", market.c.volume),
    "best-bid-yes": ("best_bid_yes", market.c.best_bid_yes),
    "recently-traded": ("last_fill_id", market.c.last_fill_id),
}


def _markets(sort: str, direction: str, *where: Any) -> Select[Any]:
    _, key = SORTS[sort]
    order_by = (key.desc(), market.c.id.desc()) if direction == "desc" else (key, market.c.id)
    return (
        select(market.c.id, market.c.market_address).where(*where).order_by(*order_by).limit(PAGE)
    )


@pytest.mark.parametrize("direction", ["desc", "asc"])
@pytest.mark.parametrize("sort", list(SORTS))
class TestMarketLists:
    @pytest.mark.parametrize("status", ["open", "resolved"])
    async def test_by_status(
        self, conn: AsyncConnection, sort: str, direction: str, status: str
    ) -> None:
        key = SORTS[sort][0]
        stmt = _markets(sort, direction, market.c.status == status)
        # Either index yields this order; the planner picks by how many rows the filter drops.
        await assert_ordered(conn, stmt, f"ix_market_status_{key}_id", f"ix_market_{key}_id")

    async def test_all_statuses(self, conn: AsyncConnection, sort: str, direction: str) -> None:
        await assert_ordered(conn, _markets(sort, direction), f"ix_market_{SORTS[sort][0]}_id")

    async def test_by_a_big_category(
        self, conn: AsyncConnection, sort: str, direction: str
    ) -> None:
        key = SORTS[sort][0]
        where = (market.c.category == HOT_CATEGORY, market.c.status == "open")
        await assert_ordered(
            conn,
            _markets(sort, direction, *where),
            f"ix_market_category_status_{key}_id",
            f"ix_market_status_{key}_id",
            f"ix_market_{key}_id",
        )

    async def test_by_a_small_category(
        self, conn: AsyncConnection, sort: str, direction: str
    ) -> None:
        key = SORTS[sort][0]
        where = (market.c.category == CATEGORIES[5], market.c.status == "resolved")
        # Any (category, status, ...) index finds the few rows; SQLite must take the one
        # ordered by the sort key.
        wanted = f"ix_market_category_status_{key}_id"
        if conn.dialect.name == "postgresql":
            wanted = "ix_market_category_status_*"
        await assert_indexed(conn, _markets(sort, direction, *where), wanted)


async def test_market_list_next_page_uses_the_index(conn: AsyncConnection) -> None:
    # The keyset continuation of a volume page: (volume, id) < (cursor's volume, cursor's id).
    v, i = 10**23, 1500
    stmt = _markets(
        "volume",
        "desc",
        market.c.status == "open",
        (market.c.volume < v) | and_(market.c.volume == v, market.c.id < i),
    )
    await assert_ordered(conn, stmt, "ix_market_status_volume_id", "ix_market_volume_id")


@pytest.mark.parametrize("creator", [HOT_OWNER, OWNERS[9]])
async def test_markets_of_a_creator(conn: AsyncConnection, creator: str) -> None:
    stmt = (
        select(market.c.id)
        .where(market.c.creator == creator)
        .order_by(market.c.created_at.desc(), market.c.id.desc())
        .limit(PAGE)
    )
    if creator == HOT_OWNER:
        await assert_ordered(
            conn, stmt, "ix_market_creator_created_at_id", "ix_market_created_at_id"
        )
    else:
        await assert_indexed(conn, stmt, "ix_market_creator_created_at_id")


async def test_markets_with_a_tag(conn: AsyncConnection) -> None:
    tagged = select(market_tag.c.market_id).where(market_tag.c.tag == "rain")
    stmt = select(market.c.id).where(market.c.id.in_(tagged)).limit(PAGE)
    plan = await _plan(conn, stmt)
    assert "ix_market_tag_tag_market_id" in plan.indexes, plan.text


# -- orders and fills -------------------------------------------------------------------------


def _newest(table: Any, *where: Any) -> Select[Any]:
    return select(table.c.id).where(*where).order_by(table.c.id.desc()).limit(PAGE)


# For a key holding a large share of the rows, walking the primary key (ids follow insertion,
# so that is also the physical order) and filtering is as good as the composite index, and
# PostgreSQL may take it; either way no sort and no table scan.


async def test_orders_of_a_busy_market_newest_first(conn: AsyncConnection) -> None:
    stmt = _newest(order, order.c.market_id == HOT_MARKET_ID)
    await assert_ordered(conn, stmt, "ix_order_market_id_id", "pk_order")


async def test_orders_of_a_quiet_market(conn: AsyncConnection) -> None:
    stmt = _newest(order, order.c.market_id == 42)
    await assert_indexed(
        conn,
        stmt,
        "ix_order_market_id_id",
        "ix_order_market_id_status_id",
        "ix_order_market_id_chain_order_id",
    )


async def test_open_orders_of_a_market(conn: AsyncConnection) -> None:
    stmt = _newest(order, order.c.market_id == HOT_MARKET_ID, order.c.status == "open")
    await assert_ordered(
        conn, stmt, "ix_order_market_id_status_id", "ix_order_market_id_id", "pk_order"
    )


async def test_orders_of_a_wallet(conn: AsyncConnection) -> None:
    stmt = _newest(order, order.c.owner == HOT_OWNER)
    await assert_ordered(conn, stmt, "ix_order_owner_id", "pk_order")
    stmt = _newest(order, order.c.owner == HOT_OWNER, order.c.status == "open")
    await assert_ordered(conn, stmt, "ix_order_owner_status_id", "ix_order_owner_id", "pk_order")
    await assert_indexed(
        conn,
        _newest(order, order.c.owner == OWNERS[9]),
        "ix_order_owner_id",
        "ix_order_owner_status_id",
    )


async def test_fills_of_a_market_newest_first(conn: AsyncConnection) -> None:
    stmt = _newest(fill, fill.c.market_id == HOT_MARKET_ID)
    await assert_ordered(conn, stmt, "ix_fill_market_id_id", "pk_fill")
    quiet = _newest(fill, fill.c.market_id == 42)
    await assert_indexed(conn, quiet, "ix_fill_market_id_id", "ix_fill_market_id_trade_seq")


@pytest.mark.parametrize("owner", [HOT_OWNER, OWNERS[9]])
async def test_fills_of_a_wallet_merge_two_ordered_scans(conn: AsyncConnection, owner: str) -> None:
    def side(column: Any) -> Select[Any]:
        # Each arm is a subquery: SQLite refuses ORDER BY/LIMIT on a bare compound member.
        sub = _newest(fill, column == owner).subquery()
        return select(sub.c.id)

    both = union_all(side(fill.c.maker_owner), side(fill.c.taker_owner)).subquery()
    stmt = select(both.c.id).order_by(both.c.id.desc()).limit(PAGE)
    # Each arm reads at most a page from its index in order; the outer ORDER BY merges (or
    # sorts) at most two pages, whatever the size of the wallet's history.
    plan = await _plan(conn, stmt)
    assert not plan.scans_a_table, plan.text
    if owner == HOT_OWNER and conn.dialect.name == "postgresql":
        # as above: the primary key walked in order is a fine way to a busy wallet's newest
        assert plan.indexes <= {"ix_fill_maker_owner_id", "ix_fill_taker_owner_id", "pk_fill"}
    else:
        assert {"ix_fill_maker_owner_id", "ix_fill_taker_owner_id"} <= plan.indexes, plan.text


# -- the outbox -------------------------------------------------------------------------------


@pytest.mark.parametrize("topic", [HOT_TOPIC, "market:market-000008:orders"])
async def test_outbox_replay_of_one_topic(conn: AsyncConnection, topic: str) -> None:
    stmt = (
        select(outbox.c.id, outbox.c.payload)
        .where(outbox.c.topic == topic, outbox.c.id > 100)
        .order_by(outbox.c.id)
        .limit(PAGE)
    )
    if topic == HOT_TOPIC:
        await assert_ordered(conn, stmt, "ix_outbox_topic_id", "pk_outbox")
    else:
        await assert_indexed(conn, stmt, "ix_outbox_topic_id")


async def test_outbox_tail_by_id(conn: AsyncConnection) -> None:
    # SQLite's integer primary key is the rowid: a range search on the table itself.
    stmt = select(outbox.c.id).where(outbox.c.id > 3900).order_by(outbox.c.id).limit(500)
    await assert_ordered(conn, stmt, "pk_outbox", "rowid")
