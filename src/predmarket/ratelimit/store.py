"""Where the counters live: in this process (:class:`MemoryStore`) or in Redis
(:class:`RedisStore`, shared by every worker that points at the same server).

Counters are fixed windows: one integer per ``(budget key, window number)``, incremented once per
request. The increment returns the new count, so of N concurrent requests against a budget of L
exactly L see a count ≤ L, whatever the interleaving.
"""

from __future__ import annotations

from typing import Protocol

from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import RedisError

#: What a failing Redis call raises: its own errors, socket errors, timeouts.
_REDIS_FAILURES = (RedisError, OSError, TimeoutError)

#: Longest wait for a free pooled connection under a burst (seconds).
POOL_WAIT_S = 5.0


class StoreUnavailable(Exception):
    """The store could not answer (connection refused, timeout, server error)."""


class Store(Protocol):
    """Counters of fixed windows. ``window`` is the window number; ``ttl_ms`` how long the
    counter must outlive the current moment (the rest of its window plus a margin)."""

    name: str

    async def incr(self, key: str, window: int, ttl_ms: int) -> int: ...

    async def get(self, key: str, window: int) -> int: ...


class MemoryStore:
    """Counters of the current window in a dict; a new window starts with an empty one, so
    memory holds one window's keys at most. Increments never suspend, which makes them atomic
    on the event loop."""

    name = "memory"

    def __init__(self) -> None:
        self._window = -1
        self._counts: dict[str, int] = {}

    def _current(self, window: int) -> dict[str, int]:
        # A clock stepping back a little stays in the newer window instead of reopening an old one.
        if window > self._window:
            self._window = window
            self._counts = {}
        return self._counts

    def add(self, key: str, window: int) -> int:
        """Count one more in ``window``; the new count."""
        counts = self._current(window)
        count = counts.get(key, 0) + 1
        counts[key] = count
        return count

    def count(self, key: str, window: int) -> int:
        if window < self._window:
            return 0
        return self._current(window).get(key, 0)

    async def incr(self, key: str, window: int, ttl_ms: int) -> int:  # noqa: ARG002
        return self.add(key, window)

    async def get(self, key: str, window: int) -> int:
        return self.count(key, window)

    def __len__(self) -> int:
        return len(self._counts)


# INCR and the expiry in one script: atomic, one round trip, and a counter never lives forever.
_INCR = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
"""


class RedisStore:
    """Counters in Redis under ``<prefix><budget key>:<window>``; each expires after its window."""

    name = "redis"

    def __init__(self, client: Redis, *, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._incr = client.register_script(_INCR)

    @classmethod
    async def connect(
        cls, url: str, *, prefix: str, timeout_s: float, max_connections: int
    ) -> RedisStore:
        """A store on ``url``, checked with a PING; :class:`StoreUnavailable` when unreachable.

        The pool blocks a request that finds every connection busy until one is free (up to
        :data:`POOL_WAIT_S`) instead of failing it: a burst is counted, not waved through.
        """
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=POOL_WAIT_S,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            health_check_interval=30,
        )
        store = cls(Redis.from_pool(pool), prefix=prefix)
        try:
            await store.ping()
        except StoreUnavailable:
            await store.aclose()
            raise
        return store

    async def ping(self) -> None:
        try:
            await self.client.ping()
        except _REDIS_FAILURES as e:
            raise StoreUnavailable(f"{type(e).__name__}: {e}") from e

    async def incr(self, key: str, window: int, ttl_ms: int) -> int:
        try:
            return int(await self._incr(keys=[f"{self.prefix}{key}:{window}"], args=[ttl_ms]))
        except _REDIS_FAILURES as e:
            raise StoreUnavailable(f"{type(e).__name__}: {e}") from e

    async def get(self, key: str, window: int) -> int:
        try:
            value = await self.client.get(f"{self.prefix}{key}:{window}")
        except _REDIS_FAILURES as e:
            raise StoreUnavailable(f"{type(e).__name__}: {e}") from e
        return int(value) if value is not None else 0

    async def aclose(self) -> None:
        await self.client.aclose()
