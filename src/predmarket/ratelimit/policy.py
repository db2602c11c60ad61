"""Who pays for a request: its tier, the identity its budget is kept under, and which budget.

- A wallet credential (cookie or bearer session, legacy API key) → the ``signed-in`` tier per
  wallet, or ``elevated`` when the wallet is on the allowlist. A groupless address is one wallet
  with or without its ``:N`` group suffix.
- A developer key presented without a wallet credential → the ``developer`` tier per key.
- Anything else (including a credential that did not verify) → ``anonymous`` per client IP.

The client IP is the socket peer; ``X-Forwarded-For`` is believed only when the peer is a
configured trusted proxy, read right to left up to the first address that is not one. IPv6
clients are counted per /64, the block one subscriber usually holds.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from starlette.types import Scope

from predmarket.auth.principal import STATE_KEY, Principal
from predmarket.settings import LimitSettings

READS: Final = "reads"
WRITES: Final = "writes"
STREAMS: Final = "streams"

#: Methods that spend the reads budget; every other method spends the writes budget.
READ_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
#: Never refused and never counted (orchestrators' probes); they still report the reads budget.
EXEMPT_PREFIX: Final = "/v1/health"
#: The realtime stream: its connections have their own per-IP budget (:data:`STREAMS`).
STREAM_PATH: Final = "/v1/realtime/stream"

_EXEMPT_CHILDREN: Final = EXEMPT_PREFIX + "/"
_XFF: Final = b"x-forwarded-for"
_PREFLIGHT: Final = b"access-control-request-method"

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class Tier:
    """A named pair of per-window budgets."""

    name: str
    reads: int
    writes: int


@dataclass(slots=True)
class Subject:
    """The tier of a request and the identity its counters are kept under."""

    tier: Tier
    identity: str


class Policy:
    """The tiers and the rules that map a request to a :class:`Subject` (no I/O)."""

    def __init__(self, limits: LimitSettings) -> None:
        self.anonymous = Tier(
            "anonymous", limits.anonymous_reads_per_minute, limits.anonymous_writes_per_minute
        )
        self.signed_in = Tier(
            "signed-in", limits.session_reads_per_minute, limits.session_writes_per_minute
        )
        self.elevated = Tier(
            "elevated", limits.elevated_reads_per_minute, limits.elevated_writes_per_minute
        )
        self.developer = Tier(
            "developer", limits.developer_reads_per_minute, limits.developer_writes_per_minute
        )
        self.stream_connections = limits.stream_connections_per_minute
        self.elevated_wallets = frozenset(wallet_identity(w) for w in limits.elevated_wallets)
        self.trusted = tuple(ipaddress.ip_network(p, strict=False) for p in limits.trusted_proxies)
        self._is_trusted = lru_cache(maxsize=4096)(self._trusted_uncached)

    def subject(self, scope: Scope) -> Subject:
        state = scope.get("state")
        principal = state.get(STATE_KEY) if state else None
        if principal is not None and isinstance(principal, Principal):
            if principal.wallet is not None:
                wallet = wallet_identity(principal.wallet)
                tier = self.elevated if wallet in self.elevated_wallets else self.signed_in
                return Subject(tier, f"wallet:{wallet}")
            if principal.developer is not None:
                return Subject(self.developer, f"developer:{principal.developer.key_id}")
        return Subject(self.anonymous, "ip:" + self.client_ip(scope))

    def client_ip(self, scope: Scope) -> str:
        """The address a request is counted under (see the module docstring)."""
        client = scope.get("client")
        peer: str = client[0] if client else "unknown"
        if self.trusted and self._is_trusted(peer):
            values = [v for k, v in scope.get("headers", ()) if k == _XFF]
            if values:
                hops = b",".join(values).decode("latin-1").split(",")
                for raw in reversed(hops):
                    hop = raw.strip()
                    if not _is_ip(hop):
                        break  # written by no proxy we trust: keep the last trusted hop
                    peer = hop
                    if not self._is_trusted(hop):
                        break
        return ip_identity(peer) if ":" in peer else peer

    def _trusted_uncached(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)


def kind_of(method: str) -> str:
    return READS if method in READ_METHODS else WRITES


def is_counted(scope: Scope) -> bool:
    """False for requests that never spend a budget: health probes, realtime stream requests
    (they spend :data:`STREAMS` through :func:`predmarket.ratelimit.stream_connection`) and CORS
    preflights (a browser sends them by itself, without credentials)."""
    path: str = scope["path"]
    if path == EXEMPT_PREFIX or path.startswith(_EXEMPT_CHILDREN):
        return False
    if path == STREAM_PATH:
        return False
    if scope["method"] == "OPTIONS":
        return not any(k == _PREFLIGHT for k, _ in scope.get("headers", ()))
    return True


def wallet_identity(address: str) -> str:
    """One budget per wallet: a groupless address counts the same with or without ``:N``."""
    return address.partition(":")[0]


@lru_cache(maxsize=65536)
def ip_identity(address: str) -> str:
    """IPv4 as is; IPv6 as its /64 (IPv4-mapped IPv6 as the IPv4 address)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


@lru_cache(maxsize=65536)
def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
