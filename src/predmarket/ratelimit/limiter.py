"""The limiter: fixed windows over a :class:`~predmarket.ratelimit.store.Store`, with the answer
for each request (:class:`Decision`) and the ``RateLimit-*`` headers that report it.

Windows are aligned on the clock (window number = ``floor(now / window_seconds)``), so processes
sharing a Redis store count in the same windows without talking to each other. When the shared
store fails the limiter counts in this process instead (logged once per outage) and tries the
store again after ``redis_retry_seconds``: requests keep flowing under per-process limits rather
than failing with the store.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from starlette.types import Scope

from predmarket.ratelimit.policy import READS, STREAMS, WRITES, Policy, Subject
from predmarket.ratelimit.store import MemoryStore, Store, StoreUnavailable
from predmarket.settings import LimitSettings

log = logging.getLogger("predmarket.ratelimit")

Clock = Callable[[], float]
HeaderList = list[tuple[bytes, bytes]]


@dataclass(slots=True)
class Decision:
    """The state of one budget after a request: allowed or not, and what the headers report.
    Not frozen only because frozen dataclasses are slow to build; never changed after."""

    allowed: bool
    policy: str  # reads | writes | streams
    tier: str
    limit: int
    remaining: int
    reset: int  # whole seconds until the window ends (≥ 1)
    window: int  # window length in seconds

    def header_list(self) -> HeaderList:
        """``RateLimit-Limit``, ``-Remaining``, ``-Reset``, ``-Policy`` and the draft's
        combined ``RateLimit`` field, as raw ASGI headers."""
        limit, policy, name = _static_headers(self.policy, self.limit, self.window)
        remaining = b"%d" % self.remaining
        reset = b"%d" % self.reset
        return [
            (b"ratelimit-limit", limit),
            (b"ratelimit-remaining", remaining),
            (b"ratelimit-reset", reset),
            (b"ratelimit-policy", policy),
            (b"ratelimit", name + b";r=" + remaining + b";t=" + reset),
        ]

    def header_dict(self) -> dict[str, str]:
        return {k.decode("ascii"): v.decode("ascii") for k, v in self.header_list()}


@lru_cache(maxsize=256)
def _static_headers(policy: str, limit: int, window: int) -> tuple[bytes, bytes, bytes]:
    name = f'"{policy}"'
    return b"%d" % limit, f"{name};q={limit};w={window}".encode("ascii"), name.encode("ascii")


class RateLimiter:
    """Counts requests per :class:`Subject` and budget; one per app (``app.state.rate_limiter``).

    ``clock`` (seconds since the epoch) is injectable so tests move time instead of sleeping.
    """

    def __init__(
        self, limits: LimitSettings, *, store: Store | None = None, clock: Clock = time.time
    ) -> None:
        self.policy = Policy(limits)
        self.window = limits.window_seconds
        self.retry_s = limits.redis_retry_seconds
        self.clock = clock
        self.local = MemoryStore()
        self.shared: Store | None = store
        self._shared_down_until = 0.0
        self._window_ms = self.window * 1000

    @property
    def store_name(self) -> str:
        return self.shared.name if self.shared is not None else self.local.name

    def use_store(self, store: Store | None) -> None:
        """Count in ``store`` from now on (None: in this process)."""
        self.shared = store
        self._shared_down_until = 0.0

    def subject(self, scope: Scope) -> Subject:
        return self.policy.subject(scope)

    async def hit(self, subject: Subject, kind: str) -> Decision:
        """Count one request of ``kind`` (reads or writes) against ``subject``'s budget."""
        tier = subject.tier
        limit = tier.reads if kind == READS else tier.writes
        return await self._count(f"{tier.name}:{kind}:{subject.identity}", limit, kind, tier.name)

    async def peek(self, subject: Subject, kind: str = READS) -> Decision:
        """The budget as it stands, without counting (for requests that spend nothing)."""
        tier = subject.tier
        limit = tier.reads if kind == READS else tier.writes
        key = f"{tier.name}:{kind}:{subject.identity}"
        now = self.clock()
        window = int(now // self.window)
        shared = self.shared
        if shared is None or now < self._shared_down_until:
            count = self.local.count(key, window)
        else:
            try:
                count = await shared.get(key, window)
            except StoreUnavailable as e:
                self._shared_failed(shared, e, now)
                count = self.local.count(key, window)
            else:
                self._shared_answered(shared)
        return self._decision(count, limit, kind, tier.name, now, window, counted=False)

    async def stream_connection(self, scope: Scope) -> Decision:
        """Count one realtime stream connection against its client IP's budget."""
        ip = self.policy.client_ip(scope)
        return await self._count(
            f"ip:{STREAMS}:{ip}", self.policy.stream_connections, STREAMS, "ip"
        )

    async def _count(self, key: str, limit: int, kind: str, tier: str) -> Decision:
        now = self.clock()
        window = int(now // self.window)
        shared = self.shared
        # The in-process path stays synchronous: no suspension, so every increment is atomic.
        if shared is None or now < self._shared_down_until:
            count = self.local.add(key, window)
        else:
            # The counter outlives its window by a minute, so a slow clock elsewhere finds it.
            ttl_ms = (window + 1) * self._window_ms - int(now * 1000) + 60_000
            try:
                count = await shared.incr(key, window, ttl_ms)
            except StoreUnavailable as e:
                self._shared_failed(shared, e, now)
                count = self.local.add(key, window)
            else:
                self._shared_answered(shared)
        return self._decision(count, limit, kind, tier, now, window, counted=True)

    def _decision(
        self,
        count: int,
        limit: int,
        kind: str,
        tier: str,
        now: float,
        window: int,
        *,
        counted: bool,
    ) -> Decision:
        reset = math.ceil((window + 1) * self.window - now) or 1
        return Decision(
            count <= limit if counted else count < limit,
            kind,
            tier,
            limit,
            limit - count if count < limit else 0,
            reset,
            self.window,
        )

    def _shared_failed(self, shared: Store, error: StoreUnavailable, now: float) -> None:
        if self._shared_down_until == 0.0:
            log.warning(
                "rate-limit store %s failed (%s); counting in this process, retrying in %g s",
                shared.name,
                error,
                self.retry_s,
            )
        self._shared_down_until = now + self.retry_s

    def _shared_answered(self, shared: Store) -> None:
        if self._shared_down_until:
            log.warning("rate-limit store %s answers again", shared.name)
            self._shared_down_until = 0.0


__all__ = ["READS", "STREAMS", "WRITES", "Decision", "RateLimiter"]
