"""The protocol configuration document."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from predmarket.kit.schemas import BaseSchema, example

_REGISTRY = "vFpZ1DF93x1xGHoXM8rsDBFjpcoSsCi5ZEuA5NG5UJGX"
_TOKEN = "tgx7VNFoP9DJiFMFgXXtafQZkUvyEdDHT9ryamHJYrjq"
_TOKEN_ID = "b2d71c116408ae47b931482a440f675dc9ea64453db24ee931dacd578cae9002"
_REGISTRY_ID = "c3a3d6d5b5b3c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7"

NETWORK_EXAMPLE = {
    "name": "devnet",
    "networkId": 4,
    "groups": 4,
    "nodeUrl": "http://127.0.0.1:22973",
    "devnet": True,
}
CONTRACTS_EXAMPLE: dict[str, Any] = {
    "marketRegistry": {"address": _REGISTRY, "contractId": _REGISTRY_ID},
    "collateralToken": {"address": _TOKEN, "contractId": _TOKEN_ID},
    "abi": {"version": 1, "contracts": ["…"]},
}
COLLATERAL_EXAMPLE = {"tokenId": _TOKEN_ID, "symbol": "PMC", "decimals": 18}
LIMITS_EXAMPLE: dict[str, Any] = {
    "rateLimits": {
        "anonymous": {"readsPerMinute": 60, "writesPerMinute": 10},
        "signedIn": {"readsPerMinute": 600, "writesPerMinute": 60},
        "elevated": {"readsPerMinute": 3000, "writesPerMinute": 300},
        "developerKey": {"readsPerMinute": 1200, "writesPerMinute": 120},
        "streamConnectionsPerMinute": 600,
    },
    "pageSizes": {
        "markets": {"default": 50, "max": 200},
        "marketOrders": {"default": 50, "max": 200},
        "marketFills": {"default": 50, "max": 200},
        "reputationHistory": {"default": 25, "max": 100},
    },
    "orderbookDepth": {"default": 20, "max": 100},
    "orders": {
        "minPrice": 1,
        "maxPrice": 999,
        "tickScale": 1000,
        "quantityStep": "10000000",
        "orderDepositAttoAlph": "200000000000000000",
        "typicalAttoAlphPerOrder": "210000000000000000",
        "ordersPerTransaction": 1,
    },
    "maxBodyBytes": 1048576,
}
FEES_EXAMPLE = {
    "tradingFeeBps": 250,
    "paidBy": "buyer",
    "base": "notional",
    "rounding": "up",
    "collateralRequired": "ceil(price * quantity * (10000 + tradingFeeBps) / (1000 * 10000))",
}
REALTIME_EXAMPLE: dict[str, Any] = {
    "available": False,
    "path": "/v1/realtime/stream",
    "protocolVersion": 1,
    "topics": [
        {"pattern": "market:{address}:orders", "access": "public"},
        {"pattern": "user:{address}:orders", "access": "session"},
    ],
    "heartbeatSeconds": 15,
    "deadAfterSeconds": 30,
    "replayRetentionSeconds": None,
    "cursorQuery": "lastEventId",
    "cursorHeader": "Last-Event-ID",
    "connectionsPerMinute": 600,
    "topicsPerConnection": {"anonymous": 8, "signedIn": 20},
}
ORDERBOOK_EXAMPLE = {
    "versionField": "version",
    "cursorField": "eventId",
    "cursorTopic": "market:{address}:orders",
    "emptySideTick": 0,
}


class ProtocolNetwork(BaseSchema):
    """The chain: check ``networkId`` against your wallet before signing."""

    model_config = example(NETWORK_EXAMPLE)

    name: str = Field(description="mainnet, testnet, devnet or the operator's name")
    network_id: int = Field(ge=0, le=255)
    groups: int = Field(ge=1)
    node_url: str = Field(description="a node REST URL to submit signed transactions to")
    devnet: bool = Field(description="a test chain with a faucet (POST {nodeUrl}/devnet/faucet)")


class ContractRef(BaseSchema):
    model_config = example({"address": _REGISTRY, "contractId": _REGISTRY_ID})

    address: str
    contract_id: str = Field(description="32 bytes of hex; a token's id is its contract id")


class ProtocolContracts(BaseSchema):
    """The protocol's contracts and their ABI (method indexes, arguments, approvals, events,
    error codes: ``docs/chain-abi.md``). Markets are sub-contracts of the registry."""

    model_config = example(CONTRACTS_EXAMPLE)

    market_registry: ContractRef
    collateral_token: ContractRef
    abi: dict[str, Any]


class ProtocolCollateral(BaseSchema):
    """The collateral token: amounts are base units of it (shares have the same decimals)."""

    model_config = example(COLLATERAL_EXAMPLE)

    token_id: str
    symbol: str | None
    decimals: int = Field(ge=0)


class RateLimit(BaseSchema):
    model_config = example({"readsPerMinute": 60, "writesPerMinute": 10})

    reads_per_minute: int
    writes_per_minute: int


class RateLimits(BaseSchema):
    """Spec part 8; ``RateLimit-*`` headers report the live counts."""

    model_config = example(LIMITS_EXAMPLE["rateLimits"])

    anonymous: RateLimit = Field(description="per client IP")
    signed_in: RateLimit = Field(description="per wallet (session or legacy API key)")
    elevated: RateLimit = Field(description="per allowlisted wallet")
    developer_key: RateLimit = Field(description="per developer key, without a wallet credential")
    stream_connections_per_minute: int = Field(description="realtime stream opens per client IP")


class PageSize(BaseSchema):
    model_config = example({"default": 50, "max": 200})

    default: int
    max: int


class OrderLimits(BaseSchema):
    """What an order must be; amounts are decimal strings of base units."""

    model_config = example(LIMITS_EXAMPLE["orders"])

    min_price: int
    max_price: int
    tick_scale: int = Field(description="ticks per share payout: 640 is 64 %")
    quantity_step: str = Field(description="quantities are positive multiples of it")
    order_deposit_atto_alph: str = Field(description="refundable, held while the order rests")
    typical_atto_alph_per_order: str = Field(description="deposit plus typical gas")
    orders_per_transaction: int


class ProtocolLimits(BaseSchema):
    model_config = example(LIMITS_EXAMPLE)

    rate_limits: RateLimits
    page_sizes: dict[str, PageSize] = Field(description="`limit` of each list")
    orderbook_depth: PageSize
    orders: OrderLimits
    max_body_bytes: int


class ProtocolFees(BaseSchema):
    """The trading fee: buyers pay it on the notional; it is inside ``collateralRequired``."""

    model_config = example(FEES_EXAMPLE)

    trading_fee_bps: int
    paid_by: Literal["buyer"]
    base: Literal["notional"]
    rounding: Literal["up"] = Field(description="every amount a buyer pays rounds up")
    collateral_required: str = Field(description="of a buy order, in base units")


class RealtimeTopic(BaseSchema):
    model_config = example({"pattern": "market:{address}:orders", "access": "public"})

    pattern: str
    access: Literal["public", "session"]


class TopicCaps(BaseSchema):
    model_config = example({"anonymous": 8, "signedIn": 20})

    anonymous: int
    signed_in: int


class RealtimeCapabilities(BaseSchema):
    """The Server-Sent Events stream (spec part 6). ``available`` is false until the
    deployment serves it; ``replayRetentionSeconds`` is null while not fixed."""

    model_config = example(REALTIME_EXAMPLE)

    available: bool
    path: str
    protocol_version: int
    topics: list[RealtimeTopic]
    heartbeat_seconds: float
    dead_after_seconds: float
    replay_retention_seconds: float | None
    cursor_query: str
    cursor_header: str
    connections_per_minute: int
    topics_per_connection: TopicCaps


class OrderbookCursor(BaseSchema):
    """How an order book snapshot meets the stream (``docs/books.md``): the snapshot's
    ``cursorField`` is the ``lastEventId`` to resume ``cursorTopic`` from; each later ``order``
    frame adds one to ``versionField``."""

    model_config = example(ORDERBOOK_EXAMPLE)

    version_field: str
    cursor_field: str
    cursor_topic: str
    empty_side_tick: int


class ProtocolConfig(BaseSchema):
    """Read it instead of hard-coding: the network, contracts, collateral, limits, fees and
    realtime capabilities of this deployment (spec 1.6)."""

    model_config = example(
        {
            "apiVersion": "0.1.0",
            "network": NETWORK_EXAMPLE,
            "contracts": CONTRACTS_EXAMPLE,
            "collateral": COLLATERAL_EXAMPLE,
            "limits": LIMITS_EXAMPLE,
            "fees": FEES_EXAMPLE,
            "realtime": REALTIME_EXAMPLE,
            "orderbook": ORDERBOOK_EXAMPLE,
        }
    )

    api_version: str
    network: ProtocolNetwork
    contracts: ProtocolContracts
    collateral: ProtocolCollateral
    limits: ProtocolLimits
    fees: ProtocolFees
    realtime: RealtimeCapabilities
    orderbook: OrderbookCursor
