"""The list statements the market reads actually run are served by indexes, in order.

A few thousand markets are loaded and analysed; the plan of ``GET /v1/markets``'s statement (the
summary select with its event-group join, the filters, the keyset order and a cursor position) must
read the market table through an index that yields the order: no sort, no full scan of ``market``.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Select, insert, text
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

from helpers.markets import clear_read_model, make_event, utcnow
from predmarket.kit.pagination import Keyset
from predmarket.markets import queries
from predmarket.markets.queries import MarketFilter
from predmarket.store.engine import create_engine
from predmarket.store.tables.market import market
from predmarket.store.tables.market_tag import market_tag

pytestmark = pytest.mark.db

MARKETS = 3000


class Explain(Executable, ClauseElement):
    inherit_cache = False

    def __init__(self, statement: ClauseElement, prefix: str) -> None:
        self.statement = statement
        self.prefix = prefix


@compiles(Explain)
def _compile(element: Explain, compiler: Any, **kw: Any) -> str:
    return f"{element.prefix} {compiler.process(element.statement, **kw)}"


NOW = utcnow()


async def _load(url: str) -> None:
    rng = random.Random(3)
    engine = create_engine(url)
    try:
        async with engine.begin() as c:
            await clear_read_model(c)
            groups = [(await make_event(c))["id"] for _ in range(30)]
            rows = [
                {
                    "market_address": f"m{i:07d}",
                    "contract_id": f"{i:064x}",
                    "registry_address": "registry",
                    "registry_index": i,
                    "yes_token_id": "a" * 64,
                    "no_token_id": "b" * 64,
                    "question": f"Will thing {i} happen?",
                    "category": "hot" if rng.random() < 0.3 else f"c{rng.randrange(20)}",
                    "creator": f"w{rng.randrange(50)}",
                    "event_group_id": rng.choice(groups) if rng.random() < 0.1 else None,
                    "close_at": NOW + timedelta(days=rng.choice([-1, 30, 30, 30])),
                    "created_at": NOW - timedelta(minutes=i),
                    "created_block_hash": "c" * 64,
                    "created_tx_id": "d" * 64,
                    "status": "resolved" if rng.random() < 0.2 else "open",
                    "volume": rng.randrange(10**24),
                    "best_bid_yes": rng.randrange(1000),
                    "last_fill_id": rng.randrange(5000),
                    "updated_at": NOW,
                }
                for i in range(MARKETS)
            ]
            await c.execute(insert(market), rows)
            await c.execute(
                insert(market_tag),
                [
                    {"market_id": m, "tag": t}
                    for m in range(1, MARKETS + 1)
                    for t in rng.sample(["a", "b", "c", "d", "e", "f", "g"], 2)
                ],
            )
        async with engine.connect() as c:
            await c.execute(text("ANALYZE"))
            await c.commit()
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def loaded(migrated_url: str) -> str:
    """The module's database with the markets loaded and statistics gathered (once)."""
    asyncio.run(_load(migrated_url))
    return migrated_url


@pytest.fixture
async def conn(loaded: str) -> AsyncIterator[AsyncConnection]:
    engine = create_engine(loaded)
    try:
        async with engine.connect() as c:
            yield c
    finally:
        await engine.dispose()


async def plan(conn: AsyncConnection, stmt: Select[Any]) -> tuple[set[str], bool, bool, str]:
    """(indexes used on market, sorts, full scan of market, text)."""
    if conn.dialect.name == "postgresql":
        raw = (await conn.execute(Explain(stmt, "EXPLAIN (FORMAT JSON)"))).scalar_one()
        root = (json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"]
        nodes, pending = [], [root]
        while pending:
            node = pending.pop()
            nodes.append(node)
            pending.extend(node.get("Plans", ()))
        on_market = [n for n in nodes if n.get("Relation Name") == "market"]
        return (
            {n["Index Name"] for n in on_market if "Index Name" in n},
            any(n["Node Type"] in ("Sort", "Incremental Sort") for n in nodes),
            any(n["Node Type"] == "Seq Scan" for n in on_market),
            json.dumps(root, indent=1),
        )
    details = [str(r[-1]) for r in await conn.execute(Explain(stmt, "EXPLAIN QUERY PLAN"))]
    used = {
        m.group(1)
        for d in details
        if (m := re.search(r"market USING (?:COVERING )?INDEX (\w+)", d))
    }
    return (
        used,
        any("TEMP B-TREE" in d for d in details),
        any(re.fullmatch(r"SCAN market", d) for d in details),
        "\n".join(details),
    )


@pytest.mark.parametrize(
    ("sort", "key"),
    [
        ("created-at", "created_at"),
        ("volume", "volume"),
        ("best-bid-yes", "best_bid_yes"),
        ("recently-traded", "last_fill_id"),
    ],
)
@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize(
    ("where", "indexes"),
    [
        (MarketFilter(status="open"), ("ix_market_status_{key}_id", "ix_market_{key}_id")),
        (MarketFilter(status="all"), ("ix_market_{key}_id",)),
        (
            MarketFilter(status="open", category="hot"),
            # A big category: reading the ordered status or sort index and filtering is as good.
            (
                "ix_market_category_status_{key}_id",
                "ix_market_status_{key}_id",
                "ix_market_{key}_id",
            ),
        ),
        (MarketFilter(status="all", min_volume=10**23), ("ix_market_{key}_id",)),
    ],
)
@pytest.mark.parametrize("with_cursor", [False, True])
async def test_market_list_pages_come_from_an_ordered_index(
    conn: AsyncConnection,
    sort: str,
    key: str,
    descending: bool,
    where: MarketFilter,
    indexes: tuple[str, ...],
    with_cursor: bool,
) -> None:
    if where.min_volume is not None and key != "volume":
        indexes = (*indexes, "ix_market_volume_id")
    keyset = Keyset(queries.SORT_KEYS[sort], market.c.id, descending=descending)
    stmt = queries.summaries(*where.conditions(NOW)).order_by(*keyset.order_by()).limit(51)
    if with_cursor:
        middle = (await conn.execute(stmt.with_only_columns(keyset.sort, market.c.id))).all()[25]
        stmt = stmt.where(keyset.after(tuple(middle)))
    used, sorts, full_scan, shown = await plan(conn, stmt)
    wanted = {i.format(key=key) for i in indexes}
    assert used & wanted, f"none of {wanted} used:\n{shown}"
    # A min-volume filter with another sort may be read by the volume range and then sorted.
    if where.min_volume is None or key == "volume":
        assert not sorts, f"sorts:\n{shown}"
    assert not full_scan, f"scans market:\n{shown}"
