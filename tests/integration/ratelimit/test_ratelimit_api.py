"""Rate limits on the real app (auth middleware, routes, error handlers), counting in the process
and in Redis: exact counts under concurrency, separate budgets, headers on every response,
windows, tiers of real wallet sessions."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
import redis
from fastapi import APIRouter, FastAPI

from helpers.auth import new_key, sign_in, wallet_of
from predmarket.app import create_app
from predmarket.ratelimit import RateLimitStoreError
from predmarket.settings import Settings

pytestmark = pytest.mark.db

LimitedClient = Callable[..., AbstractAsyncContextManager[tuple[httpx.AsyncClient, FastAPI]]]

HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy")


def from_ip(n: int) -> dict[str, str]:
    """A client behind the trusted proxy 127.0.0.1."""
    return {"x-forwarded-for": f"198.51.100.{n}"}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_exact_counts_under_concurrency_from_several_clients(
    limited: LimitedClient,
) -> None:
    async with limited(anonymous_reads_per_minute=37) as (client, _):

        async def get(n: int) -> tuple[int, int]:
            response = await client.get("/v1/markets", headers=from_ip(n))
            return n, response.status_code

        results = await asyncio.gather(*(get(i % 3) for i in range(300)))
    counts = Counter(results)
    for n in range(3):
        assert counts[(n, 200)] == 37, counts
        assert counts[(n, 429)] == 63, counts


async def test_reads_and_writes_are_separate_budgets(limited: LimitedClient) -> None:
    async with limited(anonymous_reads_per_minute=3, anonymous_writes_per_minute=2) as (c, _):
        writes = [(await c.post("/v1/auth/challenge", json={})).status_code for _ in range(3)]
        assert writes == [200, 200, 429]
        reads = [(await c.get("/v1/markets")).status_code for _ in range(4)]
        assert reads == [200, 200, 200, 429]
        # Another client behind the proxy still has both budgets.
        assert (await c.post("/v1/auth/challenge", json={}, headers=from_ip(9))).status_code == 200


async def test_headers_on_every_kind_of_response(limited: LimitedClient) -> None:
    boom = APIRouter()

    @boom.get("/test/boom")
    async def fail() -> None:
        raise RuntimeError("kaput")

    async with limited(anonymous_reads_per_minute=9, anonymous_writes_per_minute=5) as (c, app):
        app.include_router(boom)
        responses = {
            200: await c.get("/v1/markets"),
            400: await c.get("/v1/markets", params={"limit": 0}),
            401: await c.get("/v1/auth/sessions"),
            404: await c.get("/v1/nowhere"),
            405: await c.delete("/v1/markets"),
            500: await c.get("/test/boom"),
        }
        bad_token = await c.get("/v1/markets", headers={"authorization": "Bearer svc_sess_x_y"})
        for _ in range(9):
            refused = await c.get("/v1/markets")
        responses[429] = refused
    for status, response in responses.items():
        assert response.status_code == status, (status, response.text)
        for name in HEADERS:
            assert name in response.headers, (status, name)
    reads = {s: r for s, r in responses.items() if s != 405}
    assert {r.headers["ratelimit-policy"] for r in reads.values()} == {'"reads";q=9;w=60'}
    assert [int(r.headers["ratelimit-remaining"]) for r in reads.values()] == [8, 7, 6, 5, 4, 0]
    # DELETE is a write: it reports (and spent) the writes budget.
    assert responses[405].headers["ratelimit-policy"] == '"writes";q=5;w=60'
    assert responses[405].headers["ratelimit-remaining"] == "4"
    assert bad_token.status_code == 401
    assert "ratelimit-limit" in bad_token.headers
    body = responses[429].json()
    assert body["statusCode"] == 429 and body["code"] == "RATE_LIMITED"
    assert responses[429].headers["retry-after"] == responses[429].headers["ratelimit-reset"]


async def test_a_write_reports_the_writes_budget(limited: LimitedClient) -> None:
    async with limited(anonymous_writes_per_minute=4) as (c, _):
        response = await c.delete("/v1/markets")
    assert response.status_code == 405
    assert response.headers["ratelimit-policy"] == '"writes";q=4;w=60'
    assert response.headers["ratelimit-remaining"] == "3"


async def test_retry_after_and_the_next_window(limited: LimitedClient) -> None:
    async with limited(anonymous_reads_per_minute=2) as (c, app):
        clock = Clock(1_800_000_000.0 + 45.4)  # 14.6 s before a window boundary
        app.state.rate_limiter.clock = clock
        assert [(await c.get("/v1/markets")).status_code for _ in range(2)] == [200, 200]
        refused = await c.get("/v1/markets")
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "15"
        assert refused.headers["ratelimit-reset"] == "15"
        clock.now += 15
        again = await c.get("/v1/markets")
        assert again.status_code == 200
        assert again.headers["ratelimit-remaining"] == "1"
        assert again.headers["ratelimit-reset"] == "60"


async def test_health_is_never_refused(limited: LimitedClient) -> None:
    async with limited(anonymous_reads_per_minute=1) as (c, _):
        await c.get("/v1/markets")
        assert (await c.get("/v1/markets")).status_code == 429
        for path in ("/v1/health", "/v1/health/ready"):
            response = await c.get(path)
            assert response.status_code in (200, 503), response.text
            assert response.headers["ratelimit-remaining"] == "0"


async def test_tiers_of_real_wallet_sessions(limited: LimitedClient) -> None:
    plain, elevated = new_key(), new_key()
    elevated_address, _ = wallet_of(elevated)
    async with limited(
        anonymous_reads_per_minute=2,
        anonymous_writes_per_minute=10,
        session_reads_per_minute=4,
        session_writes_per_minute=3,
        elevated_reads_per_minute=6,
        elevated_wallets=[elevated_address],
    ) as (c, _):
        a = await sign_in(c, plain)
        b = await sign_in(c, elevated)
        got = [await c.get("/v1/markets", headers=a.headers) for _ in range(5)]
        assert [r.status_code for r in got] == [200] * 4 + [429]
        assert got[0].headers["ratelimit-limit"] == "4"
        assert got[-1].json()["details"]["tier"] == "signed-in"
        got = [await c.get("/v1/markets", headers=b.headers) for _ in range(7)]
        assert [r.status_code for r in got] == [200] * 6 + [429]
        assert got[-1].json()["details"]["tier"] == "elevated"
        # The IP's anonymous budget is its own: the sessions spent none of it.
        anonymous = [(await c.get("/v1/markets")).status_code for _ in range(3)]
        assert anonymous == [200, 200, 429]
        # A wallet's budget follows the wallet, not the IP.
        elsewhere = await c.get("/v1/markets", headers={**a.headers, **from_ip(7)})
        assert elsewhere.status_code == 429


@pytest.mark.parametrize("store", ["redis"], indirect=True)
async def test_redis_counters_are_namespaced_and_expire(
    limited: LimitedClient, redis_prefix: str, redis_url: str
) -> None:
    async with limited(anonymous_reads_per_minute=5) as (c, _):
        await c.get("/v1/markets")
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{redis_prefix}*"))
        assert len(keys) == 1
        (key,) = keys
        assert key.decode().startswith(f"{redis_prefix}anonymous:reads:ip:127.0.0.1:")
        assert client.get(key) == b"1"
        assert 0 < client.pttl(key) <= 120_000
    finally:
        client.close()


async def test_unreachable_redis_fails_the_start(app_settings: Settings, tmp_path: Path) -> None:
    app = create_app(app_settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"}))
    with pytest.raises(RateLimitStoreError, match="cannot reach the rate-limit Redis"):
        async with app.router.lifespan_context(app):
            pass


async def test_no_rate_limit_header_is_lost_or_doubled(limited: LimitedClient) -> None:
    async with limited(anonymous_reads_per_minute=5) as (c, _):
        response = await c.get("/v1/markets")
    assert response.headers.get_list("ratelimit-remaining") == ["4"]
    assert response.headers.get_list("x-request-id") == [response.headers["x-request-id"]]
    assert isinstance(response, httpx.Response)


async def test_streams_spend_their_own_budget_not_reads(limited: LimitedClient) -> None:
    """The real stream route: its requests never touch the reads budget; the connections have a
    per-IP budget of their own (spec 8). Refused streams are used so that the in-process client
    gets an answer (an open stream never ends)."""
    async with limited(anonymous_reads_per_minute=3, stream_connections_per_minute=2) as (c, _):
        streams = [
            await c.get("/v1/realtime/stream", params={"topics": "no-such-topic"}) for _ in range(3)
        ]
        reads = [await c.get("/v1/markets") for _ in range(4)]
    assert [r.status_code for r in streams] == [403, 403, 429]
    assert streams[2].json()["code"] == "RATE_LIMITED"
    assert "retry-after" in streams[2].headers
    assert [r.status_code for r in reads] == [200, 200, 200, 429]
    assert reads[0].headers["ratelimit-remaining"] == "2"  # no stream request was a read


async def test_a_developer_key_has_its_own_tier(limited: LimitedClient) -> None:
    """A developer key without a wallet credential: the developer tier, budgeted per key."""
    async with limited(anonymous_reads_per_minute=2, developer_reads_per_minute=4) as (c, _):
        owner = await sign_in(c, new_key())
        keys = []
        for name in ("one", "two"):
            created = await c.post(
                "/v1/developer/keys",
                json={"name": name, "scopes": ["market:read"]},
                headers=owner.headers,
            )
            assert created.status_code == 201, created.text
            keys.append({"x-svc-developer-key": created.json()["key"]})
        first = [await c.get("/v1/markets", headers=keys[0]) for _ in range(5)]
        second = await c.get("/v1/markets", headers=keys[1])
        anonymous = [await c.get("/v1/markets") for _ in range(3)]
    assert [r.status_code for r in first] == [200, 200, 200, 200, 429]
    assert first[0].headers["ratelimit-policy"] == '"reads";q=4;w=60'
    assert second.status_code == 200 and second.headers["ratelimit-remaining"] == "3"
    assert [r.status_code for r in anonymous] == [200, 200, 429]
