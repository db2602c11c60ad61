"""Markets appear from the registry's MarketCreated events: rows, metadata, tags, event groups,
taxonomy counts, checkpoints, indexed transactions and the market's outbox row."""

from __future__ import annotations

from typing import Any

import pytest
from indexer_chain import Chain
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.alephium.address import contract_id_from_address
from predmarket.exchange import Outcome, Resolution
from predmarket.indexer import run_once
from predmarket.node import NodeClient
from predmarket.store.tables.event_group import event_group
from predmarket.store.tables.indexer import chain_event, indexed_tx, indexer_checkpoint
from predmarket.store.tables.market import market
from predmarket.store.tables.market_tag import category, market_tag, tag
from predmarket.store.tables.outbox import outbox

pytestmark = pytest.mark.db


async def rows(engine: AsyncEngine, table: Any, *order_by: Any) -> list[dict[str, Any]]:
    async with engine.connect() as conn:
        result = await conn.execute(select(table).order_by(*order_by))
        return [dict(r._mapping) for r in result]


async def test_markets_appear_with_metadata_tags_and_event_groups(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    m1 = chain.create_market(
        "Will BTC close above 100k?",
        "crypto",
        {
            "tags": ["Bitcoin", " price ", "bitcoin", 7, ""],
            "eventSlug": "btc-2026",
            "eventTitle": "Bitcoin in 2026",
            "description": "Resolves on the close of Dec 31.",
            "unknown": {"ignored": True},
        },
    )
    m2 = chain.create_market(
        "Will BTC close above 150k?", "crypto", {"tags": ["bitcoin"], "eventSlug": "btc-2026"}
    )
    m3 = chain.create_market("Rain in Paris?", "weather", b"{not json")
    m4 = chain.create_market("No category", "", b"[1, 2]")
    assert await run_once(db, node) == 4

    markets = {r["market_address"]: r for r in await rows(db, market, market.c.id)}
    assert list(markets) == [m1.address, m2.address, m3.address, m4.address]
    r1, r2, r3, r4 = (markets[m.address] for m in (m1, m2, m3, m4))
    assert [r["registry_index"] for r in (r1, r2, r3, r4)] == [0, 1, 2, 3]
    assert r1["question"] == "Will BTC close above 100k?" and r1["category"] == "crypto"
    assert r1["contract_id"] == contract_id_from_address(m1.address).hex()
    assert (r1["yes_token_id"], r1["no_token_id"]) == (m1.yes_id.hex(), m1.no_id.hex())
    assert r1["creator"] == chain.operator.address
    assert r1["registry_address"] == chain.registry_address
    assert r1["metadata"] == {
        "tags": ["bitcoin", "price"],
        "eventSlug": "btc-2026",
        "eventTitle": "Bitcoin in 2026",
        "description": "Resolves on the close of Dec 31.",
    }
    assert r3["metadata"] == {"tags": []} and r4["metadata"] == {"tags": []}
    assert r1["status"] == "open" and r1["resolution"] is None
    assert (r1["volume"], r1["trade_count"], r1["last_fill_id"], r1["book_version"]) == (0, 0, 0, 0)
    assert (r1["best_bid_yes"], r1["best_ask_yes"], r1["best_bid_no"], r1["best_ask_no"]) == (
        0,
        0,
        0,
        0,
    )
    assert r1["close_at"] > r1["created_at"]

    groups = await rows(db, event_group, event_group.c.id)
    assert [(g["slug"], g["title"], g["category"]) for g in groups] == [
        ("btc-2026", "Bitcoin in 2026", "crypto")
    ]
    assert r1["event_group_id"] == r2["event_group_id"] == groups[0]["id"]
    assert r3["event_group_id"] is None

    links = await rows(db, market_tag, market_tag.c.market_id, market_tag.c.tag)
    assert [(lk["market_id"], lk["tag"]) for lk in links] == [
        (r1["id"], "bitcoin"),
        (r1["id"], "price"),
        (r2["id"], "bitcoin"),
    ]
    tallies = {
        t["name"]: (t["market_count"], t["open_market_count"])
        for t in await rows(db, tag, tag.c.name)
    }
    assert tallies == {"bitcoin": (2, 2), "price": (1, 1)}
    cats = {
        c["name"]: (c["market_count"], c["open_market_count"])
        for c in await rows(db, category, category.c.name)
    }
    assert cats == {"crypto": (2, 2), "weather": (1, 1)}  # the empty category is not a category

    # Every contract has its checkpoint; each created market starts at 0.
    checkpoints = {
        c["contract_address"]: c["next_start"]
        for c in await rows(db, indexer_checkpoint, indexer_checkpoint.c.contract_address)
    }
    assert checkpoints == {
        chain.registry_address: 4,  # one batch per block, one block per createMarket
        m1.address: 0,
        m2.address: 0,
        m3.address: 0,
        m4.address: 0,
    }
    events = await rows(db, chain_event, chain_event.c.event_counter)
    assert [(e["contract_address"], e["event_counter"], e["event_position"]) for e in events] == [
        (chain.registry_address, i, 0) for i in range(4)
    ]
    txs = {t["tx_id"]: t["market_id"] for t in await rows(db, indexed_tx, indexed_tx.c.tx_id)}
    assert txs == {markets[a]["created_tx_id"]: markets[a]["id"] for a in markets}

    frames = await rows(db, outbox, outbox.c.id)
    assert [(f["topic"], f["operation"], f["entity"], f["key"]) for f in frames] == [
        (f"market:{m.address}:orders", "insert", "market", {"marketAddress": m.address})
        for m in (m1, m2, m3, m4)
    ]
    p1 = frames[0]["payload"]
    assert p1["id"] == r1["id"] and p1["tags"] == ["bitcoin", "price"]
    assert p1["eventSlug"] == "btc-2026" and p1["volume"] == "0" and p1["resolved"] is False
    assert p1["createdAt"].endswith("Z") and p1["closeAt"].endswith("Z")


async def test_resolution_moves_the_open_counts(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    m1 = chain.create_market("A?", "politics", {"tags": ["elections", "eu"]})
    chain.create_market("B?", "politics", {"tags": ["elections"]})
    await run_once(db, node)
    w = chain.wallet()
    chain.buy(w, m1, Outcome.YES, 300, 1)
    chain.resolve(m1, Resolution.INVALID)
    assert await run_once(db, node) == 3  # placed, cancelled at resolution, resolved

    cats = {
        c["name"]: (c["market_count"], c["open_market_count"])
        for c in await rows(db, category, category.c.name)
    }
    assert cats == {"politics": (2, 1)}
    tallies = {
        t["name"]: (t["market_count"], t["open_market_count"])
        for t in await rows(db, tag, tag.c.name)
    }
    assert tallies == {"elections": (2, 1), "eu": (1, 0)}
    (r1, _) = await rows(db, market, market.c.id)
    assert (r1["status"], r1["resolution"]) == ("resolved", "invalid")
    assert r1["resolved_at"] is not None
