"""``predmarket serve`` as a user runs it: first start with the demo, restart, clean stop.

The service runs in a child process on free loopback ports (``service_process.py``); the tests
talk to it over real HTTP only.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_process import TEST_DATABASE_ENV, Node, ServiceProcess, eventually

from predmarket.demo.catalog import CATALOG, Activity
from predmarket.devnet.genesis import DevnetConfig
from predmarket.devnet.server import DevnetOptions, run_devnet_in_thread

pytestmark = pytest.mark.db

TRADED = [m for m in CATALOG if m.activity is Activity.TRADED]
QUIET = [m for m in CATALOG if m.activity is Activity.NONE]
EVENT_MARKETS = [m for m in CATALOG if m.event_slug is not None]


def get(api: str, path: str, **params: Any) -> Any:
    response = httpx.get(f"{api}{path}", params=params, timeout=10)
    assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text}"
    return response.json()


def all_markets(api: str) -> list[dict[str, Any]]:
    markets: list[dict[str, Any]] = get(api, "/v1/markets", status="all", limit=200)["markets"]
    return markets


def demo_indexed(api: str) -> list[dict[str, Any]] | None:
    """The markets once the indexer has every demo market and every demo trade."""
    markets = all_markets(api)
    if len(markets) < len(CATALOG):
        return None
    if sum(m["tradeCount"] for m in markets) < 3 * len(TRADED):
        return None
    return markets


def registry_market_count(node_url: str, data_dir: Path) -> int:
    config = DevnetConfig.load(data_dir / "devnet")
    assert config is not None
    node = Node(node_url)
    try:
        state = node.ok("GET", f"/contracts/{config.registry_address}/state")
    finally:
        node.close()
    return int(state["mutFields"][0]["value"])


def test_first_start_seeds_the_demo_and_a_restart_does_not(
    tmp_path: Path, serve_args: list[str]
) -> None:
    data_dir = tmp_path / "data"
    with ServiceProcess(serve_args) as first:
        first.wait_banner()
        assert first.banner["demo"].startswith(f"seeded {len(CATALOG)} markets"), first.banner
        assert "upgraded from empty" in first.banner["database"]
        assert "(embedded" in first.banner["node"]
        assert first.banner["data"].endswith(str(data_dir.resolve()))
        api = first.api_url

        markets = eventually(lambda: demo_indexed(api), "the demo markets indexed", 60)
        by_question = {m["question"]: m for m in markets}
        assert set(by_question) == {m.question for m in CATALOG}
        for spec in CATALOG:
            row = by_question[spec.question]
            assert row["category"] == spec.category
            assert sorted(row["tags"]) == sorted(spec.tags)
            assert row["eventSlug"] == spec.event_slug

        for spec in TRADED:
            address = by_question[spec.question]["marketAddress"]
            book = get(api, f"/v1/markets/{address}/orderbook")
            for outcome in ("yes", "no"):
                assert book[outcome]["bids"], (spec.question, outcome, book)
                assert book[outcome]["asks"], (spec.question, outcome, book)
            assert 0 < book["bestBidYes"] < book["bestAskYes"] < 1000
            fills = get(api, f"/v1/markets/{address}/fills")["fills"]
            assert sorted(f["kind"] for f in fills) == ["merge", "mint", "normal"]
            assert int(by_question[spec.question]["volume"]) > 0

        for spec in QUIET:
            row = by_question[spec.question]
            assert row["volume"] == "0"
            assert row["tradeCount"] == 0
            prices = get(api, f"/v1/markets/{row['marketAddress']}/prices")
            assert (prices["yesPrice"], prices["noPrice"], prices["priceTimestamp"]) == (
                0.5,
                0.5,
                0,
            )
            book = get(api, f"/v1/markets/{row['marketAddress']}/orderbook")
            assert book["yes"] == {"bids": [], "asks": []}
            assert book["no"] == {"bids": [], "asks": []}

        # The linked event group, the taxonomy and search see the seeded metadata.
        spec = EVENT_MARKETS[0]
        event = get(api, f"/v1/events/{spec.event_slug}")
        assert event["title"] == spec.event_title
        assert {m["question"] for m in event["markets"]} == {m.question for m in EVENT_MARKETS}
        categories = {c["name"]: c["marketCount"] for c in get(api, "/v1/categories")["categories"]}
        assert categories == {
            name: sum(m.category == name for m in CATALOG) for name in {m.category for m in CATALOG}
        }
        tags = {t["name"] for t in get(api, "/v1/tags", limit=200)["tags"]}
        assert tags == {t for m in CATALOG for t in m.tags}
        hits = get(api, "/v1/search", q="midterms")
        assert hits["results"], hits
        node_url = first.node_url
        assert registry_market_count(node_url, data_dir) == len(CATALOG)
    assert first.proc.returncode == 0, first.text()
    assert "predmarket stopped" in first.text()

    with ServiceProcess(serve_args) as second:
        second.wait_banner()
        assert second.banner["demo"].startswith("not seeded: already seeded"), second.banner
        assert "up to date" in second.banner["database"]
        markets = eventually(lambda: demo_indexed(second.api_url), "the markets after restart")
        assert len(markets) == len(CATALOG)
        assert registry_market_count(second.node_url, data_dir) == len(CATALOG)
    assert second.proc.returncode == 0, second.text()


def test_no_demo_serves_an_empty_market_list(serve_args: list[str]) -> None:
    with ServiceProcess([*serve_args, "--no-demo"]) as service:
        service.wait_banner()
        assert service.banner["demo"] == "off (--no-demo)"
        assert all_markets(service.api_url) == []
        ready = httpx.get(f"{service.api_url}/v1/health/ready", timeout=10)
        assert ready.status_code == 200, ready.text


def test_default_devnet_port_falls_back_to_a_free_one_when_taken(
    tmp_path: Path, database_args: list[str]
) -> None:
    blocker = socket.socket()
    try:
        try:
            blocker.bind(("127.0.0.1", 22973))
            blocker.listen(1)
        except OSError:
            pass  # something else holds it already: the fallback is exercised all the same
        args = ["--port", "0", "--data-dir", str(tmp_path / "data"), "--no-demo", *database_args]
        with ServiceProcess([*args, "--log-level", "warning"]) as service:
            service.wait_banner()
            assert not service.node_url.endswith(":22973"), service.banner
            assert get(service.node_url, "/infos/version") == {"version": "4.6.0"}
    finally:
        blocker.close()


def test_external_node_runs_no_devnet_and_skips_the_demo(
    tmp_path: Path, database_args: list[str]
) -> None:
    data_dir = tmp_path / "data"
    with run_devnet_in_thread(DevnetOptions(tmp_path / "external")) as devnet:
        args = [
            *("--port", "0", "--data-dir", str(data_dir), "--node-url", devnet.url),
            *("--log-level", "warning", *database_args),
        ]
        with ServiceProcess(args) as service:
            service.wait_banner()
            assert service.node_url == devnet.url
            assert "(external node)" in service.banner["node"]
            assert service.banner["demo"].startswith("skipped: the demo needs the devnet's keys")
            assert not (data_dir / "devnet").exists()
        assert service.proc.returncode == 0, service.text()


@pytest.mark.skipif(not os.environ.get(TEST_DATABASE_ENV), reason="--workers needs PostgreSQL")
def test_workers_share_one_postgresql_database(serve_args: list[str]) -> None:
    with ServiceProcess([*serve_args, "--workers", "2", "--no-demo"]) as service:
        service.wait_banner()
        assert any(line.endswith("serving, 2 workers") for line in service.output)
        for _ in range(20):  # connections spread over both workers
            assert get(service.api_url, "/v1/health")["status"] == "ok"
        assert all_markets(service.api_url) == []
    assert service.proc.returncode == 0, service.text()
