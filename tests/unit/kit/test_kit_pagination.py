"""Cursor and offset pagination: the codec, keyset paging on the database, and over HTTP."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from kit_probe import item, populated, router
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.kit.errors import InvalidRequest
from predmarket.kit.pagination import (
    CursorCodec,
    Keyset,
    PageRequest,
    Pagination,
    page_params,
    paginate,
    paginate_items,
)

SECRET = "x" * 40


def cursor_problem(exc: InvalidRequest) -> tuple[str, str]:
    (problem,) = exc.details["fields"]  # type: ignore[misc]
    return problem["field"], problem["type"]


class TestCodec:
    codec = CursorCodec(SECRET)

    @pytest.mark.parametrize(
        "position",
        [
            (5, 17),
            (2**255 + 1, 1),
            ("open", "market-9"),
            (0.1 + 0.2, 3),
            (True, 4),
            (datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC), 8),
            (datetime(2025, 1, 2, 3, 4, 5), 8),  # naive stays naive (SQLite rows)
            (Decimal("12345678901234567890.5"), 2),
        ],
    )
    def test_round_trip(self, position: tuple[Any, ...]) -> None:
        token = self.codec.encode(position, "q1")
        assert self.codec.decode(token, "q1") == position
        assert "=" not in token and "+" not in token and "/" not in token

    def test_another_query_is_refused(self) -> None:
        token = self.codec.encode((1, 2), "q1")
        with pytest.raises(InvalidRequest) as e:
            self.codec.decode(token, "q2")
        assert cursor_problem(e.value) == ("query.cursor", "cursor_query_mismatch")

    def test_another_secret_is_refused(self) -> None:
        token = CursorCodec("y" * 40).encode((1, 2), "q1")
        with pytest.raises(InvalidRequest) as e:
            self.codec.decode(token, "q1")
        assert cursor_problem(e.value) == ("query.cursor", "cursor_invalid")

    def test_every_edited_byte_is_refused(self) -> None:
        token = self.codec.encode((1, 2), "q1")
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        for i in range(len(raw)):
            edited = raw[:i] + bytes([raw[i] ^ 1]) + raw[i + 1 :]
            forged = base64.urlsafe_b64encode(edited).rstrip(b"=").decode()
            with pytest.raises(InvalidRequest):
                self.codec.decode(forged, "q1")

    def test_a_position_edited_with_a_matching_payload_is_refused(self) -> None:
        token = self.codec.encode((1, 2), "q1")
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        edited = raw[:16] + raw[16:].replace(b"[1,2]", b"[9,2]")
        forged = base64.urlsafe_b64encode(edited).rstrip(b"=").decode()
        with pytest.raises(InvalidRequest):
            self.codec.decode(forged, "q1")

    @pytest.mark.parametrize("token", ["", "a", "!!!!", "AAAA", "x" * 300, "é"])
    def test_garbage_is_refused(self, token: str) -> None:
        with pytest.raises(InvalidRequest) as e:
            self.codec.decode(token, "q1")
        assert cursor_problem(e.value) == ("query.cursor", "cursor_invalid")

    def test_a_null_sort_key_cannot_be_encoded(self) -> None:
        with pytest.raises(ValueError, match="NULL"):
            self.codec.encode((None, 1), "q1")  # type: ignore[arg-type]


def test_pagination_omits_offset_fields_in_cursor_mode() -> None:
    assert Pagination(limit=5, next_cursor=None).model_dump(mode="json") == {
        "limit": 5,
        "nextCursor": None,
    }
    assert Pagination(limit=5, next_cursor=None, page=0, total=0).model_dump(mode="json") == {
        "limit": 5,
        "nextCursor": None,
        "page": 0,
        "total": 0,
    }


def test_page_params_checks_its_bounds() -> None:
    with pytest.raises(ValueError, match="default_limit"):
        page_params(default_limit=0)
    with pytest.raises(ValueError, match="default_limit"):
        page_params(default_limit=50, max_limit=300)


class TestPaginateItems:
    codec = CursorCodec(SECRET)
    items = sorted([(v, i) for i, v in enumerate([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])])

    def walk(self, items: list[tuple[int, int]], limit: int, descending: bool) -> list[Any]:
        seen: list[tuple[int, int]] = []
        after = None
        while True:
            page = PageRequest(limit=limit, codec=self.codec, query="q", after=after)
            result = paginate_items(items, page, key=lambda t: t, descending=descending)
            assert len(result.items) <= limit
            seen.extend(result.items)
            if result.pagination.next_cursor is None:
                return seen
            after = self.codec.decode(result.pagination.next_cursor, "q")

    @pytest.mark.parametrize("limit", [1, 2, 3, 11, 12])
    def test_walks_every_item_once(self, limit: int) -> None:
        assert self.walk(self.items, limit, False) == self.items
        desc = sorted(self.items, reverse=True)
        assert self.walk(desc, limit, True) == desc

    def test_empty(self) -> None:
        page = PageRequest(limit=3, codec=self.codec, query="q")
        result = paginate_items([], page, key=lambda t: t)
        assert result.items == [] and result.pagination.next_cursor is None

    def test_offset_mode(self) -> None:
        page = PageRequest(limit=4, codec=self.codec, query="q", page=2)
        result = paginate_items(self.items, page, key=lambda t: t)
        assert result.items == self.items[8:12]
        assert (result.pagination.page, result.pagination.total) == (2, len(self.items))


@pytest.mark.db
class TestPaginateOnTheDatabase:
    codec = CursorCodec(SECRET)

    @pytest.fixture
    async def data(self, engine: AsyncEngine) -> AsyncIterator[list[dict[str, object]]]:
        async for data in populated(engine, 41):
            yield data

    async def walk(self, engine: AsyncEngine, keyset: Keyset, limit: int) -> list[int]:
        ids: list[int] = []
        after = None
        async with engine.connect() as conn:
            while True:
                page = PageRequest(limit=limit, codec=self.codec, query="q", after=after)
                result = await paginate(conn, select(item), page, keyset)
                ids.extend(int(r["id"]) for r in result.items)
                if result.pagination.next_cursor is None:
                    return ids
                after = self.codec.decode(result.pagination.next_cursor, "q")

    @pytest.mark.parametrize("limit", [1, 4, 40, 41, 200])
    async def test_volume_desc_with_ties(
        self, engine: AsyncEngine, data: list[dict[str, Any]], limit: int
    ) -> None:
        keyset = Keyset(item.c.volume, item.c.id, descending=True)
        expected = [
            r["id"] for r in sorted(data, key=lambda r: (r["volume"], r["id"]), reverse=True)
        ]
        assert await self.walk(engine, keyset, limit) == expected

    async def test_created_at_asc_with_ties(
        self, engine: AsyncEngine, data: list[dict[str, Any]]
    ) -> None:
        keyset = Keyset(item.c.created_at, item.c.id)
        expected = [r["id"] for r in sorted(data, key=lambda r: (r["created_at"], r["id"]))]
        assert await self.walk(engine, keyset, 3) == expected

    async def test_offset_mode_counts(
        self, engine: AsyncEngine, data: list[dict[str, Any]]
    ) -> None:
        keyset = Keyset(item.c.id, item.c.id)
        async with engine.connect() as conn:
            page = PageRequest(limit=10, codec=self.codec, query="q", page=4)
            result = await paginate(conn, select(item).order_by(item.c.name), page, keyset)
        assert [r["id"] for r in result.items] == [41]
        assert result.pagination == Pagination(limit=10, next_cursor=None, page=4, total=41)


@pytest.mark.db
class TestOverHttp:
    @pytest.fixture
    def app(self, app: FastAPI) -> FastAPI:
        app.include_router(router)
        return app

    @pytest.fixture
    async def data(self, engine: AsyncEngine) -> AsyncIterator[list[dict[str, object]]]:
        async for data in populated(engine, 23):
            yield data

    async def walk(self, client: httpx.AsyncClient, **params: Any) -> list[int]:
        ids: list[int] = []
        cursor = None
        while True:
            query = dict(params, **({"cursor": cursor} if cursor else {}))
            r = await client.get("/test/items", params=query)
            assert r.status_code == 200, r.text
            body = r.json()
            assert set(body["pagination"]) == {"limit", "nextCursor"}
            assert len(body["items"]) <= body["pagination"]["limit"]
            ids.extend(i["id"] for i in body["items"])
            cursor = body["pagination"]["nextCursor"]
            if cursor is None:
                return ids

    async def test_cursor_walk(self, client: httpx.AsyncClient, data: list[dict[str, Any]]) -> None:
        expected = [
            r["id"] for r in sorted(data, key=lambda r: (r["volume"], r["id"]), reverse=True)
        ]
        assert await self.walk(client) == expected
        assert await self.walk(client, limit=50) == expected
        by_time = [r["id"] for r in sorted(data, key=lambda r: (r["created_at"], r["id"]))]
        assert await self.walk(client, sort="created-at", order="asc", limit=4) == by_time
        sports = [r["id"] for r in data if r["category"] == "sports"]
        assert sorted(await self.walk(client, category="sports", limit=2)) == sports

    async def test_amounts_and_times_on_the_wire(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        first = (await client.get("/test/items", params={"limit": 1})).json()["items"][0]
        assert first == {
            "id": 14,
            "name": "item 14",
            "category": "politics",
            "volume": str(2**200 + 4 * 10**18),
            "createdAt": "2025-01-01T00:00:02.002Z",
        }

    async def next_cursor(self, client: httpx.AsyncClient, **params: Any) -> str:
        r = await client.get("/test/items", params=params)
        cursor: str = r.json()["pagination"]["nextCursor"]
        assert cursor
        return cursor

    async def assert_cursor_refused(self, r: httpx.Response, kind: str) -> None:
        assert r.status_code == 400
        body = r.json()
        assert body["code"] == "INVALID_REQUEST"
        assert body["details"]["fields"][0]["field"] == "query.cursor"
        assert body["details"]["fields"][0]["type"] == kind

    async def test_the_cursor_pins_the_query(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        cursor = await self.next_cursor(client, sort="volume", category="sports", limit=2)
        for changed in (
            {"sort": "created-at", "category": "sports"},
            {"sort": "volume", "category": "crypto"},
            {"sort": "volume"},
            {"sort": "volume", "category": "sports", "order": "asc"},
        ):
            r = await client.get("/test/items", params={**changed, "cursor": cursor})
            await self.assert_cursor_refused(r, "cursor_query_mismatch")
        again = await client.get("/test/items/again", params={"sort": "volume", "cursor": cursor})
        await self.assert_cursor_refused(again, "cursor_query_mismatch")
        # Paging parameters and parameter order may change.
        same = {"category": "sports", "limit": 3, "fields": "name", "facets": "true"}
        r = await client.get("/test/items", params={**same, "cursor": cursor, "sort": "volume"})
        assert r.status_code == 200, r.text

    async def test_forged_cursors(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        cursor = await self.next_cursor(client)
        flipped = cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1]
        for forged in (flipped, "not-a-cursor", "A" * 40, cursor + "A"):
            r = await client.get("/test/items", params={"cursor": forged})
            await self.assert_cursor_refused(r, "cursor_invalid")
        r = await client.get("/test/items", params={"cursor": "x" * 2000})
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["field"] == "query.cursor"

    async def test_offset_mode(self, client: httpx.AsyncClient, data: list[dict[str, Any]]) -> None:
        expected = [
            r["id"] for r in sorted(data, key=lambda r: (r["volume"], r["id"]), reverse=True)
        ]
        ids = []
        for n in range(5):
            body = (await client.get("/test/items", params={"page": n})).json()
            assert body["pagination"] == {"limit": 5, "nextCursor": None, "page": n, "total": 23}
            ids.extend(i["id"] for i in body["items"])
        assert ids == expected
        beyond = (await client.get("/test/items", params={"page": 99})).json()
        assert beyond["items"] == [] and beyond["pagination"]["total"] == 23

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"limit": 0}, "query.limit"),
            ({"limit": 51}, "query.limit"),
            ({"limit": "x"}, "query.limit"),
            ({"page": -1}, "query.page"),
            ({"page": 2**53}, "query.page"),
            ({"page": 0, "cursor": "abc"}, "query.page"),
            ({"sort": "bogus"}, "query.sort"),
        ],
    )
    async def test_bad_paging_is_a_400_naming_the_field(
        self,
        client: httpx.AsyncClient,
        data: list[dict[str, Any]],
        params: dict[str, Any],
        field: str,
    ) -> None:
        r = await client.get("/test/items", params=params)
        assert r.status_code == 400
        assert [p["field"] for p in r.json()["details"]["fields"]] == [field]
