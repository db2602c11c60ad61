"""GET /v1/markets/{market}/orders and GET /v1/markets/{market}/fills."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.books import SHARE, cancel, place, trade
from helpers.markets import make_market, market_address, wallet_address

pytestmark = pytest.mark.db

LOT = SHARE // 10
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
HEX32 = re.compile(r"[0-9a-f]{64}")


def assert_error(r: httpx.Response, status: int, code: str, field: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == code and body["error"]["code"] == code
    if field is not None:
        assert field in [f["field"] for f in body["details"]["fields"]], body


async def walk(client: httpx.AsyncClient, url: str, items: str, **params: Any) -> list[Any]:
    """Every item of a list, page by page through ``nextCursor``."""
    out: list[Any] = []
    cursor = None
    while True:
        query = dict(params)
        if cursor:
            query["cursor"] = cursor
        r = await client.get(url, params=query)
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body["pagination"]) == {"limit", "nextCursor"}
        out.extend(body[items])
        cursor = body["pagination"]["nextCursor"]
        if cursor is None:
            return out


@pytest.fixture
async def market_with_orders(seed: AsyncEngine) -> dict[str, Any]:
    """A market with 7 orders of two owners: 3 open, 2 filled, 2 cancelled, and 3 fills."""
    alice, bob = wallet_address(), wallet_address()
    async with seed.begin() as conn:
        m = await make_market(conn, category="sports", tags=["football", "cup"])
        await make_market(conn)  # another market's orders never show
        o1 = await place(conn, m, owner=alice, side="buy", outcome="yes", price=600, quantity=LOT)
        o2 = await place(conn, m, owner=bob, side="sell", outcome="yes", price=650, quantity=LOT)
        o3 = await place(conn, m, owner=alice, side="buy", outcome="no", price=300, quantity=LOT)
        o4 = await place(conn, m, owner=bob, side="sell", outcome="no", price=720, quantity=LOT)
        o5 = await place(conn, m, owner=alice, side="buy", outcome="yes", price=610, quantity=LOT)
        o6 = await place(conn, m, owner=bob, side="buy", outcome="yes", price=500, quantity=LOT)
        o7 = await place(conn, m, owner=alice, side="sell", outcome="no", price=800, quantity=LOT)
        f1 = await trade(conn, m, o1, quantity=LOT, taker_owner=bob)
        f2 = await trade(conn, m, o3, quantity=LOT, taker_owner=bob, kind="mint")
        f3 = await trade(conn, m, o5, quantity=LOT // 2, taker_owner=wallet_address())
        await cancel(conn, m, o2)
        await cancel(conn, m, o4, reason="self-trade")
    return {
        "market": m,
        "alice": alice,
        "bob": bob,
        "orders": [o1, o2, o3, o4, o5, o6, o7],
        "fills": [f1, f2, f3],
    }


class TestOrders:
    async def test_unknown_market(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        assert_error(await client.get(f"/v1/markets/{market_address()}/orders"), 404, "NOT_FOUND")
        assert_error(await client.get("/v1/markets/123456/orders"), 404, "NOT_FOUND")

    async def test_an_invalid_market(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/v1/markets/0OIl/orders")
        assert_error(r, 400, "INVALID_REQUEST", "path.market")

    @pytest.mark.parametrize(
        ("param", "value", "field"),
        [
            ("status", "done", "query.status"),
            ("side", "hold", "query.side"),
            ("outcome", "maybe", "query.outcome"),
            ("owner", "not-an-address", "query.owner"),
            ("limit", "201", "query.limit"),
            ("limit", "0", "query.limit"),
            ("page", "-1", "query.page"),
            ("fields", "orderId,nope", "query.fields"),
            ("facets", "maybe", "query.facets"),
            ("cursor", "garbage", "query.cursor"),
        ],
    )
    async def test_invalid_query(
        self,
        client: httpx.AsyncClient,
        market_with_orders: dict[str, Any],
        param: str,
        value: str,
        field: str,
    ) -> None:
        m = market_with_orders["market"]
        r = await client.get(f"/v1/markets/{m['market_address']}/orders", params={param: value})
        assert_error(r, 400, "INVALID_REQUEST", field)

    async def test_newest_first_with_every_field(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m = market_with_orders["market"]
        r = await client.get(f"/v1/markets/{m['market_address']}/orders")
        assert r.status_code == 200
        body = r.json()
        assert body["pagination"] == {"limit": 50, "nextCursor": None}
        assert "facets" not in body
        orders = body["orders"]
        placed = market_with_orders["orders"]
        assert [o["orderId"] for o in orders] == [p["chain_order_id"] for p in reversed(placed)]
        by_id = {o["orderId"]: o for o in orders}
        o1 = by_id[placed[0]["chain_order_id"]]
        assert o1["status"] == "filled" and o1["remaining"] == "0"
        assert o1["quantity"] == str(LOT) and o1["cancelReason"] is None
        assert o1["closedTxId"] == o1["txId"] != o1["placedTxId"]
        assert TIME.fullmatch(o1["closedAt"]) and TIME.fullmatch(o1["createdAt"])
        o2 = by_id[placed[1]["chain_order_id"]]
        assert (o2["status"], o2["cancelReason"], o2["remaining"]) == ("cancelled", "owner", "0")
        o5 = by_id[placed[4]["chain_order_id"]]
        assert (o5["status"], o5["remaining"]) == ("open", str(LOT // 2))
        o6 = by_id[placed[5]["chain_order_id"]]
        assert o6["txId"] == o6["placedTxId"] and o6["closedTxId"] is None
        assert o6["closedAt"] is None
        for o in orders:
            assert set(o) == {
                "orderId", "marketAddress", "owner", "side", "outcome", "price", "quantity",
                "remaining", "status", "cancelReason", "txId", "placedTxId", "closedTxId",
                "createdAt", "updatedAt", "closedAt",
            }  # fmt: skip
            assert o["marketAddress"] == m["market_address"]
            assert isinstance(o["orderId"], int) and isinstance(o["price"], int)
            assert HEX32.fullmatch(o["txId"])

    @pytest.mark.parametrize(
        ("params", "expect"),
        [
            ({"status": "open"}, [6, 5, 4]),
            ({"status": "filled"}, [2, 0]),
            ({"status": "cancelled"}, [3, 1]),
            ({"side": "sell"}, [6, 3, 1]),
            ({"outcome": "no", "side": "buy"}, [2]),
            ({"owner": "alice"}, [6, 4, 2, 0]),
            ({"owner": "bob", "status": "open"}, [5]),
            ({"owner": "nobody"}, []),
        ],
    )
    async def test_filters(
        self,
        client: httpx.AsyncClient,
        market_with_orders: dict[str, Any],
        params: dict[str, str],
        expect: list[int],
    ) -> None:
        m, placed = market_with_orders["market"], market_with_orders["orders"]
        if "owner" in params:
            who = params["owner"]
            params["owner"] = (
                market_with_orders[who] if who in ("alice", "bob") else wallet_address()
            )
        r = await client.get(f"/v1/markets/{m['id']}/orders", params=params)
        assert r.status_code == 200, r.text
        assert [o["orderId"] for o in r.json()["orders"]] == [
            placed[i]["chain_order_id"] for i in expect
        ]

    async def test_cursor_pages(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m, placed = market_with_orders["market"], market_with_orders["orders"]
        url = f"/v1/markets/{m['market_address']}/orders"
        everything = [p["chain_order_id"] for p in reversed(placed)]
        for limit in (1, 2, 3, 7, 8):
            got = await walk(client, url, "orders", limit=limit)
            assert [o["orderId"] for o in got] == everything
        alice = await walk(client, url, "orders", limit=1, owner=market_with_orders["alice"])
        assert len(alice) == 4

    async def test_a_cursor_is_pinned_to_its_query(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m = market_with_orders["market"]
        url = f"/v1/markets/{m['market_address']}/orders"
        first = (await client.get(url, params={"limit": 2, "status": "open"})).json()
        cursor = first["pagination"]["nextCursor"]
        r = await client.get(url, params={"limit": 2, "status": "filled", "cursor": cursor})
        assert_error(r, 400, "INVALID_REQUEST", "query.cursor")
        assert r.json()["details"]["fields"][0]["type"] == "cursor_query_mismatch"
        fills = f"/v1/markets/{m['market_address']}/fills"
        assert_error(
            await client.get(fills, params={"cursor": cursor}),
            400,
            "INVALID_REQUEST",
            "query.cursor",
        )
        r = await client.get(url, params={"cursor": cursor, "page": 1})
        assert_error(r, 400, "INVALID_REQUEST", "query.page")

    async def test_offset_pages(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m, placed = market_with_orders["market"], market_with_orders["orders"]
        url = f"/v1/markets/{m['market_address']}/orders"
        everything = [p["chain_order_id"] for p in reversed(placed)]
        pages = []
        for page in range(4):
            body = (await client.get(url, params={"page": page, "limit": 3})).json()
            assert body["pagination"] == {"limit": 3, "nextCursor": None, "page": page, "total": 7}
            pages.extend(o["orderId"] for o in body["orders"])
        assert pages == everything
        body = (await client.get(url, params={"page": 0, "status": "open"})).json()
        assert body["pagination"]["total"] == 3

    async def test_fields(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m = market_with_orders["market"]
        r = await client.get(
            f"/v1/markets/{m['market_address']}/orders", params={"fields": "price, status"}
        )
        assert r.status_code == 200
        body = r.json()
        assert all(set(o) == {"orderId", "price", "status"} for o in body["orders"])
        assert len(body["orders"]) == 7 and "pagination" in body

    async def test_facets(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m = market_with_orders["market"]
        url = f"/v1/markets/{m['market_address']}/orders"
        body = (await client.get(url, params={"facets": "true", "limit": 1})).json()
        assert body["facets"] == {
            "category": [{"value": "sports", "count": 7}],
            "tag": [{"value": "cup", "count": 7}, {"value": "football", "count": 7}],
            "status": [
                {"value": "open", "count": 3},
                {"value": "cancelled", "count": 2},
                {"value": "filled", "count": 2},
            ],
        }
        body = (await client.get(url, params={"facets": "true", "side": "sell"})).json()
        assert body["facets"]["status"] == [
            {"value": "cancelled", "count": 2},
            {"value": "open", "count": 1},
        ]
        assert body["facets"]["category"] == [{"value": "sports", "count": 3}]
        none = (await client.get(url, params={"facets": "true", "owner": wallet_address()})).json()
        assert none["facets"] == {"category": [], "tag": [], "status": []}


class TestFills:
    async def test_unknown_market(self, client: httpx.AsyncClient, seed: AsyncEngine) -> None:
        assert_error(await client.get(f"/v1/markets/{market_address()}/fills"), 404, "NOT_FOUND")

    @pytest.mark.parametrize(
        ("param", "value", "field"),
        [
            ("kind", "swap", "query.kind"),
            ("owner", "nope", "query.owner"),
            ("limit", "500", "query.limit"),
            ("fields", "tradeId,bogus", "query.fields"),
        ],
    )
    async def test_invalid_query(
        self,
        client: httpx.AsyncClient,
        market_with_orders: dict[str, Any],
        param: str,
        value: str,
        field: str,
    ) -> None:
        m = market_with_orders["market"]
        r = await client.get(f"/v1/markets/{m['market_address']}/fills", params={param: value})
        assert_error(r, 400, "INVALID_REQUEST", field)

    async def test_newest_first_with_every_field(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m, made = market_with_orders["market"], market_with_orders["fills"]
        r = await client.get(f"/v1/markets/{m['market_address']}/fills")
        assert r.status_code == 200
        fills = r.json()["fills"]
        assert [f["tradeId"] for f in fills] == ["3", "2", "1"]
        mint = fills[1]
        assert mint == {
            "tradeId": "2",
            "kind": "mint",
            "makerOrderId": made[1]["maker_order_id"],
            "takerOrderId": made[1]["taker_order_id"],
            "maker": market_with_orders["alice"],
            "taker": market_with_orders["bob"],
            "outcome": "no",
            "makerSide": "buy",
            "takerOutcome": "yes",
            "takerSide": "buy",
            "price": 300,
            "takerPrice": 700,
            "yesPrice": 700,
            "quantity": str(LOT),
            "makerFee": "0",
            "takerFee": "0",
            "txId": made[1]["tx_id"],
            "blockHash": made[1]["block_hash"],
            "timestamp": mint["timestamp"],
        }
        assert TIME.fullmatch(mint["timestamp"])
        normal = fills[2]
        assert (normal["kind"], normal["price"], normal["takerPrice"], normal["yesPrice"]) == (
            "normal",
            600,
            600,
            600,
        )
        assert (normal["makerSide"], normal["takerSide"]) == ("buy", "sell")

    async def test_filters(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m = market_with_orders["market"]
        url = f"/v1/markets/{m['market_address']}/fills"

        async def ids(**params: str) -> list[str]:
            r = await client.get(url, params=params)
            assert r.status_code == 200, r.text
            return [f["tradeId"] for f in r.json()["fills"]]

        assert await ids(kind="mint") == ["2"]
        assert await ids(kind="merge") == []
        assert await ids(owner=market_with_orders["bob"]) == ["2", "1"]  # as taker
        assert await ids(owner=market_with_orders["alice"]) == ["3", "2", "1"]  # as maker
        assert await ids(owner=market_with_orders["alice"], kind="normal") == ["3", "1"]

    async def test_pages_fields_and_facets(
        self, client: httpx.AsyncClient, market_with_orders: dict[str, Any]
    ) -> None:
        m = market_with_orders["market"]
        url = f"/v1/markets/{m['id']}/fills"
        got = await walk(client, url, "fills", limit=1)
        assert [f["tradeId"] for f in got] == ["3", "2", "1"]
        body = (await client.get(url, params={"page": 1, "limit": 2})).json()
        assert body["pagination"] == {"limit": 2, "nextCursor": None, "page": 1, "total": 3}
        assert [f["tradeId"] for f in body["fills"]] == ["1"]
        body = (await client.get(url, params={"fields": "price", "facets": "true"})).json()
        assert all(set(f) == {"tradeId", "price"} for f in body["fills"])
        assert body["facets"] == {
            "category": [{"value": "sports", "count": 3}],
            "tag": [{"value": "cup", "count": 3}, {"value": "football", "count": 3}],
            "status": [],
        }

    async def test_a_market_without_fills(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn)
        body = (await client.get(f"/v1/markets/{m['market_address']}/fills")).json()
        assert body == {"fills": [], "pagination": {"limit": 50, "nextCursor": None}}
