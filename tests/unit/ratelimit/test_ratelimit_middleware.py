"""The middleware on a small app built like the real one (request id → last-resort 500 → a
principal-setting layer standing where the auth middleware stands → rate limits → routes): tiers
from the principal on the scope, 429 before the route, headers on every response."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from predmarket.auth.principal import DeveloperIdentity, Principal, set_principal
from predmarket.kit.errors import NotFound, UnhandledErrorMiddleware, install_error_handlers
from predmarket.kit.requestid import RequestIdMiddleware
from predmarket.ratelimit import RateLimiter, RateLimitMiddleware, stream_connection
from predmarket.settings import LimitSettings

ELEVATED = "1ElevatedWa11etXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy")


class PrincipalFromTestHeaders:
    """Where the auth middleware stands: a principal from ``x-test-wallet`` / ``x-test-dev``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            wallet = headers.get(b"x-test-wallet")
            dev = headers.get(b"x-test-dev")
            developer = (
                DeveloperIdentity(dev.decode(), "bc", "1owner", frozenset()) if dev else None
            )
            set_principal(
                scope,
                Principal(
                    wallet=wallet.decode() if wallet else None,
                    auth="bearer" if wallet else None,
                    developer=developer,
                ),
            )
        await self.app(scope, receive, send)


routes = APIRouter()
reached: list[str] = []


@routes.get("/v1/things")
async def read_things() -> dict[str, bool]:
    reached.append("read")
    return {"ok": True}


@routes.post("/v1/things")
async def write_things() -> dict[str, bool]:
    reached.append("write")
    return {"ok": True}


@routes.get("/v1/things/missing")
async def missing() -> None:
    raise NotFound("no such thing")


@routes.get("/v1/boom")
async def boom() -> None:
    raise RuntimeError("kaput")


@routes.get("/v1/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@routes.get("/v1/realtime/stream", dependencies=[Depends(stream_connection)])
async def stream() -> dict[str, str]:
    return {"stream": "open"}


def build(limits: LimitSettings) -> FastAPI:
    app = FastAPI()
    # A fixed moment mid-window: no test straddles a window boundary.
    app.state.rate_limiter = RateLimiter(limits, clock=lambda: 1_800_000_030.0)
    install_error_handlers(app)
    app.add_middleware(RateLimitMiddleware, limiter=app.state.rate_limiter)
    app.add_middleware(PrincipalFromTestHeaders)
    app.add_middleware(UnhandledErrorMiddleware)
    app.add_middleware(RequestIdMiddleware)
    app.include_router(routes)
    return app


@pytest.fixture
def limits() -> LimitSettings:
    return LimitSettings(
        anonymous_reads_per_minute=3,
        anonymous_writes_per_minute=2,
        session_reads_per_minute=5,
        session_writes_per_minute=4,
        elevated_reads_per_minute=8,
        elevated_writes_per_minute=6,
        developer_reads_per_minute=7,
        developer_writes_per_minute=1,
        stream_connections_per_minute=2,
        elevated_wallets=[ELEVATED],
    )


@pytest.fixture
async def client(limits: LimitSettings) -> AsyncIterator[httpx.AsyncClient]:
    reached.clear()
    transport = httpx.ASGITransport(app=build(limits), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


async def count_allowed(
    client: httpx.AsyncClient, method: str, n: int, **kw: Any
) -> list[httpx.Response]:
    return [await client.request(method, "/v1/things", **kw) for _ in range(n)]


@pytest.mark.parametrize(
    ("headers", "reads", "writes", "tier"),
    [
        ({}, 3, 2, "anonymous"),
        ({"x-test-wallet": "1SomeWa11et"}, 5, 4, "signed-in"),
        ({"x-test-wallet": ELEVATED}, 8, 6, "elevated"),
        ({"x-test-dev": "key-1"}, 7, 1, "developer"),
        ({"x-test-wallet": "1SomeWa11et", "x-test-dev": "key-1"}, 5, 4, "signed-in"),
    ],
)
async def test_tier_budgets(
    client: httpx.AsyncClient, headers: dict[str, str], reads: int, writes: int, tier: str
) -> None:
    got = await count_allowed(client, "GET", reads + 2, headers=headers)
    assert [r.status_code for r in got] == [200] * reads + [429, 429]
    assert got[0].headers["ratelimit-limit"] == str(reads)
    assert got[0].headers["ratelimit-policy"] == f'"reads";q={reads};w=60'
    assert got[-1].json()["details"]["tier"] == tier
    got = await count_allowed(client, "POST", writes + 1, headers=headers)
    assert [r.status_code for r in got] == [200] * writes + [429]
    assert got[0].headers["ratelimit-policy"] == f'"writes";q={writes};w=60'
    assert reached.count("read") == reads and reached.count("write") == writes


async def test_budgets_are_per_wallet_and_per_ip(client: httpx.AsyncClient) -> None:
    await count_allowed(client, "GET", 3)
    assert (await client.get("/v1/things")).status_code == 429
    # A signed-in wallet from the same IP has its own budget, and so has another wallet.
    assert (await client.get("/v1/things", headers={"x-test-wallet": "1A"})).status_code == 200
    assert (await client.get("/v1/things", headers={"x-test-wallet": "1B"})).status_code == 200


async def test_429_envelope_and_headers(client: httpx.AsyncClient) -> None:
    await count_allowed(client, "GET", 3)
    refused = await client.get("/v1/things")
    assert refused.status_code == 429
    body = refused.json()
    assert body["code"] == body["error"]["code"] == "RATE_LIMITED"
    assert body["requestId"] == refused.headers["x-request-id"]
    assert body["details"]["policy"] == "reads" and body["details"]["limit"] == 3
    assert refused.headers["ratelimit-remaining"] == "0"
    assert refused.headers["retry-after"] == refused.headers["ratelimit-reset"]
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["content-type"] == "application/json"
    assert reached == ["read"] * 3  # the refused request never reached the route


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/things", 200),
        ("GET", "/v1/things/missing", 404),
        ("GET", "/v1/nowhere", 404),
        ("DELETE", "/v1/things", 405),
        ("GET", "/v1/boom", 500),
        ("GET", "/v1/health", 200),
        ("GET", "/v1/realtime/stream", 200),
    ],
)
async def test_headers_on_every_response(
    client: httpx.AsyncClient, method: str, path: str, status: int
) -> None:
    response = await client.request(method, path)
    assert response.status_code == status
    for name in HEADERS:
        assert name in response.headers, name
    assert response.headers.get_list("ratelimit-limit") == [response.headers["ratelimit-limit"]]


