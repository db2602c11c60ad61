"""Devnet throughput: submitted-and-mined ``placeOrder`` transactions per second over HTTP.

Run: ``.venv/bin/python bench/bench_devnet.py`` (about a minute; add ``--help`` for options).

The devnet runs as ``predmarket devnet`` in a child process pinned to one core (CPU 0); this
process, the load generator, is pinned to the other. Setup, not measured: a market, ``--orders``
faucet-funded wallets, and for each one a ``placeOrder`` built with execute-script and signed.
Measured: every signed transaction is submitted over HTTP with ``--concurrency`` requests in
flight; right after its submit returns, a ``GET /transactions/status`` must say ``Confirmed``
(with automine the submit mines the block; with ``--block-interval`` the status is polled).

Reported: transactions per second (submitted and mined, wall clock), the devnet process's CPU
time per transaction (its single-core ceiling is 1 / that), and the latency from sending the
submit to seeing ``Confirmed`` (p50 / p99). Buys of YES and NO at random ticks 300..700 cross
often, so the run also exercises mint trades, refunds and resting orders.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from predmarket.alephium.address import contract_id_from_address, format_address
from predmarket.alephium.address import lockup_from_public_key as lockup_of
from predmarket.alephium.script import (
    Approvals,
    TxScript,
    ValByteVec,
    ValU256,
    build_contract_call,
    encode_script,
)
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id

SHARE = 10**18
#: Requests in flight during the (unmeasured) setup.
SETUP_CONCURRENCY = 16
SERVER_CPU = 0
CLIENT_CPU = 1


@dataclass
class Devnet:
    url: str
    data_dir: Path
    pid: int


@contextlib.contextmanager
def devnet_process(data_dir: Path, block_interval: float | None) -> Iterator[Devnet]:
    """``predmarket devnet`` on a free port, pinned to ``SERVER_CPU``."""
    args = ["devnet", "--port", "0", "--data-dir", str(data_dir), "--log-level", "warning"]
    if block_interval is not None:
        args += ["--block-interval", str(block_interval)]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from predmarket.cli import app; app()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with contextlib.suppress(OSError):
        os.sched_setaffinity(proc.pid, {SERVER_CPU})
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        url = None
        while url is None:
            line = lines.get(timeout=60)
            if line is None:
                raise RuntimeError("predmarket devnet exited before listening")
            url = next((w for w in line.split() if w.startswith("http://")), None)
        yield Devnet(url, data_dir, proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(10)
        if proc.stdout is not None:
            proc.stdout.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, url: str, concurrency: int) -> None:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self.http = httpx.AsyncClient(base_url=url, timeout=60, limits=limits)
        self.config: dict[str, Any] = {}

    async def ok(self, method: str, path: str, **kw: Any) -> Any:
        response = await self.http.request(method, path, **kw)
        if response.status_code != 200:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()

    def method_index(self, contract: str, method: str) -> int:
        (c,) = [c for c in self.config["abi"]["contracts"] if c["name"] == contract]
        (m,) = [m for m in c["methods"] if m["name"] == method]
        return int(m["index"])

    async def execute(self, private_key: bytes, script: TxScript, alph: int, tokens: Any) -> Any:
        body: dict[str, Any] = {
            "fromPublicKey": public_key_from_private(private_key).hex(),
            "bytecode": encode_script(script).hex(),
            "attoAlphAmount": str(alph),
        }
        if tokens:
            body["tokens"] = [{"id": t.hex(), "amount": str(a)} for t, a in tokens]
        return await self.ok("POST", "/contracts/unsigned-tx/execute-script", json=body)

    async def confirmed(self, tx_id: str) -> None:
        """Wait until ``tx_id`` is mined (at once with automine, a tick with an interval)."""
        while (await self.ok("GET", "/transactions/status", params={"txId": tx_id}))[
            "type"
        ] != "Confirmed":
            await asyncio.sleep(0.01)

    async def submit(self, build: dict[str, Any], private_key: bytes) -> Any:
        signature = sign_tx_id(private_key, bytes.fromhex(build["txId"]))
        body = {"unsignedTx": build["unsignedTx"], "signature": signature}
        return await self.ok("POST", "/transactions/submit", json=body)


async def gather_limited(limit: int, coros: list[Any]) -> list[Any]:
    semaphore = asyncio.Semaphore(limit)

    async def run(coro: Any) -> Any:
        async with semaphore:
            return await coro

    return await asyncio.gather(*(run(c) for c in coros))


async def setup(client: Client, data_dir: Path, orders: int, concurrency: int) -> list[Any]:
    """A market and ``orders`` funded wallets, each with one signed ``placeOrder``."""
    client.config = await client.ok("GET", "/devnet/config")
    amounts = client.config["abi"]["amounts"]
    operator = bytes.fromhex(
        json.loads((data_dir / "devnet.json").read_text())["operator"]["privateKey"]
    )
    registry = client.config["marketRegistry"]
    deposit = int(amounts["marketCreationDeposit"])
    script = build_contract_call(
        bytes.fromhex(registry["contractId"]),
        client.method_index("MarketRegistry", "createMarket"),
        [
            ValByteVec(b"Benchmark market"),
            ValByteVec(b"bench"),
            ValU256(time.time_ns() // 1_000_000 + 86_400_000),
            ValByteVec(b"{}"),
        ],
        caller_approvals=Approvals(deposit),
    )
    created = await client.submit(await client.execute(operator, script, deposit, ()), operator)
    await client.confirmed(created["txId"])
    events = await client.ok("GET", f"/events/contract/{registry['address']}", params={"start": 0})
    (event,) = [e for e in events["events"] if e["txId"] == created["txId"]]
    market_id = contract_id_from_address(event["fields"][1]["value"])

    keys = [generate_private_key() for _ in range(orders)]
    funded = await gather_limited(
        concurrency,
        [
            client.ok(
                "POST",
                "/devnet/faucet",
                json={"address": format_address(lockup_of(public_key_from_private(k)))},
            )
            for k in keys
        ],
    )
    await gather_limited(concurrency, [client.confirmed(f["txId"]) for f in funded])
    collateral = bytes.fromhex(client.config["collateralToken"]["tokenId"])
    order_deposit = int(amounts["orderDeposit"])
    place = client.method_index("Market", "placeOrder")
    rng = random.Random(7)

    async def build(key: bytes) -> Any:
        price = rng.randint(300, 700)
        quantity = rng.randint(1, 20) * SHARE
        lock = -(-price * quantity * 1025 // 1_000_000)  # price * quantity / 1000 * 1.025
        call = build_contract_call(
            market_id,
            place,
            [ValU256(0), ValU256(rng.randint(0, 1)), ValU256(price), ValU256(quantity)],
            caller_approvals=Approvals(order_deposit, ((collateral, lock),)),
        )
        built = await client.execute(key, call, order_deposit, ((collateral, lock),))
        signature = sign_tx_id(key, bytes.fromhex(built["txId"]))
        body = {"unsignedTx": built["unsignedTx"], "signature": signature}
        return built["txId"], json.dumps(body).encode()

    return await gather_limited(concurrency, [build(k) for k in keys])


class RawConnection:
    """A minimal keep-alive HTTP/1.1 client for the measured phase: the load generator must
    cost far less than the server it measures (httpx's async client costs ~1 ms a request)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, target: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        headers = await self.reader.readuntil(b"\r\n\r\n")
        status = int(headers[9:12])
        length = 0
        for line in headers.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()


async def measure(url: str, txs: list[Any], concurrency: int, poll: bool) -> Any:
    """Submit every tx and see it Confirmed; ``concurrency`` connections work in parallel."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    latencies: list[float] = []
    pending = iter(txs)

    async def worker() -> None:
        conn = RawConnection(host, int(port))
        try:
            for tx_id, body in pending:
                started = time.perf_counter()
                status, text = await conn.request("POST", "/transactions/submit", body)
                if status != 200:
                    raise RuntimeError(f"submit {tx_id}: {status} {text!r}")
                while True:
                    status, text = await conn.request("GET", f"/transactions/status?txId={tx_id}")
                    if status != 200:
                        raise RuntimeError(f"status {tx_id}: {status} {text!r}")
                    if json.loads(text)["type"] == "Confirmed":
                        break
                    if not poll:
                        raise RuntimeError(f"{tx_id} is not Confirmed right after its submit")
                    await asyncio.sleep(0.02)
                latencies.append(time.perf_counter() - started)
        finally:
            await conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, latencies


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def run(args: argparse.Namespace, devnet: Devnet) -> dict[str, Any]:
    client = Client(devnet.url, SETUP_CONCURRENCY)
    try:
        t0 = time.perf_counter()
        txs = await setup(client, devnet.data_dir, args.orders, SETUP_CONCURRENCY)
        setup_s = time.perf_counter() - t0
        cpu_before = cpu_seconds(devnet.pid)
        elapsed, latencies = await measure(
            devnet.url, txs, args.concurrency, poll=args.block_interval is not None
        )
        server_cpu = cpu_seconds(devnet.pid) - cpu_before
        market = (await client.ok("GET", "/devnet/tip"))["height"]
        return {
            "orders": len(txs),
            "concurrency": args.concurrency,
            "blockInterval": args.block_interval,
            "setupSeconds": round(setup_s, 2),
            "seconds": round(elapsed, 3),
            "txPerSecond": round(len(txs) / elapsed, 1),
            "serverCpuMsPerTx": round(server_cpu / len(txs) * 1000, 3),
            "serverCoreCeilingTxPerSecond": round(len(txs) / server_cpu, 1) if server_cpu else None,
            "latencyMsP50": round(statistics.median(latencies) * 1000, 2),
            "latencyMsP99": round(percentile(latencies, 99) * 1000, 2),
            "latencyMsMax": round(max(latencies) * 1000, 2),
            "tipHeight": market,
        }
    finally:
        await client.http.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=3000, help="transactions to measure")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument(
        "--block-interval", type=float, default=None, help="interval mining instead of automine"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {CLIENT_CPU})
    with (
        tempfile.TemporaryDirectory() as tmp,
        devnet_process(Path(tmp) / "devnet", args.block_interval) as devnet,
    ):
        result = asyncio.run(run(args, devnet))
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version[:6]}"
    if args.json:
        print(json.dumps(result))
        return
    mode = "automine" if args.block_interval is None else f"{args.block_interval}s blocks"
    print(f"devnet placeOrder over HTTP ({mode}, {result['machine']})")
    print(f"  {result['orders']} txs, {args.concurrency} in flight")
    print(f"  submitted and mined: {result['txPerSecond']} tx/s ({result['seconds']} s)")
    print(
        f"  devnet CPU: {result['serverCpuMsPerTx']} ms/tx"
        f" -> one-core ceiling {result['serverCoreCeilingTxPerSecond']} tx/s"
    )
    print(
        f"  submit -> Confirmed: p50 {result['latencyMsP50']} ms, p99 {result['latencyMsP99']} ms,"
        f" max {result['latencyMsMax']} ms"
    )


if __name__ == "__main__":
    main()
