"""Indexer idle tick: what one poll that finds nothing new costs, against the number of markets.

Run: ``.venv/bin/python bench/bench_indexer_idle.py`` (a few minutes; ``--help`` for options).

Setup, not measured: a devnet chain with ``--markets`` markets created by the operator, each with
one resting order (so every market contract has logged events, as a traded market has), made
in-process; then that chain is served by ``predmarket devnet`` in a child process pinned to
CPU 0 (this process is pinned to CPU 1), and a real :class:`~predmarket.indexer.Indexer` indexes
all of it into a fresh SQLite database.

Measured:

1. ``Indexer.poll()`` with nothing new (the tick the background loop runs every
   ``poll_interval_seconds``): wall time per tick (median of ``--ticks``), this process's CPU
   time and the node process's CPU time per tick. With nothing new a tick touches no database:
   it is the registry's events request plus one ``GET /events/contract/{address}?start=n`` per
   market, ``concurrency`` (8) in flight.
2. The same node traffic for larger market counts: the tick's fetch (the service's
   ``NodeClient.contract_events`` at each market's count, through a semaphore of 8) over the
   created markets repeated ``--repeat`` times. A request costs the node the same whichever
   market it names (a map lookup and an empty page), so ``--markets 1000 --repeat 10`` is the
   node traffic of a 10,000-market tick without creating and indexing 10,000 markets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from predmarket.devnet import calls
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.contracts.registry import market_id, share_token_id
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Side
from predmarket.indexer import Indexer
from predmarket.node import NodeClient
from predmarket.store import migrate
from predmarket.store.engine import create_engine

SERVER_CPU, CLIENT_CPU = 0, 1
DAY_MS = 86_400_000
#: Resting orders one faucet-funded wallet can pay the deposits of (about 0.21 ALPH each).
ORDERS_PER_TRADER = 300


def make_chain(data_dir: Path, markets: int) -> list[str]:
    """``markets`` markets with one resting order each, on a devnet persisted in ``data_dir``."""
    node = DevnetNode.open(data_dir, faucet_cooldown_ms=0)
    try:
        config = node.config
        operator = DevnetWallet(config.operator_private_key)
        trader = DevnetWallet.generate()
        close_at = time.time_ns() // 1_000_000 + DAY_MS
        addresses = []
        for index in range(markets):
            if index % ORDERS_PER_TRADER == 0:  # each resting order holds an ALPH deposit
                trader = DevnetWallet.generate()
                node.faucet(trader.address)
            operator.call(
                node,
                calls.create_market(
                    config.registry_id, f"Market {index}?", "bench", close_at, b"{}"
                ),
            )
            mid = market_id(config.registry_id, index)
            ref = MarketRef(
                mid,
                config.collateral_token_id,
                share_token_id(mid, Outcome.YES),
                share_token_id(mid, Outcome.NO),
            )
            trader.call(node, calls.place_order(ref, Side.BUY, Outcome.YES, 100, 10**17))
            addresses.append(ref.address)
        return addresses
    finally:
        node.close()


@contextlib.contextmanager
def devnet_process(data_dir: Path) -> Iterator[tuple[str, int]]:
    """``predmarket devnet`` on a free port, pinned to ``SERVER_CPU``: (url, pid)."""
    args = ["devnet", "--port", "0", "--data-dir", str(data_dir), "--log-level", "warning"]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from predmarket.cli import app; app()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with contextlib.suppress(OSError):
        os.sched_setaffinity(proc.pid, {SERVER_CPU})
    try:
        assert proc.stdout is not None
        url = None
        while url is None:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("predmarket devnet exited before listening")
            url = next((w for w in line.split() if w.startswith("http://")), None)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    url: str, pid: int, addresses: list[str], db_url: str, ticks: int, repeats: list[int]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    engine = create_engine(db_url)
    try:
        async with NodeClient(url, timeout_s=60) as node:
            indexer = Indexer(engine, node)
            started = time.perf_counter()
            applied = await indexer.run_once()
            out["index_all_s"] = round(time.perf_counter() - started, 1)
            out["events_indexed"] = applied

            walls, ours, theirs = [], [], []
            for _ in range(ticks):
                cpu0, node0, t0 = time.process_time(), process_cpu_s(pid), time.perf_counter()
                assert await indexer.poll() == 0
                walls.append(time.perf_counter() - t0)
                ours.append(time.process_time() - cpu0)
                theirs.append(process_cpu_s(pid) - node0)
            out["idle_tick"] = {
                "markets": len(addresses),
                "requests": len(addresses) + 1,
                "wall_ms_median": round(statistics.median(walls) * 1000, 1),
                "indexer_cpu_ms_median": round(statistics.median(ours) * 1000, 1),
                "node_cpu_ms_median": round(statistics.median(theirs) * 1000, 1),
            }

            counts = dict.fromkeys(addresses, 1)  # every market logged one batch (its order)
            slots = asyncio.Semaphore(8)

            async def fetch(address: str) -> None:
                async with slots:
                    page = await node.contract_events(address, counts[address])
                assert not page.events

            out["fetch_only"] = []
            for repeat in repeats:
                targets = addresses * repeat
                cpu0, node0, t0 = time.process_time(), process_cpu_s(pid), time.perf_counter()
                await asyncio.gather(*(fetch(a) for a in targets))
                wall = time.perf_counter() - t0
                out["fetch_only"].append(
                    {
                        "markets": len(targets),
                        "wall_ms": round(wall * 1000, 1),
                        "requests_per_s": round(len(targets) / wall),
                        "client_cpu_ms": round((time.process_time() - cpu0) * 1000, 1),
                        "node_cpu_ms": round((process_cpu_s(pid) - node0) * 1000, 1),
                    }
                )
    finally:
        await engine.dispose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markets", type=int, default=1000, help="markets created and indexed")
    parser.add_argument("--ticks", type=int, default=5, help="idle polls timed")
    parser.add_argument(
        "--repeat", type=int, nargs="+", default=[1, 2, 5, 10], help="fetch-only multiples"
    )
    args = parser.parse_args()
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {CLIENT_CPU})
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "devnet"
        started = time.perf_counter()
        addresses = make_chain(data_dir, args.markets)
        setup_s = time.perf_counter() - started
        db_url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        migrate.upgrade(db_url)
        with devnet_process(data_dir) as (url, pid):
            result = asyncio.run(measure(url, pid, addresses, db_url, args.ticks, args.repeat))
    report = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "chain_setup_s": round(setup_s, 1),
        **result,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
