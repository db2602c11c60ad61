"""The error envelope: every status in both shapes of spec 7.1, fields named, nothing leaked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Path, Query
from pydantic import ValidationError

from predmarket.kit.errors import (
    AppError,
    Conflict,
    InsufficientBalance,
    InsufficientScope,
    InvalidRequest,
    MarketClosed,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
    UpstreamError,
    UpstreamTimeout,
    field_path,
    problems_from_errors,
)
from predmarket.kit.schemas import Amount, InputSchema

pytestmark = pytest.mark.db

probe = APIRouter(prefix="/test/errors")


class Body(InputSchema):
    price: int
    quantity: Amount


RAISED: dict[str, AppError] = {
    "invalid": InvalidRequest.for_field("body.price", "price must be a tick 1..999"),
    "unauthorized": Unauthorized(),
    "scope": InsufficientScope(details={"required": "trade:place"}),
    "missing": NotFound("market not found"),
    "conflict": Conflict(),
    "closed": MarketClosed(),
    "balance": InsufficientBalance(details={"required": "10", "available": "3"}),
    "limited": RateLimited(retry_after=12),
    "upstream": UpstreamError(),
    "timeout": UpstreamTimeout(),
    "unavailable": Unavailable(),
    "custom": AppError("teapot", status=418, code="TEAPOT"),
}


@probe.get("/raise/{name}")
async def raise_named(name: str) -> None:
    raise RAISED[name]


@probe.get("/crash")
async def crash() -> None:
    raise RuntimeError("database password is hunter2")


@probe.get("/query")
async def query(
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    market_address: Annotated[str | None, Query(alias="marketAddress", min_length=3)] = None,
) -> dict[str, Any]:
    return {"limit": limit, "marketAddress": market_address}


@probe.get("/path/{market_id}")
async def path(market_id: Annotated[int, Path(alias="market_id", ge=1)]) -> dict[str, int]:
    return {"id": market_id}


@probe.post("/body")
async def body(order: Body) -> dict[str, str]:
    return {"quantity": str(order.quantity)}


@pytest.fixture
def app(app: FastAPI) -> FastAPI:
    app.include_router(probe)
    return app


def assert_envelope(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """Both shapes at once, the request id equal to the header; returns ``details``."""
    assert r.status_code == status
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    rid = r.headers["x-request-id"]
    assert set(body) == {"statusCode", "code", "message", "requestId", "details", "error"}
    assert body["statusCode"] == status
    assert body["code"] == code
    assert body["requestId"] == rid
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["details"], dict)
    assert body["error"] == {k: body[k] for k in ("code", "message", "requestId", "details")}
    details: dict[str, Any] = body["details"]
    return details


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("invalid", 400, "INVALID_REQUEST"),
        ("unauthorized", 401, "UNAUTHORIZED"),
        ("scope", 403, "INSUFFICIENT_SCOPE"),
        ("missing", 404, "NOT_FOUND"),
        ("conflict", 409, "CONFLICT"),
        ("closed", 409, "MARKET_CLOSED"),
        ("balance", 422, "INSUFFICIENT_BALANCE"),
        ("limited", 429, "RATE_LIMITED"),
        ("upstream", 502, "UPSTREAM_ERROR"),
        ("timeout", 502, "UPSTREAM_TIMEOUT"),
        ("unavailable", 503, "UNAVAILABLE"),
        ("custom", 418, "TEAPOT"),
    ],
)
async def test_app_errors_render_the_envelope(
    client: httpx.AsyncClient, name: str, status: int, code: str
) -> None:
    r = await client.get(f"/test/errors/raise/{name}")
    details = assert_envelope(r, status, code)
    expected = dict(RAISED[name].details)
    if status >= 500:
        expected["requestId"] = r.headers["x-request-id"]
    assert details == expected


async def test_domain_details_and_headers_pass_through(client: httpx.AsyncClient) -> None:
    r = await client.get("/test/errors/raise/limited")
    assert r.headers["retry-after"] == "12"
    r = await client.get("/test/errors/raise/invalid")
    assert assert_envelope(r, 400, "INVALID_REQUEST") == {
        "fields": [
            {"field": "body.price", "message": "price must be a tick 1..999", "type": "invalid"}
        ]
    }
    assert r.json()["message"] == "body.price: price must be a tick 1..999"


async def test_uncaught_exception_is_a_500_without_internals(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    r = await client.get("/test/errors/crash")
    details = assert_envelope(r, 500, "INTERNAL_ERROR")
    assert details == {"requestId": r.headers["x-request-id"]}
    assert "hunter2" not in r.text and "RuntimeError" not in r.text
    # ... but the log has it, with the request id to find it by.
    assert any(r.headers["x-request-id"] in rec.getMessage() for rec in caplog.records)


async def test_unknown_route_is_a_404_envelope(client: httpx.AsyncClient) -> None:
    assert_envelope(await client.get("/v1/no-such-thing"), 404, "NOT_FOUND")
    assert_envelope(await client.get("/v1/health/"), 404, "NOT_FOUND")  # no slash redirects


async def test_wrong_method_is_a_405_envelope(client: httpx.AsyncClient) -> None:
    r = await client.delete("/test/errors/body")
    details = assert_envelope(r, 405, "METHOD_NOT_ALLOWED")
    assert details == {"allowed": ["POST"]}
    assert r.headers["allow"] == "POST"


class TestValidationNamesTheField:
    async def fields(self, r: httpx.Response) -> list[str]:
        details = assert_envelope(r, 400, "INVALID_REQUEST")
        for problem in details["fields"]:
            assert set(problem) == {"field", "message", "type"}
        return [p["field"] for p in details["fields"]]

    async def test_query_out_of_range(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/test/errors/query", params={"limit": 201})
        assert await self.fields(r) == ["query.limit"]
        assert r.json()["message"].startswith("query.limit: ")

    async def test_query_of_wrong_type(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/test/errors/query", params={"limit": "ten"})
        assert await self.fields(r) == ["query.limit"]

    async def test_query_by_its_wire_name(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/test/errors/query", params={"marketAddress": "x"})
        assert await self.fields(r) == ["query.marketAddress"]

    async def test_several_problems(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/test/errors/query", params={"limit": 0, "marketAddress": "x"})
        assert await self.fields(r) == ["query.limit", "query.marketAddress"]
        assert r.json()["message"].endswith("(and 1 more)")

    async def test_unknown_query_parameters_are_ignored(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/test/errors/query", params={"bogus": "1"})
        assert r.status_code == 200

    async def test_path(self, client: httpx.AsyncClient) -> None:
        assert await self.fields(await client.get("/test/errors/path/0")) == ["path.market_id"]
        assert await self.fields(await client.get("/test/errors/path/x")) == ["path.market_id"]

    async def test_body_field(self, client: httpx.AsyncClient) -> None:
        r = await client.post("/test/errors/body", json={"price": "high", "quantity": "01"})
        assert await self.fields(r) == ["body.price", "body.quantity"]

    async def test_body_unknown_field(self, client: httpx.AsyncClient) -> None:
        r = await client.post("/test/errors/body", json={"price": 1, "quantity": "1", "side": 1})
        assert await self.fields(r) == ["body.side"]

    async def test_body_missing_field(self, client: httpx.AsyncClient) -> None:
        r = await client.post("/test/errors/body", json={"price": 1})
        assert await self.fields(r) == ["body.quantity"]

    async def test_body_missing(self, client: httpx.AsyncClient) -> None:
        assert await self.fields(await client.post("/test/errors/body")) == ["body"]

    async def test_body_not_json(self, client: httpx.AsyncClient) -> None:
        r = await client.post(
            "/test/errors/body",
            content=b'{"price": 1,',
            headers={"content-type": "application/json"},
        )
        assert await self.fields(r) == ["body"]
        assert r.json()["details"]["fields"][0]["type"] == "json_invalid"

    async def test_body_of_another_media_type(self, client: httpx.AsyncClient) -> None:
        r = await client.post(
            "/test/errors/body",
            content=b'{"price": 1, "quantity": "1"}',
            headers={"content-type": "text/plain"},
        )
        assert await self.fields(r) == ["body"]

    async def test_body_a_json_array(self, client: httpx.AsyncClient) -> None:
        assert await self.fields(await client.post("/test/errors/body", json=[1])) == ["body"]

    async def test_the_input_is_never_echoed(self, client: httpx.AsyncClient) -> None:
        r = await client.post("/test/errors/body", json={"price": "s3cr3t-value", "quantity": "1"})
        assert "s3cr3t-value" not in r.text


async def test_oversized_body_is_a_413_envelope(client: httpx.AsyncClient, app: FastAPI) -> None:
    size = app.state.settings.api.max_body_bytes + 1
    r = await client.post(
        "/test/errors/body", content=b" " * size, headers={"content-type": "application/json"}
    )
    assert_envelope(r, 413, "PAYLOAD_TOO_LARGE")


@pytest.mark.parametrize(
    ("loc", "path"),
    [
        (("body",), "body"),
        (("query", "limit"), "query.limit"),
        (("body", "tokens", 0, "amount"), "body.tokens[0].amount"),
        ((), ""),
    ],
)
def test_field_path(loc: tuple[int | str, ...], path: str) -> None:
    assert field_path(loc) == path


async def test_oversized_streamed_body_is_a_413_envelope(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    size = app.state.settings.api.max_body_bytes + 1

    async def chunks() -> AsyncIterator[bytes]:  # no content-length: the cap counts as it reads
        for _ in range(size // 4096 + 1):
            yield b" " * 4096

    r = await client.post(
        "/test/errors/body", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_envelope(r, 413, "PAYLOAD_TOO_LARGE")


def test_problems_from_a_pydantic_error_with_a_prefix() -> None:
    try:
        Body.model_validate({"price": "x", "quantity": "1", "extra": True})
    except ValidationError as e:
        error = InvalidRequest.for_fields(problems_from_errors(e.errors(), prefix=("body", "meta")))
    assert [p["field"] for p in error.details["fields"]] == [  # type: ignore[attr-defined]
        "body.meta.price",
        "body.meta.extra",
    ]
    assert error.message.startswith("body.meta.price: ")
