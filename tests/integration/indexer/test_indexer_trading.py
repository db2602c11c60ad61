"""Orders, fills, positions, market stats and the outbox rows the indexer writes for one market's
whole life: place, mint, normal fill, self-trade cancel, merge, owner cancel, resolve, claim."""

from __future__ import annotations

from typing import Any

import pytest
from indexer_chain import LOT, Chain
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.exchange import Outcome, Resolution, buy_lock, fee, notional
from predmarket.indexer import run_once
from predmarket.node import NodeClient
from predmarket.store.tables.fill import fill
from predmarket.store.tables.market import market
from predmarket.store.tables.order import order
from predmarket.store.tables.outbox import outbox
from predmarket.store.tables.position import position

pytestmark = pytest.mark.db

YES, NO = Outcome.YES, Outcome.NO

ORDER_VIEW_KEYS = {
    "orderId",
    "owner",
    "side",
    "outcome",
    "price",
    "quantity",
    "remaining",
    "status",
    "cancelReason",
    "txId",
    "updatedAt",
}
TRADE_KEYS = {
    "tradeId",
    "kind",
    "makerOrderId",
    "takerOrderId",
    "maker",
    "taker",
    "outcome",
    "makerSide",
    "price",
    "quantity",
    "makerFee",
    "takerFee",
    "txId",
    "timestamp",
}


async def all_rows(engine: AsyncEngine, table: Any, order_by: Any) -> list[dict[str, Any]]:
    async with engine.connect() as conn:
        result = await conn.execute(select(table).order_by(order_by))
        return [dict(r._mapping) for r in result]


def frames_of(frames: list[dict[str, Any]], tx_id: str) -> list[tuple[str, str, str]]:
    """(topic, operation, entity) of the frames whose payload names ``tx_id``, in id order."""
    return [
        (f["topic"], f["operation"], f["entity"])
        for f in frames
        if f["payload"].get("txId") == tx_id
    ]


