"""GET /v1/markets/{marketAddress}/orderbook, …/prices and GET /v1/markets/{market}/activity."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.books import SHARE, book_version, cancel, eventually, open_levels, place, trade
from helpers.markets import hex32, make_market, market_address, utcnow
from predmarket.books.cache import BookCache
from predmarket.store.tables.indexer import indexed_tx

pytestmark = pytest.mark.db

LOT = SHARE // 10
AMOUNT = re.compile(r"0|[1-9][0-9]*")


def assert_error(r: httpx.Response, status: int, code: str, field: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["statusCode"] == status and body["code"] == code
    assert body["error"]["code"] == code
    assert body["requestId"] == r.headers["x-request-id"]
    if field is not None:
        assert field in [f["field"] for f in body["details"]["fields"]]


def books_of(app: FastAPI) -> BookCache:
    books = app.state.books
    assert isinstance(books, BookCache)
    return books


async def synced(app: FastAPI) -> None:
    await books_of(app).sync()


class TestOrderbook:
    async def test_unknown_market(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        r = await client.get(f"/v1/markets/{market_address()}/orderbook")
        assert_error(r, 404, "NOT_FOUND")

    @pytest.mark.parametrize("bad", ["not-an-address", "0" * 45, "I" * 40, "x" * 81])
    async def test_invalid_address(self, client: httpx.AsyncClient, bad: str) -> None:
        r = await client.get(f"/v1/markets/{bad}/orderbook")
        assert_error(r, 400, "INVALID_REQUEST", "path.marketAddress")

    @pytest.mark.parametrize("depth", ["0", "101", "-1", "ten", "1.5"])
    async def test_invalid_depth(
        self, client: httpx.AsyncClient, seed: AsyncEngine, depth: str
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        r = await client.get(f"/v1/markets/{m['market_address']}/orderbook?depth={depth}")
        assert_error(r, 400, "INVALID_REQUEST", "query.depth")

    async def test_an_empty_book(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        r = await client.get(f"/v1/markets/{m['market_address']}/orderbook")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/json"
        assert r.json() == {
            "marketAddress": m["market_address"],
            "yes": {"bids": [], "asks": []},
            "no": {"bids": [], "asks": []},
            "bestBidYes": 0,
            "bestAskYes": 0,
            "bestBidNo": 0,
            "bestAskNo": 0,
            "version": 0,
            "eventId": r.json()["eventId"],
        }
        assert re.fullmatch(r"0|[1-9][0-9]*", r.json()["eventId"])

    async def test_levels_bests_version_and_cursor(
        self, app: FastAPI, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            await place(conn, m, side="buy", outcome="yes", price=600, quantity=2 * LOT)
            await place(conn, m, side="buy", outcome="yes", price=600, quantity=3 * LOT)
            await place(conn, m, side="buy", outcome="yes", price=610, quantity=LOT)
            await place(conn, m, side="sell", outcome="yes", price=650, quantity=LOT)
            await place(conn, m, side="sell", outcome="yes", price=640, quantity=4 * LOT)
            gone = await place(conn, m, side="buy", outcome="no", price=300, quantity=LOT)
            await cancel(conn, m, gone)
            await place(conn, m, side="sell", outcome="no", price=420, quantity=LOT)
        await synced(app)
        r = await client.get(f"/v1/markets/{m['market_address']}/orderbook")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["yes"] == {
            "bids": [
                {"price": 610, "totalQuantity": str(LOT), "orderCount": 1},
                {"price": 600, "totalQuantity": str(5 * LOT), "orderCount": 2},
            ],
            "asks": [
                {"price": 640, "totalQuantity": str(4 * LOT), "orderCount": 1},
                {"price": 650, "totalQuantity": str(LOT), "orderCount": 1},
            ],
        }
        assert body["no"] == {
            "bids": [],
            "asks": [{"price": 420, "totalQuantity": str(LOT), "orderCount": 1}],
        }
        assert (body["bestBidYes"], body["bestAskYes"], body["bestBidNo"], body["bestAskNo"]) == (
            610,
            640,
            0,
            420,
        )
        assert body["version"] == await book_version(seed, m["id"]) == 8
        # The cursor is the market's last orders-topic event: a stream resumed from it starts
        # with the next event of the market.
        last_orders_event = int(body["eventId"])
        async with seed.begin() as conn:
            await place(conn, m, side="buy", outcome="no", price=100, quantity=LOT)
        await synced(app)
        after = (await client.get(f"/v1/markets/{m['market_address']}/orderbook")).json()
        assert after["version"] == 9 and int(after["eventId"]) > last_orders_event
        assert after["bestBidNo"] == 100

    async def test_depth_limits_levels_per_side(
        self, app: FastAPI, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            for price in range(100, 130):
                await place(conn, m, side="buy", outcome="no", price=price, quantity=LOT)
                await place(conn, m, side="sell", outcome="no", price=price + 500, quantity=LOT)
        await synced(app)
        url = f"/v1/markets/{m['market_address']}/orderbook"
        default = (await client.get(url)).json()
        assert [lv["price"] for lv in default["no"]["bids"]] == list(range(129, 109, -1))
        assert [lv["price"] for lv in default["no"]["asks"]] == list(range(600, 620))
        one = (await client.get(url, params={"depth": 1})).json()
        assert [lv["price"] for lv in one["no"]["bids"]] == [129]
        assert [lv["price"] for lv in one["no"]["asks"]] == [600]
        full = (await client.get(url, params={"depth": 100})).json()
        assert len(full["no"]["bids"]) == len(full["no"]["asks"]) == 30
        levels = await open_levels(seed, m["id"])
        served = {("no", "buy", lv["price"]): lv for lv in full["no"]["bids"]}
        served |= {("no", "sell", lv["price"]): lv for lv in full["no"]["asks"]}
        assert {k: (int(v["totalQuantity"]), v["orderCount"]) for k, v in served.items()} == levels

    async def test_a_market_created_after_start_is_served_at_once(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            await place(conn, m, side="sell", outcome="yes", price=700, quantity=LOT)
        # No sync: the first request loads the book from the database.
        r = await client.get(f"/v1/markets/{m['market_address']}/orderbook")
        assert r.status_code == 200 and r.json()["bestAskYes"] == 700

    async def test_follows_trades_in_the_background(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            o = await place(conn, m, side="sell", outcome="yes", price=700, quantity=2 * LOT)
        url = f"/v1/markets/{m['market_address']}/orderbook"
        assert (await client.get(url)).json()["yes"]["asks"][0]["totalQuantity"] == str(2 * LOT)
        async with seed.begin() as conn:
            await trade(conn, m, o, quantity=2 * LOT)

        async def emptied() -> bool:
            return (await client.get(url)).json()["yes"]["asks"] == []

        await eventually(emptied)


class TestPrices:
    async def test_unknown_market(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        assert_error(await client.get(f"/v1/markets/{market_address()}/prices"), 404, "NOT_FOUND")

    async def test_invalid_address(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/v1/markets/abc/prices")
        assert_error(r, 400, "INVALID_REQUEST", "path.marketAddress")

    async def test_no_trade_history(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        r = await client.get(f"/v1/markets/{m['market_address']}/prices")
        assert r.status_code == 200
        assert r.json() == {
            "marketAddress": m["market_address"],
            "yesPrice": 0.5,
            "noPrice": 0.5,
            "priceTimestamp": 0,
        }

    async def test_last_trade(
        self, app: FastAPI, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            o = await place(conn, m, side="sell", outcome="no", price=360, quantity=LOT)
            f = await trade(conn, m, o, quantity=LOT)
        await synced(app)
        body = (await client.get(f"/v1/markets/{m['market_address']}/prices")).json()
        assert (body["yesPrice"], body["noPrice"]) == (0.64, 0.36)
        assert isinstance(body["priceTimestamp"], int)
        assert body["priceTimestamp"] == int(f["traded_at"].timestamp() * 1000)


class TestActivity:
    TX = "ab" * 32

    async def index(self, seed: AsyncEngine, tx: str, market_id: int | None) -> dict[str, Any]:
        row = {"tx_id": tx, "block_hash": hex32(), "market_id": market_id, "indexed_at": utcnow()}
        async with seed.begin() as conn:
            await conn.execute(insert(indexed_tx).values(row))
        return row

    async def test_unknown_market(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        r = await client.get(f"/v1/markets/{market_address()}/activity", params={"txId": self.TX})
        assert_error(r, 404, "NOT_FOUND")
        r = await client.get("/v1/markets/999999/activity", params={"txId": self.TX})
        assert_error(r, 404, "NOT_FOUND")

    @pytest.mark.parametrize("tx", [None, "", "ab" * 31, "zz" * 32, "ab" * 33])
    async def test_invalid_tx_id(
        self, client: httpx.AsyncClient, seed: AsyncEngine, tx: str | None
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        params = {} if tx is None else {"txId": tx}
        r = await client.get(f"/v1/markets/{m['market_address']}/activity", params=params)
        assert_error(r, 400, "INVALID_REQUEST", "query.txId")

    async def test_invalid_market(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/v1/markets/not-a-market/activity", params={"txId": self.TX})
        assert_error(r, 400, "INVALID_REQUEST", "path.market")

    async def test_not_indexed_then_indexed(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        tx = hex32()
        url = f"/v1/markets/{m['market_address']}/activity"
        r = await client.get(url, params={"txId": tx})
        assert r.status_code == 200
        assert r.json() == {
            "marketAddress": m["market_address"],
            "txId": tx,
            "indexed": False,
            "blockHash": None,
            "indexedAt": None,
        }
        row = await self.index(seed, tx, m["id"])
        # by id, and with the tx id in upper case
        body = (
            await client.get(f"/v1/markets/{m['id']}/activity", params={"txId": tx.upper()})
        ).json()
        assert body["indexed"] is True and body["txId"] == tx
        assert body["blockHash"] == row["block_hash"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["indexedAt"])

    async def test_indexed_for_another_market(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
            other = await make_market(conn)
        tx = hex32()
        await self.index(seed, tx, other["id"])
        mine = await client.get(f"/v1/markets/{m['market_address']}/activity", params={"txId": tx})
        assert mine.json()["indexed"] is False
        theirs = await client.get(
            f"/v1/markets/{other['market_address']}/activity", params={"txId": tx}
        )
        assert theirs.json()["indexed"] is True
