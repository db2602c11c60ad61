"""Serving the devnet: the background-thread server, block intervals, and ``predmarket devnet``."""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from devnet_http import Devnet, Wallet

from predmarket.devnet.errors import NodeError
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.server import DevnetOptions, bind_socket, run_devnet_in_thread


def _wait_for(predicate: object, timeout_s: float = 10.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


class TestThreadServer:
    def test_owned_node_is_closed_on_stop(self, tmp_path: Path) -> None:
        with run_devnet_in_thread(DevnetOptions(tmp_path / "d")) as server:
            assert server.running and server.host == "127.0.0.1" and server.port > 0
            assert httpx.get(f"{server.url}/infos/chain-params").status_code == 200
        assert not server.running
        with pytest.raises(NodeError) as info:
            server.node.balance(server.node.config.faucet_address)
        assert info.value.status == 503
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{server.url}/infos/node", timeout=2)
        server.stop()  # idempotent

    def test_given_node_stays_open(self, tmp_path: Path) -> None:
        node = DevnetNode.open(tmp_path / "d")
        try:
            first = run_devnet_in_thread(node)
            first.stop()
            assert node.chain_params()["networkId"] == 4  # still usable
            second = run_devnet_in_thread(node)  # and servable again
            assert httpx.get(f"{second.url}/infos/node").status_code == 200
            second.stop()
        finally:
            node.close()

    def test_busy_port(self, tmp_path: Path) -> None:
        sock = bind_socket("127.0.0.1", 0)
        try:
            with pytest.raises(OSError):
                run_devnet_in_thread(DevnetOptions(tmp_path / "d"), sock.getsockname()[1])
        finally:
            sock.close()

    def test_network_id_and_groups(self, tmp_path: Path) -> None:
        with run_devnet_in_thread(DevnetOptions(tmp_path / "d", network_id=7, groups=2)) as s:
            params = httpx.get(f"{s.url}/infos/chain-params").json()
        assert params["networkId"] == 7 and params["groups"] == 2


class TestBlocks:
    def test_manual_mining(self, tmp_path: Path) -> None:
        node = DevnetNode.open(tmp_path / "d", automine=False, faucet_cooldown_ms=0)
        server = run_devnet_in_thread(node)
        dn = Devnet(server, tmp_path / "d")
        try:
            assert dn.config["automine"] is False
            wallet = Wallet.generate()
            tx = dn.faucet(wallet.address)["txId"]
            assert dn.status(tx) == {"type": "MemPooled"}
            assert dn.alph(wallet.address) == 0
            pending = dn.get_ok(f"/addresses/{wallet.address}/balance", mempool="true")
            assert int(pending["balance"]) > 0
            height = dn.tip()["height"]
            assert dn.post_ok("/devnet/mine", {}) == {"txs": 1}
            assert dn.status(tx)["type"] == "Confirmed"
            assert dn.tip()["height"] == height + 1
            assert dn.alph(wallet.address) == int(pending["balance"])
        finally:
            dn.close()
            server.stop()
            node.close()

    def test_block_interval(self, tmp_path: Path) -> None:
        options = DevnetOptions(tmp_path / "d", block_interval_s=0.2, faucet_cooldown_ms=0)
        with run_devnet_in_thread(options) as server:
            dn = Devnet(server, tmp_path / "d")
            assert dn.config["automine"] is False and dn.config["blockIntervalS"] == 0.2
            wallets = [Wallet.generate() for _ in range(3)]
            txs = [dn.faucet(w.address)["txId"] for w in wallets]
            _wait_for(lambda: all(dn.status(t)["type"] == "Confirmed" for t in txs))
            blocks = {dn.status(t)["blockHash"] for t in txs}
            assert 1 <= len(blocks) <= 3  # mined together or across ticks, never one per tx
            height = dn.tip()["height"]
            time.sleep(0.5)
            assert dn.tip()["height"] == height  # no empty blocks
            dn.close()


@contextlib.contextmanager
def _cli(*args: str) -> Iterator[tuple[subprocess.Popen[str], queue.Queue[str]]]:
    """``predmarket devnet ARGS`` in a child process; its output lines arrive on the queue."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from predmarket.cli import app; app()", "devnet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(10)
        assert proc.stdout is not None
        proc.stdout.close()


def _read_until(lines: queue.Queue[str], marker: str) -> str:
    seen: list[str] = []
    while not any(marker in line for line in seen):
        seen.append(lines.get(timeout=30))
    return "".join(seen)


class TestCli:
    @pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
    def test_runs_prints_and_stops_cleanly(self, tmp_path: Path, sig: signal.Signals) -> None:
        data_dir = tmp_path / "d"
        args = ["--port", "0", "--data-dir", str(data_dir), "--network-id", "9"]
        with _cli(*args, "--log-level", "warning") as (proc, lines):
            text = _read_until(lines, "data dir")
            url = next(word for word in text.split() if word.startswith("http://"))
            config = httpx.get(f"{url}/devnet/config").json()
            assert "network id 9" in text and "automine" in text
            for key in ("collateralToken", "marketRegistry"):
                assert config[key]["address"] in text
            assert httpx.get(f"{url}/infos/chain-params").json()["networkId"] == 9
            proc.send_signal(sig)
            assert proc.wait(timeout=30) == 0
            assert "predmarket devnet stopped" in _read_until(lines, "stopped")
        assert (data_dir / "devnet.json").exists()

    def test_refuses_a_data_dir_of_another_network(self, tmp_path: Path) -> None:
        DevnetNode.open(tmp_path / "d", network_id=4).close()
        args = ["--port", "0", "--data-dir", str(tmp_path / "d"), "--network-id", "5"]
        with _cli(*args) as (proc, lines):
            assert proc.wait(timeout=30) == 2
            assert "network id 4" in _read_until(lines, "error")
