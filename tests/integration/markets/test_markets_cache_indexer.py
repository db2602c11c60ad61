"""The market list follows the real indexer: a devnet on a loopback port, the app with its
indexer, and markets created, traded and resolved through signed transactions. The list's own
poll period is longer than the test, so every update it shows came from the indexer's
notification after its commit."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from helpers.books import eventually
from predmarket.devnet import calls
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.contracts.registry import market_id, share_token_id
from predmarket.devnet.server import DevnetOptions, DevnetServer, run_devnet_in_thread
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Resolution, Side
from predmarket.markets.cache import MarketListCache
from predmarket.settings import IndexerSettings, MarketListSettings, Settings

pytestmark = pytest.mark.db

DAY_MS = 86_400_000
LOT = 10**17
#: Far longer than any test: only the indexer's notify() can make the list poll.
NEVER_MS = 600_000


@pytest.fixture
def devnet(tmp_path: Path) -> Iterator[DevnetServer]:
    server = run_devnet_in_thread(DevnetOptions(tmp_path / "devnet", faucet_cooldown_ms=0), port=0)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def app_settings(app_settings: Settings, devnet: DevnetServer) -> Settings:
    """The app on this module's database, indexing the devnet every 20 ms."""
    return app_settings.model_copy(
        update={
            "node_url": devnet.url,
            "indexer": IndexerSettings(poll_interval_seconds=0.02),
            "market_list": MarketListSettings(poll_interval_ms=NEVER_MS),
        }
    )


@pytest.fixture
async def api(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


def create_market(devnet: DevnetServer, question: str, tags: list[str]) -> MarketRef:
    node = devnet.node
    config = node.config
    state = node.contract_state(config.registry_address)
    index = int(state["mutFields"][0]["value"])  # type: ignore[index]
    close_ms = time.time_ns() // 1_000_000 + DAY_MS
    metadata = json.dumps({"tags": tags}).encode()
    operator = DevnetWallet(config.operator_private_key)
    operator.call(
        node, calls.create_market(config.registry_id, question, "weather", close_ms, metadata)
    )
    mid = market_id(config.registry_id, index)
    return MarketRef(
        mid,
        config.collateral_token_id,
        share_token_id(mid, Outcome.YES),
        share_token_id(mid, Outcome.NO),
    )


async def listed(api: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    r = await api.get("/v1/markets", params={"status": "all", **params})
    assert r.status_code == 200, r.text
    markets: list[dict[str, Any]] = r.json()["markets"]
    return markets


async def test_the_list_reflects_each_indexer_commit(
    api: httpx.AsyncClient, app: FastAPI, devnet: DevnetServer
) -> None:
    cache: MarketListCache = app.state.markets_cache
    assert cache.ready and await listed(api) == []

    m = create_market(devnet, "Will it snow in Oslo?", ["snow", "oslo"])

    async def created() -> bool:
        return [x["question"] for x in await listed(api, tags="snow,oslo")] == [
            "Will it snow in Oslo?"
        ]

    await eventually(created, timeout=15)
    [item] = await listed(api)
    assert item["tags"] == ["oslo", "snow"] and item["volume"] == "0"

    # A mint: a yes buy at 420 meets a no buy at 580.
    node = devnet.node
    buyers = [DevnetWallet.generate(), DevnetWallet.generate()]
    for w in buyers:
        node.faucet(w.address)
    buyers[0].call(node, calls.place_order(m, Side.BUY, Outcome.YES, 420, 3 * LOT))
    buyers[1].call(node, calls.place_order(m, Side.BUY, Outcome.NO, 580, 3 * LOT))

    async def traded() -> bool:
        [x] = await listed(api)
        return bool(x["tradeCount"] == 1 and x["volume"] == str(3 * LOT))

    await eventually(traded, timeout=15)
    [item] = await listed(api, sort="recently-traded")
    assert item["lastPriceYes"] == 420

    operator = DevnetWallet(node.config.operator_private_key)
    operator.call(node, calls.resolve(m, Resolution.YES))

    async def resolved() -> bool:
        found = await listed(api, status="resolved")
        return len(found) == 1 and found[0]["finalOutcome"] == "yes"

    await eventually(resolved, timeout=15)
    assert await listed(api, status="open") == []
