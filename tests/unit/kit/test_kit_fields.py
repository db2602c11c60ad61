"""``?fields=`` projection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from kit_probe import Item, populated, router
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.kit.errors import InvalidRequest
from predmarket.kit.fields import FieldSelection, fields_param, parse_fields, wire_names

ALLOWED = wire_names(Item)


def test_wire_names_are_the_camel_case_names() -> None:
    assert ALLOWED == ("id", "name", "category", "volume", "createdAt")


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        (None, None),
        ("", None),
        (" , ,", None),
        ("name", {"id", "name"}),
        ("name, createdAt,name", {"id", "name", "createdAt"}),
        ("id", {"id"}),
    ],
)
def test_parse(raw: str | None, names: set[str] | None) -> None:
    selection = parse_fields(raw, ALLOWED, ("id",))
    assert selection.names == (None if names is None else frozenset(names))


@pytest.mark.parametrize("raw", ["nope", "name,nope", "created_at", "Name", "pagination"])
def test_unknown_names_are_refused_by_name(raw: str) -> None:
    with pytest.raises(InvalidRequest) as e:
        parse_fields(raw, ALLOWED, ("id",))
    (problem,) = e.value.details["fields"]  # type: ignore[misc]
    assert problem["field"] == "query.fields"
    assert problem["type"] == "unknown_field"
    bad = [n for n in raw.split(",") if n not in ALLOWED]
    assert all(name in problem["message"] for name in bad)


def test_project_keeps_order_and_only_selected() -> None:
    selection = FieldSelection(frozenset({"id", "volume"}))
    assert selection.project({"id": 1, "name": "a", "volume": "5"}) == {"id": 1, "volume": "5"}
    assert FieldSelection().project({"id": 1}) == {"id": 1}


def test_always_kept_fields_must_exist() -> None:
    with pytest.raises(ValueError, match="marketAddress"):
        fields_param(Item, always=("marketAddress",))


@pytest.mark.db
class TestOverHttp:
    @pytest.fixture
    def app(self, app: FastAPI) -> FastAPI:
        app.include_router(router)
        return app

    @pytest.fixture
    async def data(self, engine: AsyncEngine) -> AsyncIterator[list[dict[str, object]]]:
        async for data in populated(engine, 8):
            yield data

    async def test_projection(self, client: httpx.AsyncClient, data: list[dict[str, Any]]) -> None:
        body = (await client.get("/test/items", params={"fields": "name,volume"})).json()
        assert set(body) == {"items", "pagination"}
        assert body["items"] and all(set(i) == {"id", "name", "volume"} for i in body["items"])
        assert set(body["pagination"]) == {"limit", "nextCursor"}  # the envelope is whole

    async def test_projection_with_facets(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        body = (await client.get("/test/items", params={"fields": "name", "facets": "true"})).json()
        assert set(body) == {"items", "pagination", "facets"}
        assert all(set(i) == {"id", "name"} for i in body["items"])

    async def test_without_fields_everything(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        body = (await client.get("/test/items", params={"fields": ""})).json()
        assert all(set(i) == set(ALLOWED) for i in body["items"])

    async def test_unknown_field_is_a_400(
        self, client: httpx.AsyncClient, data: list[dict[str, Any]]
    ) -> None:
        r = await client.get("/test/items", params={"fields": "name,secret"})
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["field"] == "query.fields"
        assert "secret" in r.json()["message"]
