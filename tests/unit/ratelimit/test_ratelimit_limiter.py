"""The limiter over the in-process store: exact counts, windows, headers, stream connections,
and the in-process fallback when a Redis store fails."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from redis.asyncio import Redis

from predmarket.ratelimit.limiter import RateLimiter
from predmarket.ratelimit.policy import READS, WRITES, Subject
from predmarket.ratelimit.store import MemoryStore, RedisStore
from predmarket.settings import LimitSettings

T0 = 1_700_000_040.0  # a window boundary for 60-second windows (divisible by 60)


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def limiter(clock: Clock, **limits: Any) -> RateLimiter:
    return RateLimiter(LimitSettings(**limits), clock=clock)


def anonymous(lim: RateLimiter, ip: str = "192.0.2.1") -> Subject:
    return Subject(lim.policy.anonymous, f"ip:{ip}")


async def test_exact_count_and_remaining() -> None:
    clock = Clock(T0 + 15.2)
    lim = limiter(clock, anonymous_reads_per_minute=3)
    who = anonymous(lim)
    decisions = [await lim.hit(who, READS) for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0, 0]
    assert {d.limit for d in decisions} == {3}
    assert {d.reset for d in decisions} == {45}  # 44.8 s left, rounded up
    assert decisions[0].tier == "anonymous"


async def test_concurrent_hits_are_exact() -> None:
    lim = limiter(Clock(), anonymous_reads_per_minute=37)
    who = anonymous(lim)
    results = await asyncio.gather(*(lim.hit(who, READS) for _ in range(100)))
    assert sum(d.allowed for d in results) == 37


async def test_reads_and_writes_are_separate_budgets() -> None:
    lim = limiter(Clock(), anonymous_reads_per_minute=2, anonymous_writes_per_minute=1)
    who = anonymous(lim)
    assert (await lim.hit(who, WRITES)).allowed
    assert not (await lim.hit(who, WRITES)).allowed
    assert (await lim.hit(who, READS)).allowed
    assert (await lim.hit(who, READS)).allowed
    assert not (await lim.hit(who, READS)).allowed


async def test_identities_are_separate_budgets() -> None:
    lim = limiter(Clock(), anonymous_reads_per_minute=1)
    assert (await lim.hit(anonymous(lim, "192.0.2.1"), READS)).allowed
    assert (await lim.hit(anonymous(lim, "192.0.2.2"), READS)).allowed
    assert not (await lim.hit(anonymous(lim, "192.0.2.1"), READS)).allowed


async def test_budget_resets_with_the_next_window_and_old_windows_are_dropped() -> None:
    clock = Clock(T0 + 59.5)
    lim = limiter(clock, anonymous_reads_per_minute=1)
    for i in range(50):
        await lim.hit(anonymous(lim, f"192.0.2.{i}"), READS)
    assert len(lim.local) == 50
    spent = await lim.hit(anonymous(lim, "192.0.2.1"), READS)
    assert not spent.allowed and spent.reset == 1
    clock.now = T0 + 60.0
    fresh = await lim.hit(anonymous(lim, "192.0.2.1"), READS)
    assert fresh.allowed and fresh.remaining == 0 and fresh.reset == 60
    assert len(lim.local) == 1  # the previous window's counters are gone


async def test_window_length_is_configurable() -> None:
    clock = Clock(T0)
    lim = limiter(clock, anonymous_reads_per_minute=1, window_seconds=2)
    who = anonymous(lim)
    assert (await lim.hit(who, READS)).allowed
    denied = await lim.hit(who, READS)
    assert not denied.allowed and denied.reset == 2 and denied.window == 2
    clock.now += 2
    assert (await lim.hit(who, READS)).allowed


async def test_peek_does_not_count() -> None:
    lim = limiter(Clock(), anonymous_reads_per_minute=2)
    who = anonymous(lim)
    assert (await lim.peek(who)).remaining == 2
    await lim.hit(who, READS)
    assert (await lim.peek(who)).remaining == 1
    assert (await lim.peek(who)).remaining == 1


async def test_headers() -> None:
    lim = limiter(Clock(T0 + 18), anonymous_reads_per_minute=60)
    decision = await lim.hit(anonymous(lim), READS)
    assert decision.header_dict() == {
        "ratelimit-limit": "60",
        "ratelimit-remaining": "59",
        "ratelimit-reset": "42",
        "ratelimit-policy": '"reads";q=60;w=60',
        "ratelimit": '"reads";r=59;t=42',
    }


async def test_stream_connections_per_ip_apart_from_reads() -> None:
    lim = limiter(Clock(), anonymous_reads_per_minute=1, stream_connections_per_minute=3)
    s = {"type": "http", "client": ("192.0.2.9", 1), "headers": []}
    results = [await lim.stream_connection(s) for _ in range(4)]
    assert [d.allowed for d in results] == [True, True, True, False]
    assert results[0].policy == "streams"
    assert results[0].header_dict()["ratelimit-policy"] == '"streams";q=3;w=60'
    # Reads untouched; another IP has its own stream budget.
    assert (await lim.hit(anonymous(lim, "192.0.2.9"), READS)).allowed
    other = {"type": "http", "client": ("192.0.2.10", 1), "headers": []}
    assert (await lim.stream_connection(other)).allowed


async def test_memory_store_ignores_a_clock_stepping_back() -> None:
    store = MemoryStore()
    assert await store.incr("k", 10, 0) == 1
    assert await store.incr("k", 9, 0) == 2  # stays in the newer window
    assert await store.get("k", 9) == 0
    assert await store.get("k", 10) == 2


async def test_a_failing_redis_falls_back_to_process_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    lim = limiter(clock, anonymous_reads_per_minute=2, redis_retry_seconds=5)
    # A real client of a port nobody listens on: connection refused.
    dead = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    lim.use_store(RedisStore(dead, prefix="test:"))
    who = anonymous(lim)
    with caplog.at_level(logging.WARNING, logger="predmarket.ratelimit"):
        results = [await lim.hit(who, READS) for _ in range(3)]
    assert [d.allowed for d in results] == [True, True, False]
    warnings = [r for r in caplog.records if "counting in this process" in r.getMessage()]
    assert len(warnings) == 1  # once per outage, not once per request
    assert lim.store_name == "redis"
    await dead.aclose()
