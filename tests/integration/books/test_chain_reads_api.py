"""GET /v1/transactions/{txId} and GET /v1/protocol/config against a real devnet over loopback
HTTP, the app's node client pointed at it; the indexer, when a test runs it, is the real one."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from helpers.books import eventually
from predmarket.alephium.address import contract_id_from_address
from predmarket.devnet import calls
from predmarket.devnet.abi import abi_document
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.contracts.registry import market_id, share_token_id
from predmarket.devnet.server import DevnetOptions, DevnetServer, run_devnet_in_thread
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Side
from predmarket.settings import IndexerSettings, NodeSettings, ProtocolSettings, Settings

pytestmark = pytest.mark.db

SHARE = 10**18
DAY_MS = 86_400_000
UNKNOWN_TX = "ab" * 32


def assert_error(r: httpx.Response, status: int, code: str, field: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == code and body["error"]["code"] == code
    assert body["details"]["requestId"] == body["requestId"] if status >= 500 else True
    if field is not None:
        assert field in [f["field"] for f in body["details"]["fields"]], body


@pytest.fixture
def devnet(tmp_path: Path) -> Iterator[DevnetServer]:
    with run_devnet_in_thread(DevnetOptions(tmp_path / "devnet", faucet_cooldown_ms=0)) as server:
        yield server


@pytest.fixture
def app_settings(app_settings: Settings, devnet: DevnetServer) -> Settings:
    return app_settings.model_copy(update={"node_url": devnet.url})


def create_market(devnet: DevnetServer, question: str = "Will it snow?") -> tuple[MarketRef, str]:
    node, config = devnet.node, devnet.node.config
    index = int(node.contract_state(config.registry_address)["mutFields"][0]["value"])  # type: ignore[index]
    operator = DevnetWallet(config.operator_private_key)
    close_ms = time.time_ns() // 1_000_000 + DAY_MS
    meta = json.dumps({"tags": ["weather"]}).encode()
    sent = operator.call(
        node, calls.create_market(config.registry_id, question, "weather", close_ms, meta)
    )
    mid = market_id(config.registry_id, index)
    ref = MarketRef(
        mid,
        config.collateral_token_id,
        share_token_id(mid, Outcome.YES),
        share_token_id(mid, Outcome.NO),
    )
    return ref, sent.tx_id.hex()


def funded_wallet(devnet: DevnetServer) -> DevnetWallet:
    wallet = DevnetWallet.generate()
    devnet.node.faucet(wallet.address)
    return wallet


class TestTransactionStatus:
    async def test_an_invalid_tx_id(self, client: httpx.AsyncClient) -> None:
        for bad in ("ab" * 31, "zz" * 32, "ab" * 33, "not-a-tx"):
            r = await client.get(f"/v1/transactions/{bad}")
            assert_error(r, 400, "INVALID_REQUEST", "path.txId")

    async def test_unknown_to_node_and_indexer(self, client: httpx.AsyncClient) -> None:
        r = await client.get(f"/v1/transactions/{UNKNOWN_TX}")
        assert r.status_code == 200, r.text
        assert r.json() == {
            "txId": UNKNOWN_TX,
            "status": "not-found",
            "node": {
                "status": "TxNotFound",
                "blockHash": None,
                "txIndex": None,
                "chainConfirmations": None,
                "fromGroupConfirmations": None,
                "toGroupConfirmations": None,
            },
            "indexer": {
                "indexed": False,
                "blockHash": None,
                "indexedAt": None,
                "markets": [],
                "orders": [],
                "fills": [],
            },
        }

    async def test_confirmed_but_not_indexed(
        self, client: httpx.AsyncClient, devnet: DevnetServer
    ) -> None:
        tx = str(devnet.node.faucet(DevnetWallet.generate().address)["txId"])
        r = await client.get(f"/v1/transactions/{tx.upper()}")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["txId"] == tx and body["status"] == "confirmed"
        node = body["node"]
        assert node["status"] == "Confirmed" and node["chainConfirmations"] >= 1
        assert len(node["blockHash"]) == 64 and node["txIndex"] == 0
        assert body["indexer"]["indexed"] is False


class TestTransactionStatusIndexed:
    @pytest.fixture
    def app_settings(self, app_settings: Settings) -> Settings:
        return app_settings.model_copy(
            update={"indexer": IndexerSettings(poll_interval_seconds=0.02)}
        )

    async def status_when_indexed(self, client: httpx.AsyncClient, tx: str) -> dict[str, Any]:
        body: dict[str, Any] = {}

        async def indexed() -> bool:
            nonlocal body
            r = await client.get(f"/v1/transactions/{tx}")
            assert r.status_code == 200, r.text
            body = r.json()
            return bool(body["status"] == "indexed")

        await eventually(indexed, timeout=20)
        return body

    async def test_create_place_and_mint(
        self, app: FastAPI, client: httpx.AsyncClient, devnet: DevnetServer
    ) -> None:
        ref, created_tx = create_market(devnet)
        address = ref.address
        created = await self.status_when_indexed(client, created_tx)
        assert created["node"]["status"] == "Confirmed"
        indexer = created["indexer"]
        assert indexer["markets"] == [address] and indexer["orders"] == indexer["fills"] == []
        assert indexer["blockHash"] == created["node"]["blockHash"]

        alice, bob = funded_wallet(devnet), funded_wallet(devnet)
        placed = alice.call(
            devnet.node, calls.place_order(ref, Side.BUY, Outcome.YES, 600, 2 * SHARE)
        ).tx_id.hex()
        body = await self.status_when_indexed(client, placed)
        assert body["indexer"]["markets"] == [address]
        assert body["indexer"]["orders"] == [{"marketAddress": address, "orderId": 1}]
        assert body["indexer"]["fills"] == []
        activity = await client.get(f"/v1/markets/{address}/activity", params={"txId": placed})
        assert activity.json()["indexed"] is True

        # bob's complementary buy of no at 400 mints one share pair with alice's resting bid
        minted = bob.call(
            devnet.node, calls.place_order(ref, Side.BUY, Outcome.NO, 400, SHARE)
        ).tx_id.hex()
        body = await self.status_when_indexed(client, minted)
        assert body["indexer"]["orders"] == [
            {"marketAddress": address, "orderId": 2},
            {"marketAddress": address, "orderId": 1},
        ]
        assert body["indexer"]["fills"] == [{"marketAddress": address, "tradeId": "1"}]

        # The book the API serves equals the contract's resting orders.
        resting = devnet.node.market_orders(address)
        assert [(o["orderId"], o["remaining"]) for o in resting] == [(1, str(SHARE))]

        async def book_shows_the_fill() -> bool:
            r = await client.get(f"/v1/markets/{address}/orderbook")
            return bool(
                r.json()["yes"]["bids"]
                == [{"price": 600, "totalQuantity": str(SHARE), "orderCount": 1}]
            )

        await eventually(book_shows_the_fill)
        book = (await client.get(f"/v1/markets/{address}/orderbook")).json()
        assert book["no"] == {"bids": [], "asks": []} and book["version"] == 3
        prices = (await client.get(f"/v1/markets/{address}/prices")).json()
        assert (prices["yesPrice"], prices["noPrice"]) == (0.6, 0.4)
        assert prices["priceTimestamp"] > 0
        fills = (await client.get(f"/v1/markets/{address}/fills")).json()["fills"]
        assert [(f["kind"], f["tradeId"], f["txId"]) for f in fills] == [("mint", "1", minted)]


class TestNodeFailures:
    @pytest.fixture
    def app_settings(self, app_settings: Settings) -> Settings:
        # Nothing listens on port 9; no retries so the test does not wait on backoff.
        return app_settings.model_copy(
            update={"node_url": "http://127.0.0.1:9", "node": NodeSettings(retries=0)}
        )

    async def test_node_down_is_a_502(self, client: httpx.AsyncClient) -> None:
        r = await client.get(f"/v1/transactions/{UNKNOWN_TX}")
        assert_error(r, 502, "UPSTREAM_ERROR")
        assert "127.0.0.1" not in r.text
        assert_error(await client.get("/v1/protocol/config"), 502, "UPSTREAM_ERROR")


@pytest.fixture
async def silent_node() -> AsyncIterator[str]:
    """A TCP server that accepts connections and never answers."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # until the client gives up and closes
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