async def test_unhandled_error_is_a_500_envelope_with_headers(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    response = await client.get("/v1/boom")
    assert response.status_code == 500
    assert response.json()["code"] == "INTERNAL_ERROR"
    assert "kaput" not in response.text
    assert response.headers["ratelimit-remaining"] == "2"
    assert any("unhandled error" in r.getMessage() for r in caplog.records)


async def test_health_is_never_refused_and_never_counted(client: httpx.AsyncClient) -> None:
    for _ in range(10):
        response = await client.get("/v1/health")
        assert response.status_code == 200
        assert response.headers["ratelimit-remaining"] == "3"
    await count_allowed(client, "GET", 3)
    spent = await client.get("/v1/health")
    assert spent.status_code == 200 and spent.headers["ratelimit-remaining"] == "0"


async def test_stream_connections_spend_their_own_budget(client: httpx.AsyncClient) -> None:
    opened = [await client.get("/v1/realtime/stream") for _ in range(3)]
    assert [r.status_code for r in opened] == [200, 200, 429]
    assert opened[0].headers["ratelimit-policy"] == '"streams";q=2;w=60'
    assert opened[2].json()["details"]["policy"] == "streams"
    assert opened[2].headers["retry-after"] == opened[2].headers["ratelimit-reset"]
    assert opened[2].headers.get_list("ratelimit-remaining") == ["0"]
    # Streams spent nothing of the reads budget.
    assert (await client.get("/v1/things")).headers["ratelimit-remaining"] == "2"


async def test_cors_preflight_is_free(client: httpx.AsyncClient) -> None:
    preflight = {"origin": "https://app.example", "access-control-request-method": "POST"}
    for _ in range(5):
        response = await client.options("/v1/things", headers=preflight)
        assert "ratelimit-limit" in response.headers
    assert (await client.get("/v1/things")).headers["ratelimit-remaining"] == "2"
