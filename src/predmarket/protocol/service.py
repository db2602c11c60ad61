"""The protocol configuration: chain facts asked of the node, the rest from this deployment.

The node part (network id, groups, the registry, the collateral token's id, symbol and decimals)
changes only with a redeploy, so the document is kept for ``protocol.config_ttl_seconds``; when
refreshing fails, the last good document is served rather than an error.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

import httpx
from pydantic import JsonValue

from predmarket import __version__
from predmarket.alephium.address import contract_address, contract_id_from_address
from predmarket.books.schemas import DEFAULT_DEPTH, MAX_DEPTH
from predmarket.devnet.abi import ORDER_DEPOSIT, abi_document
from predmarket.exchange import FEE_BPS, MAX_TICK, MIN_TICK, QUANTITY_STEP, TICK_SCALE
from predmarket.kit.errors import AppError, UpstreamError
from predmarket.node import NodeClient, NodeError
from predmarket.node.models import ContractState
from predmarket.orders.schemas import LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT
from predmarket.protocol.schemas import (
    ContractRef,
    OrderbookCursor,
    OrderLimits,
    PageSize,
    ProtocolCollateral,
    ProtocolConfig,
    ProtocolContracts,
    ProtocolFees,
    ProtocolLimits,
    ProtocolNetwork,
    RateLimit,
    RateLimits,
    RealtimeCapabilities,
    RealtimeTopic,
    TopicCaps,
)
from predmarket.settings import Settings
from predmarket.transactions.errors import upstream

log = logging.getLogger("predmarket.protocol")

REALTIME_PATH: Final = "/v1/realtime/stream"
#: Network ids of the public Alephium networks (and the docker devnet's).
KNOWN_NETWORKS: Final = {0: "mainnet", 1: "testnet", 4: "devnet"}
#: Spec 8: "roughly 0.21 native coin per order" — the 0.2 deposit plus typical gas.
TYPICAL_ATTO_ALPH_PER_ORDER: Final = 210_000_000_000_000_000
#: Spec 6.1's topics.
TOPICS: Final[tuple[tuple[str, Literal["public", "session"]], ...]] = (
    ("market:{address}:orders", "public"),
    ("market:{address}:fills", "public"),
    ("dispute:{marketId}", "public"),
    ("settings:banner", "public"),
    ("health:indexer", "public"),
    ("user:{address}:orders", "session"),
    ("user:{address}:fills", "session"),
    ("user:{address}:parlays", "session"),
    ("user:{address}:notifications", "session"),
    ("user:{address}:reveals:{marketId}", "session"),
    ("user:{address}:rewards:{marketId}", "session"),
)
#: After a failed refresh, the last document is served this long before the node is asked again.
STALE_RETRY_SECONDS: Final = 5.0
#: Spec 6.1: no frame for more than 30 s means the connection is dead.
DEAD_AFTER_SECONDS: Final = 30.0
# Registry and token fields (chain-abi.md): registry imm 1 is the collateral token's id;
# the token's imm 0 is its symbol, imm 2 its decimals.
_REGISTRY_COLLATERAL, _TOKEN_SYMBOL, _TOKEN_DECIMALS = 1, 0, 2


@dataclass(frozen=True)
class ChainFacts:
    network_id: int
    groups: int
    devnet: bool
    registry_address: str
    collateral_id: str
    collateral_symbol: str | None
    collateral_decimals: int


class ConfigCache:
    """The last document and when it goes stale (one per process, on ``app.state``)."""

    def __init__(self) -> None:
        self.document: ProtocolConfig | None = None
        self.expires_at = 0.0
        self.lock = asyncio.Lock()

    def fresh(self, now: float) -> ProtocolConfig | None:
        return self.document if self.document is not None and now < self.expires_at else None


def _field(state: ContractState, index: int, kind: str) -> str:
    try:
        val = state.imm_fields[index]
    except IndexError:
        raise UpstreamError(f"contract {state.address} has no field {index}") from None
    value: JsonValue = val.get("value")
    if val.get("type") != kind or not isinstance(value, str):
        raise UpstreamError(f"contract {state.address} field {index} is not a {kind}")
    return value


async def _devnet_registry(node: NodeClient, timeout_s: float) -> str | None:
    """The registry address a devnet node publishes at ``/devnet/config`` (None: not a devnet)."""
    try:
        async with httpx.AsyncClient(base_url=node.base_url, timeout=timeout_s) as http:
            response = await http.get("/devnet/config")
        doc = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    registry = doc.get("marketRegistry")
    address = registry.get("address") if isinstance(registry, dict) else None
    return address if isinstance(address, str) else None


async def chain_facts(node: NodeClient, settings: Settings) -> ChainFacts:
    """What only the chain knows: network, registry, collateral token."""
    try:
        params = await node.chain_params()
        devnet_registry = await _devnet_registry(node, settings.node.timeout_seconds)
        registry = settings.indexer.registry_address or devnet_registry
        if registry is None:
            raise UpstreamError(
                "the market registry is unknown: the node is not a predmarket devnet and "
                "PREDMARKET_INDEXER__REGISTRY_ADDRESS is not set"
            )
        collateral_id = _field(
            await node.contract_state(registry), _REGISTRY_COLLATERAL, "ByteVec"
        ).lower()
        token = await node.contract_state(contract_address(bytes.fromhex(collateral_id)))
    except NodeError as e:
        raise upstream(e, "describe the protocol's contracts") from e
    except ValueError as e:  # a registry field that is not hex
        raise UpstreamError(f"unexpected registry state: {e}") from None
    symbol_hex = _field(token, _TOKEN_SYMBOL, "ByteVec")
    decimals = _field(token, _TOKEN_DECIMALS, "U256")
    try:
        symbol: str | None = bytes.fromhex(symbol_hex).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        symbol = None
    return ChainFacts(
        network_id=params.network_id,
        groups=params.groups,
        devnet=devnet_registry is not None,
        registry_address=registry,
        collateral_id=collateral_id,
        collateral_symbol=symbol,
        collateral_decimals=int(decimals),
    )


def build_config(
    facts: ChainFacts, settings: Settings, *, node_url: str, realtime_available: bool
) -> ProtocolConfig:
    """The document from the chain facts and this deployment's settings."""
    limits, realtime = settings.limits, settings.realtime
    name = settings.protocol.network_name or KNOWN_NETWORKS.get(
        facts.network_id, f"network-{facts.network_id}"
    )
    return ProtocolConfig(
        api_version=__version__,
        network=ProtocolNetwork(
            name="devnet" if facts.devnet and not settings.protocol.network_name else name,
            network_id=facts.network_id,
            groups=facts.groups,
            node_url=settings.protocol.public_node_url or node_url,
            devnet=facts.devnet,
        ),
        contracts=ProtocolContracts(
            market_registry=ContractRef(
                address=facts.registry_address,
                contract_id=contract_id_from_address(facts.registry_address).hex(),
            ),
            collateral_token=ContractRef(
                address=contract_address(bytes.fromhex(facts.collateral_id)),
                contract_id=facts.collateral_id,
            ),
            abi=abi_document(),
        ),
        collateral=ProtocolCollateral(
            token_id=facts.collateral_id,
            symbol=facts.collateral_symbol,
            decimals=facts.collateral_decimals,
        ),
        limits=ProtocolLimits(
            rate_limits=RateLimits(
                anonymous=RateLimit(
                    reads_per_minute=limits.anonymous_reads_per_minute,
                    writes_per_minute=limits.anonymous_writes_per_minute,
                ),
                signed_in=RateLimit(
                    reads_per_minute=limits.session_reads_per_minute,
                    writes_per_minute=limits.session_writes_per_minute,
                ),
                elevated=RateLimit(
                    reads_per_minute=limits.elevated_reads_per_minute,
                    writes_per_minute=limits.elevated_writes_per_minute,
                ),
                developer_key=RateLimit(
                    reads_per_minute=limits.developer_reads_per_minute,
                    writes_per_minute=limits.developer_writes_per_minute,
                ),
                stream_connections_per_minute=limits.stream_connections_per_minute,
            ),
            page_sizes={
                # spec 8 (markets, reputation history) and this service's own lists
                "markets": PageSize(default=50, max=200),
                "marketOrders": PageSize(default=LIST_DEFAULT_LIMIT, max=LIST_MAX_LIMIT),
                "marketFills": PageSize(default=LIST_DEFAULT_LIMIT, max=LIST_MAX_LIMIT),
                "reputationHistory": PageSize(default=25, max=100),
            },
            orderbook_depth=PageSize(default=DEFAULT_DEPTH, max=MAX_DEPTH),
            orders=OrderLimits(
                min_price=MIN_TICK,
                max_price=MAX_TICK,
                tick_scale=TICK_SCALE,
                quantity_step=str(QUANTITY_STEP),
                order_deposit_atto_alph=str(ORDER_DEPOSIT),
                typical_atto_alph_per_order=str(TYPICAL_ATTO_ALPH_PER_ORDER),
                orders_per_transaction=1,
            ),
            max_body_bytes=settings.api.max_body_bytes,
        ),
        fees=ProtocolFees(
            trading_fee_bps=FEE_BPS,
            paid_by="buyer",
            base="notional",
            rounding="up",
            collateral_required=(
                "ceil(price * quantity * (10000 + tradingFeeBps) / (1000 * 10000)) "
                "= price * quantity / 1000 * 1.025, exact for valid quantities"
            ),
        ),
        realtime=RealtimeCapabilities(
            available=realtime_available,
            path=REALTIME_PATH,
            protocol_version=1,
            topics=[RealtimeTopic(pattern=p, access=a) for p, a in TOPICS],
            heartbeat_seconds=realtime.heartbeat_seconds,
            dead_after_seconds=DEAD_AFTER_SECONDS,
            replay_retention_seconds=realtime.retention_seconds,
            cursor_query="lastEventId",
            cursor_header="Last-Event-ID",
            connections_per_minute=limits.stream_connections_per_minute,
            topics_per_connection=TopicCaps(
                anonymous=realtime.topics_anonymous, signed_in=realtime.topics_signed_in
            ),
        ),
        orderbook=OrderbookCursor(
            version_field="version",
            cursor_field="eventId",
            cursor_topic="market:{address}:orders",
            empty_side_tick=0,
        ),
    )


def serves_realtime(paths: Iterable[str]) -> bool:
    return REALTIME_PATH in paths


async def protocol_config(
    node: NodeClient,
    settings: Settings,
    cache: ConfigCache,
    *,
    realtime_available: bool,
    now: float | None = None,
) -> ProtocolConfig:
    """The configuration document, from the cache while fresh."""
    clock = time.monotonic() if now is None else now
    document = cache.fresh(clock)
    if document is not None:
        return document
    async with cache.lock:
        document = cache.fresh(clock)
        if document is not None:
            return document
        try:
            facts = await chain_facts(node, settings)
        except AppError as e:
            if cache.document is not None:
                log.warning("protocol config: refresh failed (%s); serving the last one", e)
                cache.expires_at = clock + min(
                    STALE_RETRY_SECONDS, settings.protocol.config_ttl_seconds
                )
                return cache.document
            raise
        document = build_config(
            facts, settings, node_url=node.base_url, realtime_available=realtime_available
        )
        cache.document = document
        cache.expires_at = clock + settings.protocol.config_ttl_seconds
        return document
