"""Demo seeding against a real devnet over loopback HTTP: what lands on chain, and first start only.

The service-level view (the indexed markets, books and fills through the API) is in
``tests/e2e/test_serve.py``; here the chain itself is checked: each market's contract events and
resting orders, straight from the devnet.
"""

from __future__ import annotations

import asyncio
import stat
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from predmarket.demo.catalog import CATALOG, Activity
from predmarket.demo.seed import DemoError, marker_path, seed, seed_once, trading_plan
from predmarket.devnet import calls
from predmarket.devnet.genesis import DevnetConfig
from predmarket.devnet.server import DevnetOptions, DevnetServer, run_devnet_in_thread
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Market, Side


@pytest.fixture
def devnet(tmp_path: Path) -> Iterator[DevnetServer]:
    with run_devnet_in_thread(DevnetOptions(tmp_path / "devnet")) as server:
        yield server


def registry_count(devnet: DevnetServer) -> int:
    state = devnet.node.contract_state(devnet.node.config.registry_address)
    mut = state["mutFields"]
    assert isinstance(mut, list)
    return int(mut[0]["value"])


def test_every_plan_trades_as_designed_on_the_reference_exchange() -> None:
    """The plans are replayed on predmarket.exchange: the opening orders trade exactly once
    each way (mint, normal, merge) and the resting orders never cross anything."""
    for spec in CATALOG:
        market = Market()
        kinds: Counter[str] = Counter()
        for order in trading_plan(spec):
            result = market.place(
                order.wallet, order.side, order.outcome, order.price, order.quantity
            )
            kinds.update(t.kind.value for t in result.trades)
            assert not result.cancels, (spec.question, order)  # never a self-trade
        expected = {"normal": 1, "mint": 1, "merge": 1} if spec.activity is Activity.TRADED else {}
        assert dict(kinds) == expected, spec.question


def test_seeds_the_catalog_once(devnet: DevnetServer, tmp_path: Path) -> None:
    directory = tmp_path / "devnet"
    outcome = asyncio.run(seed_once(devnet.url, directory))
    result = outcome.result
    assert result is not None and outcome.skipped is None
    assert registry_count(devnet) == len(CATALOG)
    assert [m.question for m in result.markets] == [m.question for m in CATALOG]
    for spec, seeded in zip(CATALOG, result.markets, strict=True):
        plan = trading_plan(spec)
        assert seeded.orders == len(plan)
        resting = devnet.node.market_orders(seeded.address)
        if spec.activity is Activity.TRADED:
            assert dict(seeded.trades) == {"normal": 1, "mint": 1, "merge": 1}
            books = {(o["side"], o["outcome"]) for o in resting}
            assert books == {("buy", "yes"), ("sell", "yes"), ("buy", "no"), ("sell", "no")}
        elif spec.activity is Activity.BOOK:
            assert not seeded.trades
            assert {o["side"] for o in resting} == {Side.BUY.value}
        else:
            assert not seeded.trades and resting == []
    assert result.trades == Counter({"normal": 6, "mint": 6, "merge": 6})
    assert "8 markets in 5 categories" in result.summary()

    marker = marker_path(directory)
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600  # it holds the demo wallets' keys
    again = asyncio.run(seed_once(devnet.url, directory))
    assert again.result is None and again.skipped is not None
    assert again.skipped.startswith("already seeded")
    assert registry_count(devnet) == len(CATALOG)


def test_a_chain_that_has_markets_is_not_seeded(devnet: DevnetServer, tmp_path: Path) -> None:
    config = devnet.node.config
    operator = DevnetWallet(config.operator_private_key)
    operator.call(
        devnet.node,
        calls.create_market(
            config.registry_id, "Someone else's market?", "x", int(time.time() * 1000) + 10**7
        ),
    )
    outcome = asyncio.run(seed_once(devnet.url, tmp_path / "devnet"))
    assert outcome.result is None
    assert outcome.skipped == "the chain already has 1 market(s)"
    assert not marker_path(tmp_path / "devnet").exists()
    assert registry_count(devnet) == 1


def test_refuses_keys_of_another_devnet(devnet: DevnetServer, tmp_path: Path) -> None:
    other = DevnetConfig.generate(network_id=4, groups=4, genesis_timestamp=0)
    with pytest.raises(DemoError, match="not the one whose keys"):
        asyncio.run(seed(devnet.url, other, catalog=CATALOG[:1]))
    assert registry_count(devnet) == 0


def test_refuses_a_node_that_is_not_there() -> None:
    config = DevnetConfig.generate(network_id=4, groups=4, genesis_timestamp=0)
    with pytest.raises(DemoError, match=r"no node answers at http://127\.0\.0\.1:9 "):
        asyncio.run(seed("http://127.0.0.1:9", config, catalog=CATALOG[:1]))
