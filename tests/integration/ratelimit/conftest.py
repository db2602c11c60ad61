"""Fixtures of the rate-limit tests: the real app with low budgets, counting in this process or
in the real Redis at ``PREDMARKET_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``; an
unreachable Redis fails these tests, like an unreachable PostgreSQL). Each test counts under a
key prefix of its own and deletes only its own keys."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import httpx
import pytest
import redis
from fastapi import FastAPI

from predmarket.app import create_app
from predmarket.settings import LimitSettings, Settings

REDIS_URL = os.environ.get("PREDMARKET_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

#: 30 s into a one-minute window.
FIXED_NOW = 1_800_000_030.0

LimitedClient = Callable[..., AbstractAsyncContextManager[tuple[httpx.AsyncClient, FastAPI]]]


@pytest.fixture(scope="session")
def redis_url() -> str:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as e:
        pytest.fail(f"the rate-limit tests need Redis at {REDIS_URL}: {e}")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key namespace private to the test; its keys are deleted afterwards."""
    prefix = f"predmarket-test:rl:{secrets.token_hex(6)}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> str:
    """Each API test runs with the in-process counters and with the Redis ones."""
    mode: str = request.param
    return mode


@pytest.fixture
def limited(
    app_settings: Settings,
    migrated_url: str,
    store: str,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> LimitedClient:
    """``async with limited(anonymous_reads_per_minute=3, ...) as (client, app)``: the real app with
    these limits (everything else high), trusting 127.0.0.1 as a proxy so tests can pose as
    several clients with ``X-Forwarded-For``."""

    @asynccontextmanager
    async def make(**limits: object) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
        values: dict[str, object] = {
            "trusted_proxies": ["127.0.0.1"],
            **app_settings.limits.model_dump(exclude={"trusted_proxies"}),
        }
        values.update(limits)
        update: dict[str, object] = {
            "database_url": migrated_url,
            "limits": LimitSettings.model_validate(values),
        }
        if store == "redis":
            update["redis_url"] = request.getfixturevalue("redis_url")
            values["redis_key_prefix"] = request.getfixturevalue("redis_prefix")
            # These tests check exact shared counts, not outage detection: a loaded CI machine
            # must not pass for a Redis outage (which would count in-process instead).
            values.setdefault("redis_timeout_seconds", 30.0)
            update["limits"] = LimitSettings.model_validate(values)
        app = create_app(app_settings.model_copy(update=update))
        # A fixed moment mid-window: no test run straddles a window boundary.
        app.state.rate_limiter.clock = lambda: FIXED_NOW
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(
                app=app, raise_app_exceptions=False, client=("127.0.0.1", 40000)
            )
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                yield c, app
        fallbacks = [r for r in caplog.records if "counting in this process" in r.getMessage()]
        assert not fallbacks, "the Redis store failed during the test"

    return make