async def test_a_market_life_is_indexed_exactly(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    m = chain.create_market("Will the home team win?", "sports")
    a, b, c, d = (chain.wallet() for _ in range(4))
    addr = m.address

    t1 = chain.buy(a, m, YES, 600, 2)  # order 1 rests
    t2 = chain.buy(b, m, NO, 400, 2)  # order 2 mints 2 lots with order 1 (maker at 600)
    t3 = chain.sell(b, m, NO, 700, 1)  # order 3 rests
    t4 = chain.buy(c, m, NO, 700, 1)  # order 4 buys order 3: a normal trade
    chain.buy(a, m, YES, 200, 3)  # order 5 rests
    t6 = chain.sell(a, m, YES, 150, 1)  # order 6 meets a's own bid: self-trade cancel; rests
    t7 = chain.sell(c, m, NO, 850, 1)  # order 7 merges with order 6 (maker at 150)
    chain.buy(c, m, YES, 100, 2)  # order 8 rests
    t9 = chain.cancel(c, m, 8)
    chain.buy(d, m, YES, 500, 1)  # order 9 rests
    t11 = chain.resolve(m, Resolution.YES)  # cancels order 9
    t12 = chain.claim(a, m, LOT, 0)
    assert chain.resting(m) == []

    applied = await run_once(db, node)
    assert applied == chain.event_count(chain.registry_address) + chain.event_count(addr)
    assert await run_once(db, node) == 0

    # -- orders ------------------------------------------------------------------------------
    orders = {o["chain_order_id"]: o for o in await all_rows(db, order, order.c.id)}
    expected = {
        1: (a, "buy", "yes", 600, 2, "filled", None, t2),
        2: (b, "buy", "no", 400, 2, "filled", None, t2),
        3: (b, "sell", "no", 700, 1, "filled", None, t4),
        4: (c, "buy", "no", 700, 1, "filled", None, t4),
        5: (a, "buy", "yes", 200, 3, "cancelled", "self-trade", t6),
        6: (a, "sell", "yes", 150, 1, "filled", None, t7),
        7: (c, "sell", "no", 850, 1, "filled", None, t7),
        8: (c, "buy", "yes", 100, 2, "cancelled", "owner", t9),
        9: (d, "buy", "yes", 500, 1, "cancelled", "resolved", t11),
    }
    assert set(orders) == set(expected)
    for oid, (w, side, outcome, price, lots, status, reason, closed_by) in expected.items():
        o = orders[oid]
        assert (o["owner"], o["side"], o["outcome"], o["price"]) == (
            w.address,
            side,
            outcome,
            price,
        )
        assert o["quantity"] == lots * LOT
        assert (o["status"], o["cancel_reason"]) == (status, reason), oid
        assert o["remaining"] == 0 and o["locked_collateral"] == 0 and o["locked_shares"] == 0
        assert o["closed_tx_id"] == closed_by.tx_id.hex(), oid
    assert orders[1]["placed_tx_id"] == t1.tx_id.hex()
    assert orders[3]["placed_tx_id"] == t3.tx_id.hex()

    # -- fills -------------------------------------------------------------------------------
    fills = await all_rows(db, fill, fill.c.id)
    got = [
        (
            f["trade_seq"],
            f["kind"],
            f["maker_order_id"],
            f["taker_order_id"],
            f["maker_owner"],
            f["taker_owner"],
            f["maker_side"],
            f["maker_outcome"],
            f["taker_side"],
            f["taker_outcome"],
            f["price"],
            f["taker_price"],
            f["quantity"],
            f["maker_fee"],
            f["taker_fee"],
            f["tx_id"],
        )
        for f in fills
    ]
    assert got == [
        (1, "mint", 1, 2, a.address, b.address, "buy", "yes", "buy", "no", 600, 400, 2 * LOT,
         fee(600, 2 * LOT), fee(400, 2 * LOT), t2.tx_id.hex()),
        (2, "normal", 3, 4, b.address, c.address, "sell", "no", "buy", "no", 700, 700, LOT,
         0, fee(700, LOT), t4.tx_id.hex()),
        (3, "merge", 6, 7, a.address, c.address, "sell", "yes", "sell", "no", 150, 850, LOT,
         0, 0, t7.tx_id.hex()),
    ]  # fmt: skip

    # -- positions ---------------------------------------------------------------------------
    positions = {p["owner"]: p for p in await all_rows(db, position, position.c.owner)}
    assert set(positions) == {a.address, b.address, c.address}  # d never traded
    pa, pb, pc = positions[a.address], positions[b.address], positions[c.address]
    # a: minted 2 YES at 600, merged 1 away, claimed the last one (YES won).
    assert (pa["yes_shares"], pa["yes_cost"], pa["claimed_payout"]) == (0, 0, LOT)
    # b: minted 2 NO at 400, sold one at 700: half the cost left with it.
    assert (pb["no_shares"], pb["no_cost"]) == (LOT, buy_lock(400, LOT))
    # c: bought 1 NO at 700, merged it away.
    assert (pc["no_shares"], pc["no_cost"], pc["yes_shares"]) == (0, 0, 0)

    # -- the market row ----------------------------------------------------------------------
    (mk,) = await all_rows(db, market, market.c.id)
    assert (mk["status"], mk["resolution"]) == ("resolved", "yes")
    assert mk["resolved_tx_id"] == t11.tx_id.hex()
    assert mk["volume"] == 2 * LOT + notional(700, LOT) + LOT
    assert mk["trade_count"] == 3
    assert mk["last_fill_id"] == fills[-1]["id"]
    assert mk["last_price_yes"] == 150  # the merge's maker sold YES at 150
    assert mk["open_interest"] == 0  # 2 minted, 1 merged, 1 claimed
    assert (mk["best_bid_yes"], mk["best_ask_yes"], mk["best_bid_no"], mk["best_ask_no"]) == (
        0,
        0,
        0,
        0,
    )
    # 9 placements, 3 trades, 3 cancellations (self-trade, owner, resolution)
    assert mk["book_version"] == 15

    # -- the outbox --------------------------------------------------------------------------
    frames = await all_rows(db, outbox, outbox.c.id)
    ids = [f["id"] for f in frames]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert {f["source"] for f in frames} == {"indexer"}
    mo, mf = f"market:{addr}:orders", f"market:{addr}:fills"

    def uo(w: Any) -> str:
        return f"user:{w.address}:orders"

    def uf(w: Any) -> str:
        return f"user:{w.address}:fills"

    # The mint: b's order placed (filled at once), the trade on three topics, a's order updated.
    assert frames_of(frames, t2.tx_id.hex()) == [
        (mo, "insert", "order"),
        (uo(b), "insert", "order"),
        (mf, "insert", "trade"),
        (uf(a), "insert", "trade"),
        (uf(b), "insert", "trade"),
        (mo, "update", "order"),
        (uo(a), "update", "order"),
    ]
    # The self-trade: a's new order placed, its old one cancelled.
    assert frames_of(frames, t6.tx_id.hex()) == [
        (mo, "insert", "order"),
        (uo(a), "insert", "order"),
        (mo, "update", "order"),
        (uo(a), "update", "order"),
    ]
    assert frames_of(frames, t9.tx_id.hex()) == [
        (mo, "update", "order"),
        (uo(c), "update", "order"),
    ]
    assert frames_of(frames, t12.tx_id.hex()) == []  # a claim changes no order

    for f in frames:
        if f["entity"] == "order":
            assert set(f["payload"]) == ORDER_VIEW_KEYS
            assert set(f["key"]) == {"marketAddress", "orderId"}
            assert f["key"]["marketAddress"] == addr
        elif f["entity"] == "trade":
            assert set(f["payload"]) == TRADE_KEYS
            assert f["key"] == {"marketAddress": addr, "tradeId": f["payload"]["tradeId"]}
        else:
            assert f["entity"] == "market" and f["key"] == {"marketAddress": addr}
            assert f["topic"] == mo

    mint = next(f for f in frames if f["entity"] == "trade")
    assert mint["payload"] == {
        "tradeId": "1",
        "kind": "mint",
        "makerOrderId": 1,
        "takerOrderId": 2,
        "maker": a.address,
        "taker": b.address,
        "outcome": "yes",
        "makerSide": "buy",
        "price": 600,
        "quantity": str(2 * LOT),
        "makerFee": str(fee(600, 2 * LOT)),
        "takerFee": str(fee(400, 2 * LOT)),
        "txId": t2.tx_id.hex(),
        "timestamp": mint["payload"]["timestamp"],
    }
    assert mint["payload"]["timestamp"].endswith("Z")
    updates = {
        f["key"]["orderId"]: f["payload"]
        for f in frames
        if f["entity"] == "order" and f["operation"] == "update" and f["topic"] == mo
    }
    assert (updates[1]["remaining"], updates[1]["status"]) == ("0", "filled")
    assert (updates[5]["status"], updates[5]["cancelReason"]) == ("cancelled", "self-trade")
    assert updates[5]["txId"] == t6.tx_id.hex()
    market_frames = [f["payload"] for f in frames if f["entity"] == "market"]
    assert market_frames[0]["status"] == "open"  # the insert
    assert market_frames[1] == {"bestBidYes": 600, "bookVersion": 1}  # order 1 rests
    resolved = market_frames[-2]  # the claim's update (open interest) comes last
    assert resolved["status"] == "resolved" and resolved["resolved"] is True
    assert resolved["finalOutcome"] == "yes" and resolved["bestBidYes"] == 0
    assert market_frames[-1] == {"openInterest": "0"}
    # every order event moved the book version by one
    versions = [p["bookVersion"] for p in market_frames[1:] if "bookVersion" in p]
    assert versions == sorted(versions) and versions[-1] == 15


async def test_best_prices_follow_the_books(
    chain: Chain, node: NodeClient, db: AsyncEngine
) -> None:
    m = chain.create_market()
    a, b = chain.wallet(), chain.wallet()
    chain.buy(a, m, YES, 300, 1)
    chain.buy(a, m, YES, 450, 1)  # best yes bid
    chain.buy(b, m, NO, 200, 1)
    chain.buy(b, m, NO, 500, 1)  # meets a's 450: 450 + 500 < 1000, no mint; rests
    await run_once(db, node)

    async def tops() -> tuple[int, int, int, int]:
        async with db.connect() as conn:
            row = (
                await conn.execute(
                    select(
                        market.c.best_bid_yes,
                        market.c.best_ask_yes,
                        market.c.best_bid_no,
                        market.c.best_ask_no,
                    )
                )
            ).one()
        return (row[0], row[1], row[2], row[3])

    assert await tops() == (450, 0, 500, 0)
    c = chain.wallet()
    chain.buy(c, m, YES, 490, 2)  # 490 + 500 < 1000: rests
    chain.cancel(a, m, 2)  # a's 450 goes: the best yes bid is c's 490
    chain.buy(a, m, NO, 510, 1)  # mints 1 lot with c's 490 (510 + 490 = 1000)
    await run_once(db, node)
    assert await tops() == (490, 0, 500, 0)
    chain.buy(a, m, NO, 510, 1)  # mints c's last lot
    await run_once(db, node)
    assert await tops() == (300, 0, 500, 0)
    chain.sell(a, m, NO, 800, 1)
    chain.sell(a, m, NO, 700, 1)
    await run_once(db, node)
    assert await tops() == (300, 0, 500, 700)
    assert await run_once(db, node) == 0
