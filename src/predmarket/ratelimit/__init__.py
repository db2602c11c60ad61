"""Rate limits (spec part 8; docs/rate-limits.md).

- :class:`RateLimitMiddleware` counts every request against its caller's reads or writes budget
  and reports it in ``RateLimit-*`` headers; 429 ``RATE_LIMITED`` when spent.
- :func:`stream_connection`: the per-IP budget of realtime stream connections, for the stream
  route to depend on.
- :func:`running`: the lifespan part that connects the shared Redis store when ``redis_url`` is
  set (otherwise counters live in the process).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from predmarket.ratelimit.limiter import Decision, RateLimiter
from predmarket.ratelimit.middleware import RateLimitMiddleware, stream_connection
from predmarket.ratelimit.store import MemoryStore, RedisStore, StoreUnavailable
from predmarket.settings import LimitSettings, Settings


class RateLimitStoreError(RuntimeError):
    """The configured Redis cannot be reached at start-up."""


async def _connect(url: str, limits: LimitSettings) -> RedisStore:
    try:
        return await RedisStore.connect(
            url,
            prefix=limits.redis_key_prefix,
            timeout_s=limits.redis_timeout_seconds,
            max_connections=limits.redis_max_connections,
        )
    except StoreUnavailable as e:
        raise RateLimitStoreError(f"cannot reach the rate-limit Redis: {e}") from None


def check_redis(settings: Settings) -> None:
    """Raise :class:`RateLimitStoreError` when ``settings.redis_url`` is set and unreachable
    (for the command line, before it starts anything)."""
    url = settings.redis_url
    if not url:
        return

    async def ping() -> None:
        store = await _connect(url, settings.limits)
        await store.aclose()

    asyncio.run(ping())


@asynccontextmanager
async def running(limiter: RateLimiter, settings: Settings) -> AsyncIterator[None]:
    """Count in the Redis of ``settings.redis_url`` while the block runs (nothing without one).

    An unreachable Redis at start-up fails the start: a misconfigured URL must not go unnoticed.
    A Redis failing later is survived by counting in-process (see :mod:`.limiter`).
    """
    if not settings.redis_url:
        yield
        return
    store = await _connect(settings.redis_url, settings.limits)
    limiter.use_store(store)
    try:
        yield
    finally:
        limiter.use_store(None)
        await store.aclose()


__all__ = [
    "Decision",
    "MemoryStore",
    "RateLimitMiddleware",
    "RateLimitStoreError",
    "RateLimiter",
    "RedisStore",
    "check_redis",
    "running",
    "stream_connection",
]