class TestNodeTimeout:
    @pytest.fixture
    def app_settings(self, app_settings: Settings, silent_node: str) -> Settings:
        return app_settings.model_copy(
            update={"node_url": silent_node, "node": NodeSettings(timeout_seconds=0.2, retries=0)}
        )

    async def test_a_silent_node_is_upstream_timeout(self, client: httpx.AsyncClient) -> None:
        r = await client.get(f"/v1/transactions/{UNKNOWN_TX}")
        assert_error(r, 502, "UPSTREAM_TIMEOUT")
        assert_error(await client.get("/v1/protocol/config"), 502, "UPSTREAM_TIMEOUT")


class TestProtocolConfig:
    async def test_the_devnet_configuration(
        self, client: httpx.AsyncClient, devnet: DevnetServer, app_settings: Settings
    ) -> None:
        r = await client.get("/v1/protocol/config")
        assert r.status_code == 200, r.text
        assert r.headers["cache-control"] == "public, max-age=60"
        body = r.json()
        config = devnet.node.config
        assert body["apiVersion"] == "0.1.0"
        assert body["network"] == {
            "name": "devnet",
            "networkId": config.network_id,
            "groups": config.groups,
            "nodeUrl": devnet.url,
            "devnet": True,
        }
        contracts = body["contracts"]
        assert contracts["marketRegistry"] == {
            "address": config.registry_address,
            "contractId": config.registry_id.hex(),
        }
        assert contracts["collateralToken"] == {
            "address": config.collateral_token_address,
            "contractId": config.collateral_token_id.hex(),
        }
        assert contract_id_from_address(config.registry_address) == config.registry_id
        assert contracts["abi"] == json.loads(json.dumps(abi_document()))
        assert body["collateral"] == {
            "tokenId": config.collateral_token_id.hex(),
            "symbol": "PMC",
            "decimals": 18,
        }
        limits = body["limits"]
        rl = app_settings.limits
        assert limits["rateLimits"] == {
            "anonymous": {
                "readsPerMinute": rl.anonymous_reads_per_minute,
                "writesPerMinute": rl.anonymous_writes_per_minute,
            },
            "signedIn": {
                "readsPerMinute": rl.session_reads_per_minute,
                "writesPerMinute": rl.session_writes_per_minute,
            },
            "elevated": {
                "readsPerMinute": rl.elevated_reads_per_minute,
                "writesPerMinute": rl.elevated_writes_per_minute,
            },
            "developerKey": {
                "readsPerMinute": rl.developer_reads_per_minute,
                "writesPerMinute": rl.developer_writes_per_minute,
            },
            "streamConnectionsPerMinute": rl.stream_connections_per_minute,
        }
        assert limits["orderbookDepth"] == {"default": 20, "max": 100}
        assert limits["pageSizes"]["markets"] == {"default": 50, "max": 200}
        assert limits["pageSizes"]["marketOrders"] == {"default": 50, "max": 200}
        assert limits["orders"] == {
            "minPrice": 1,
            "maxPrice": 999,
            "tickScale": 1000,
            "quantityStep": "10000000",
            "orderDepositAttoAlph": "200000000000000000",
            "typicalAttoAlphPerOrder": "210000000000000000",
            "ordersPerTransaction": 1,
        }
        fees = body["fees"]
        assert (fees["tradingFeeBps"], fees["paidBy"], fees["rounding"]) == (250, "buyer", "up")
        realtime = body["realtime"]
        assert realtime["available"] is False  # no stream route in this app
        assert realtime["heartbeatSeconds"] == 15 and realtime["deadAfterSeconds"] == 30
        assert realtime["topicsPerConnection"] == {"anonymous": 8, "signedIn": 20}
        assert {"pattern": "market:{address}:orders", "access": "public"} in realtime["topics"]
        assert {"pattern": "user:{address}:fills", "access": "session"} in realtime["topics"]
        assert body["orderbook"] == {
            "versionField": "version",
            "cursorField": "eventId",
            "cursorTopic": "market:{address}:orders",
            "emptySideTick": 0,
        }

    async def test_cached_while_the_node_is_away(
        self, client: httpx.AsyncClient, devnet: DevnetServer
    ) -> None:
        first = await client.get("/v1/protocol/config")
        assert first.status_code == 200
        devnet.stop()
        again = await client.get("/v1/protocol/config")
        assert again.status_code == 200 and again.json() == first.json()


class TestProtocolConfigSettings:
    @pytest.fixture
    def app_settings(self, app_settings: Settings, devnet: DevnetServer) -> Settings:
        return app_settings.model_copy(
            update={
                "protocol": ProtocolSettings(
                    network_name="staging", public_node_url="https://node.example"
                ),
                "indexer": IndexerSettings(
                    enabled=False, registry_address=devnet.node.config.registry_address
                ),
            }
        )

    async def test_names_and_urls_from_settings(self, client: httpx.AsyncClient) -> None:
        network = (await client.get("/v1/protocol/config")).json()["network"]
        assert network["name"] == "staging" and network["nodeUrl"] == "https://node.example"


class TestProtocolConfigWrongRegistry:
    @pytest.fixture
    def app_settings(self, app_settings: Settings, devnet: DevnetServer) -> Settings:
        wrong = devnet.node.config.collateral_token_address  # a contract, not a registry
        return app_settings.model_copy(
            update={"indexer": IndexerSettings(enabled=False, registry_address=wrong)}
        )

    async def test_is_a_502(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.get("/v1/protocol/config"), 502, "UPSTREAM_ERROR")
