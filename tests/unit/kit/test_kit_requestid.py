"""``x-request-id``: on every response, kept when sane, replaced when not."""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi import APIRouter, FastAPI

from predmarket.kit.requestid import is_sane

pytestmark = pytest.mark.db

GENERATED = re.compile(r"[0-9a-f]{32}")

probe = APIRouter(prefix="/test/rid")


@probe.get("/crash")
async def crash() -> None:
    raise ValueError("boom")


@pytest.fixture
def app(app: FastAPI) -> FastAPI:
    app.include_router(probe)
    return app


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/health", 200),
        ("GET", "/nowhere", 404),
        ("POST", "/v1/health", 405),
        ("GET", "/test/rid/crash", 500),
        ("GET", "/openapi.json", 200),
    ],
)
async def test_every_response_has_one(
    client: httpx.AsyncClient, method: str, path: str, status: int
) -> None:
    r = await client.request(method, path)
    assert r.status_code == status
    assert GENERATED.fullmatch(r.headers["x-request-id"])
    assert len(r.headers.get_list("x-request-id")) == 1


async def test_ids_differ_per_request(client: httpx.AsyncClient) -> None:
    ids = {(await client.get("/v1/health")).headers["x-request-id"] for _ in range(5)}
    assert len(ids) == 5


@pytest.mark.parametrize("incoming", ["abc", "A.b_c-9", "x" * 64, "0b7d1c5e-9f2a-4e19"])
async def test_a_sane_incoming_id_is_kept(client: httpx.AsyncClient, incoming: str) -> None:
    r = await client.get("/nowhere", headers={"x-request-id": incoming})
    assert r.headers["x-request-id"] == incoming
    assert r.json()["requestId"] == incoming


@pytest.mark.parametrize(
    "incoming",
    ["", "x" * 65, "a b", "a/b", "<script>", "a\tb", "id;drop", "é"],
)
async def test_an_insane_incoming_id_is_replaced(client: httpx.AsyncClient, incoming: str) -> None:
    r = await client.get("/nowhere", headers={"x-request-id": incoming.encode()})
    assert r.headers["x-request-id"] != incoming
    assert GENERATED.fullmatch(r.headers["x-request-id"])
    assert r.json()["requestId"] == r.headers["x-request-id"]


def test_is_sane() -> None:
    assert is_sane("a") and is_sane("Z" * 64)
    assert not is_sane("") and not is_sane("a" * 65) and not is_sane("a\n")
