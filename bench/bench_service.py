"""Service benchmarks: API throughput on loopback, build-tx latency, and the read queries at scale.

Run: ``.venv/bin/python bench/bench_service.py [http|db|all]`` (``--help`` for options; ``all``
takes about five minutes). Results: ``docs/benchmarks-service.md``.

**http** — ``predmarket serve`` (SQLite, or PostgreSQL with ``--postgres URL``) runs in a child
process pinned to CPU 0 with its embedded devnet, indexer and demo markets; this process, the load
generator, is pinned to CPU 1. Setup (not measured): ``--extra-markets`` more markets created by the
devnet operator, and a bench market whose books hold 40 price levels per side on both outcomes,
all through real transactions, then waiting for the indexer. Measured with a raw-socket HTTP/1.1
keep-alive load generator (asyncio protocols on uvloop, ``--connections`` connections, every
response read and its status checked): requests/s and latency p50/p99 of ``GET /v1/health``
(the trivial JSON endpoint), ``GET /v1/markets/{bench}/orderbook`` and ``GET /v1/markets?limit=50``,
each endpoint's rate also as a ratio to the health endpoint's in the same run. Then the p50/p99
latency of ``POST /v1/tx/markets/{bench}/orders`` (sequential requests; each one asks the node's
``execute-script`` and decodes and checks the unsigned transaction).

**db** — for SQLite and (with ``--postgres``) PostgreSQL: a migrated database filled with
``--markets`` synthetic markets (categories, tags, volumes, …) and ``--orders`` orders (a tenth of
them on one hot market; 30 % open, the rest filled or cancelled), then ANALYZE. The app runs in
this process (indexer off) and the requests go through it in-process (ASGI, one at a time):
several ``GET /v1/markets`` variants (sorts, filters, a cursor page), ``…/orderbook`` (served from
the in-memory books, which load every open order at start — that load is timed too), and the
database side of a book: a market's open orders (``books.queries.load_books``, what rebuilds a
book) and its order list (``GET /v1/markets/{m}/orders``). p50/p99 per query. Every SQL statement
those requests run is captured and EXPLAINed; a full scan of ``market``, ``order``, ``fill`` or
``market_tag`` is reported as a failure.
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
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

SERVER_CPU = 0
CLIENT_CPU = 1
SHARE = 10**18

# The benchmarks measure throughput, not refusals: budgets no run reaches (the rate-limit
# middleware still counts every request).
HIGH_LIMIT = 10**9
HIGH_LIMITS_ENV = {
    f"PREDMARKET_LIMITS__{tier}_{kind}_PER_MINUTE": str(HIGH_LIMIT)
    for tier in ("ANONYMOUS", "SESSION", "ELEVATED", "DEVELOPER")
    for kind in ("READS", "WRITES")
}

# -- helpers ---------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores, {platform.machine()}, Python {sys.version.split()[0]}"


@contextlib.contextmanager
def postgres_database(base_url: str) -> Iterator[str]:
    """A fresh PostgreSQL database for one run, dropped afterwards."""
    import asyncpg
    from sqlalchemy.engine import make_url

    base = make_url(base_url)
    admin = base.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"predmarket_bench_{os.getpid()}_{secrets.token_hex(3)}"

    async def admin_sql(statement: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(admin_sql(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# -- the load generator ------------------------------------------------------------------------


@dataclass
class LoadStats:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    measure_from: float = 0.0
    stop_at: float = 0.0


class _LoadConnection(asyncio.Protocol):
    """One keep-alive connection sending the same GET back to back, one in flight."""

    def __init__(self, request: bytes, stats: LoadStats, done: asyncio.Future[None]) -> None:
        self.request = request
        self.stats = stats
        self.done = done
        self.buffer = bytearray()
        self.sent = 0.0
        self.transport: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # uvloop's transports are not asyncio.Transport subclasses
        self._send()

    def _send(self) -> None:
        assert self.transport is not None
        self.sent = time.perf_counter()
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        length = 0
        head = bytes(self.buffer[:end]).lower()
        at = head.find(b"content-length:")
        if at >= 0:
            stop = head.find(b"\r\n", at)
            length = int(head[at + 15 : stop if stop >= 0 else None])
        total = end + 4 + length
        if len(self.buffer) < total:
            return
        now = time.perf_counter()
        if self.buffer[9:12] != b"200":
            self.stats.errors += 1
        if self.sent >= self.stats.measure_from:
            self.stats.latencies.append(now - self.sent)
        del self.buffer[:total]
        if now < self.stats.stop_at:
            self._send()
        else:
            assert self.transport is not None
            self.transport.close()
            if not self.done.done():
                self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        if not self.done.done():
            self.done.set_result(None)


@dataclass(frozen=True)
class LoadResult:
    path: str
    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p99_ms: float
    server_cpu: float
    client_cpu: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


async def _load(
    host: str, port: int, path: str, connections: int, warmup: float, duration: float, pid: int
) -> LoadResult:
    loop = asyncio.get_running_loop()
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    stats = LoadStats()
    start = time.perf_counter()
    stats.measure_from = start + warmup
    stats.stop_at = stats.measure_from + duration
    done = [loop.create_future() for _ in range(connections)]
    for future in done:
        await loop.create_connection(
            lambda f=future: _LoadConnection(request, stats, f), host, port
        )
    await asyncio.sleep(max(0.0, stats.measure_from - time.perf_counter()))
    server0, client0 = cpu_seconds(pid), time.process_time()
    await asyncio.sleep(max(0.0, stats.stop_at - time.perf_counter()))
    server1, client1 = cpu_seconds(pid), time.process_time()
    await asyncio.gather(*done)
    lat = stats.latencies
    return LoadResult(
        path=path,
        requests=len(lat),
        seconds=duration,
        errors=stats.errors,
        p50_ms=statistics.median(lat) * 1000,
        p99_ms=percentile(lat, 99) * 1000,
        server_cpu=(server1 - server0) / duration,
        client_cpu=(client1 - client0) / duration,
    )


def load(url: str, path: str, args: argparse.Namespace, pid: int) -> LoadResult:
    import uvloop

    host, port = url.removeprefix("http://").rsplit(":", 1)
    return uvloop.run(
        _load(host, int(port), path, args.connections, args.warmup, args.duration, pid)
    )


# -- the service in a child process ------------------------------------------------------------


@dataclass
class Service:
    proc: subprocess.Popen[str]
    api_url: str
    node_url: str
    data_dir: Path


@contextlib.contextmanager
def service_process(data_dir: Path, database_url: str | None) -> Iterator[Service]:
    args = ["serve", "--port", "0", "--devnet-port", "0", "--data-dir", str(data_dir)]
    args += ["--log-level", "warning"]
    if database_url:
        args += ["--database-url", database_url]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
    env.update(HIGH_LIMITS_ENV)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from predmarket.cli import app; app()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        preexec_fn=lambda: os.sched_setaffinity(0, {SERVER_CPU}),
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        banner: dict[str, str] = {}
        while "demo" not in banner:
            line = lines.get(timeout=300)
            if line is None:
                raise RuntimeError("predmarket serve exited before serving")
            print("   ", line.rstrip())
            name, _, value = line.strip().partition(" ")
            if line.startswith("  "):
                banner[name] = value.strip()
        service = Service(proc, banner["API"].split()[0], banner["node"].split()[0], data_dir)
        for _ in range(300):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{service.api_url}/v1/health").status_code == 200:
                    break
            time.sleep(0.1)
        yield service
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Chain:
    """Real transactions for the setup: the devnet operator and faucet-funded wallets."""

    def __init__(self, service: Service) -> None:
        from predmarket.devnet.genesis import DevnetConfig

        self.node = httpx.Client(base_url=service.node_url, timeout=60)
        config = DevnetConfig.load(service.data_dir / "devnet")
        assert config is not None
        self.config = config

    def ok(self, method: str, path: str, **kw: Any) -> Any:
        response = self.node.request(method, path, **kw)
        if response.status_code != 200:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()

    def wallet(self) -> bytes:
        from predmarket.alephium.address import address_from_public_key
        from predmarket.alephium.signing import generate_private_key, public_key_from_private

        key = generate_private_key()
        address = address_from_public_key(public_key_from_private(key))
        self.confirmed(self.ok("POST", "/devnet/faucet", json={"address": address})["txId"])
        return key

    def confirmed(self, tx_id: str) -> None:
        while self.ok("GET", "/transactions/status", params={"txId": tx_id})["type"] != (
            "Confirmed"
        ):
            time.sleep(0.01)

    def call(self, key: bytes, call: Any) -> str:
        from predmarket.alephium.script import encode_script
        from predmarket.alephium.signing import public_key_from_private, sign_tx_id

        body: dict[str, Any] = {
            "fromPublicKey": public_key_from_private(key).hex(),
            "bytecode": encode_script(call.script).hex(),
            "attoAlphAmount": str(call.alph),
        }
        if call.tokens:
            body["tokens"] = [{"id": t.hex(), "amount": str(a)} for t, a in call.tokens]
        built = self.ok("POST", "/contracts/unsigned-tx/execute-script", json=body)
        signature = sign_tx_id(key, bytes.fromhex(built["txId"]))
        sent = self.ok(
            "POST",
            "/transactions/submit",
            json={"unsignedTx": built["unsignedTx"], "signature": signature},
        )
        self.confirmed(sent["txId"])
        return str(sent["txId"])

    def create_market(self, question: str, category: str, tags: list[str]) -> Any:
        from predmarket.devnet import calls

        registry = self.config.registry_address
        start = int(self.ok("GET", f"/events/contract/{registry}/current-count"))
        metadata = json.dumps({"tags": tags}).encode()
        close = int(time.time() * 1000) + 30 * 86_400_000
        call = calls.create_market(self.config.registry_id, question, category, close, metadata)
        tx_id = self.call(self.config.operator_private_key, call)
        page = self.ok("GET", f"/events/contract/{registry}", params={"start": start})
        (event,) = [e for e in page["events"] if e["txId"] == tx_id]
        return calls.MarketRef.from_event(event["fields"], self.config.collateral_token_id)


def setup_chain(service: Service, extra_markets: int) -> tuple[Any, bytes]:
    """Extra markets and the bench market with deep books; returns it and a funded key."""
    from predmarket.devnet import calls
    from predmarket.exchange import Outcome, Side

    chain = Chain(service)
    rng = random.Random(5)
    categories = ["crypto", "politics", "sports", "science", "economics", "culture"]
    tags = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    for i in range(extra_markets):
        chain.create_market(
            f"Bench question number {i}: will it happen?",
            rng.choice(categories),
            rng.sample(tags, 2),
        )
    bench = chain.create_market("The benchmark market with deep books", "bench", ["bench"])
    a, b, c, d = (chain.wallet() for _ in range(4))
    buy, sell, yes, no = Side.BUY, Side.SELL, Outcome.YES, Outcome.NO
    chain.call(a, calls.place_order(bench, buy, yes, 500, 100 * SHARE))
    chain.call(b, calls.place_order(bench, buy, no, 500, 100 * SHARE))  # mints 100 pairs
    for i in range(40):
        chain.call(a, calls.place_order(bench, sell, yes, 600 + i, 2 * SHARE))
        chain.call(b, calls.place_order(bench, sell, no, 600 + i, 2 * SHARE))
        chain.call(c, calls.place_order(bench, buy, yes, 300 + i, 3 * SHARE))
        chain.call(d, calls.place_order(bench, buy, no, 300 + i, 3 * SHARE))
    return bench, chain.wallet()


def wait_indexed(api: str, markets: int, bench: str) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        listed = httpx.get(f"{api}/v1/markets", params={"status": "all", "limit": 200}).json()
        book = httpx.get(f"{api}/v1/markets/{bench}/orderbook", params={"depth": 100})
        if len(listed.get("markets", [])) >= markets and book.status_code == 200:
            body = book.json()
            if all(len(body[o][s]) == 40 for o in ("yes", "no") for s in ("bids", "asks")):
                return
        time.sleep(0.2)
    raise RuntimeError("the indexer did not catch up")


async def _build_latency(api: str, bench: str, key: bytes, count: int) -> list[float]:
    from predmarket.alephium.address import address_from_public_key
    from predmarket.alephium.signing import public_key_from_private, sign_message

    public_key = public_key_from_private(key)
    address = address_from_public_key(public_key)
    # Builds need the signer's own session: sign in once, outside the timed requests.
    challenge = httpx.post(f"{api}/v1/auth/challenge", json={"address": address}).json()
    session = httpx.post(
        f"{api}/v1/auth/session",
        json={
            "address": address,
            "publicKey": public_key.hex(),
            "signature": sign_message(key, challenge["challenge"]),
            "keyType": "default",
            "issueToken": True,
        },
    ).json()
    token = session["token"]
    host, port = api.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    latencies = []
    try:
        for i in range(count):
            body = json.dumps(
                {
                    "signerAddress": address,
                    "signerPublicKey": public_key.hex(),
                    "side": "buy",
                    "outcome": "yes" if i % 2 else "no",
                    "price": 100 + i % 150,
                    "quantity": str((1 + i % 7) * SHARE),
                }
            ).encode()
            head = (
                f"POST /v1/tx/markets/{bench}/orders HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: Bearer {token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            started = time.perf_counter()
            writer.write(head.encode() + body)
            headers = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in headers.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            payload = await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            if headers[9:12] != b"200":
                raise RuntimeError(f"build failed: {headers[:12]!r} {payload[:300]!r}")
    finally:
        writer.close()
    return latencies


BASELINE_APP = """
import socket, sys, uvicorn
from fastapi import FastAPI
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""


def run_baseline(args: argparse.Namespace) -> dict[str, Any]:
    """Calibration: a bare FastAPI app (one trivial route, no middleware) on the same core."""
    proc = subprocess.Popen(
        [sys.executable, "-c", BASELINE_APP],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {SERVER_CPU}),
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            time.sleep(0.05)
        result = load(url, "/health", args, proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(
        f"== calibration: bare FastAPI trivial route {result.rps:8.0f} req/s"
        f"  p50 {result.p50_ms:.2f} ms  p99 {result.p99_ms:.2f} ms"
        f"  server cpu {result.server_cpu:.2f}  client cpu {result.client_cpu:.2f}"
    )
    return {
        "rps": round(result.rps),
        "p50Ms": round(result.p50_ms, 2),
        "p99Ms": round(result.p99_ms, 2),
        "serverCpu": round(result.server_cpu, 2),
        "clientCpu": round(result.client_cpu, 2),
    }


def run_http(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    backend = "postgresql" if database_url else "sqlite"
    print(f"== http ({backend}) ==")
    with tempfile.TemporaryDirectory() as tmp, service_process(Path(tmp), database_url) as svc:
        t0 = time.perf_counter()
        bench, key = setup_chain(svc, args.extra_markets)
        wait_indexed(svc.api_url, 8 + args.extra_markets + 1, bench.address)
        print(f"   setup (real transactions, indexed): {time.perf_counter() - t0:.1f} s")
        paths = {
            "health": "/v1/health",
            "orderbook": f"/v1/markets/{bench.address}/orderbook",
            "markets": "/v1/markets?limit=50",
        }
        for name, path in paths.items():  # each returns 200 with a real body
            response = httpx.get(f"{svc.api_url}{path}")
            assert response.status_code == 200, (name, response.text)
            print(f"   {name}: {len(response.content)} bytes")
        # What the service burns with no requests at all (the indexer's polls of every
        # market's events, the books' outbox polls, the devnet): it shares the core.
        cpu0 = cpu_seconds(svc.proc.pid)
        time.sleep(args.duration)
        idle_cpu = (cpu_seconds(svc.proc.pid) - cpu0) / args.duration
        print(f"   idle server cpu ({8 + args.extra_markets + 1} markets): {idle_cpu:.2f}")
        rounds: list[dict[str, LoadResult]] = []
        for _ in range(args.rounds):
            rounds.append({n: load(svc.api_url, p, args, svc.proc.pid) for n, p in paths.items()})
        build = asyncio.run(_build_latency(svc.api_url, bench.address, key, args.builds))
    out: dict[str, Any] = {"backend": backend, "idleCpu": round(idle_cpu, 2), "rounds": []}
    for i, r in enumerate(rounds, 1):
        health = r["health"].rps
        row = {}
        for name, result in r.items():
            row[name] = {
                "rps": round(result.rps),
                "ratio": round(result.rps / health, 3),
                "p50Ms": round(result.p50_ms, 2),
                "p99Ms": round(result.p99_ms, 2),
                "errors": result.errors,
                "serverCpu": round(result.server_cpu, 2),
                "clientCpu": round(result.client_cpu, 2),
            }
            print(
                f"   round {i} {name:9} {result.rps:8.0f} req/s  ratio {result.rps / health:5.2f}"
                f"  p50 {result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms"
                f"  server cpu {result.server_cpu:4.2f}  client cpu {result.client_cpu:4.2f}"
                f"  errors {result.errors}"
            )
        out["rounds"].append(row)
    out["buildTx"] = {
        "count": len(build),
        "p50Ms": round(statistics.median(build) * 1000, 2),
        "p99Ms": round(percentile(build, 99) * 1000, 2),
    }
    print(
        f"   build tx ({len(build)} sequential): p50 {out['buildTx']['p50Ms']} ms,"
        f" p99 {out['buildTx']['p99Ms']} ms"
    )
    return out


# -- the database at scale ------------------------------------------------------------------------

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CATEGORIES = [f"category-{i:02d}" for i in range(20)]
TAGS = [f"tag-{i:02d}" for i in range(30)]
CHUNK = 20_000


def _hex(n: int, salt: str) -> str:
    import hashlib

    return hashlib.blake2b(f"{salt}{n}".encode(), digest_size=32).hexdigest()


async def fill_database(url: str, markets: int, orders: int, seed: int = 1) -> dict[str, Any]:
    """Synthetic markets, tags and orders, in chunks; returns the market addresses."""
    from sqlalchemy import insert, text

    import predmarket.store.tables  # noqa: F401
    from predmarket.alephium.address import contract_address, format_address
    from predmarket.alephium.lockup import P2PKH
    from predmarket.store.engine import create_engine
    from predmarket.store.tables.market import market
    from predmarket.store.tables.market_tag import category, market_tag, tag
    from predmarket.store.tables.order import order

    rng = random.Random(seed)
    owners = [format_address(P2PKH(bytes.fromhex(_hex(i, "owner")))) for i in range(1000)]
    addresses = [contract_address(bytes.fromhex(_hex(i, "market"))) for i in range(markets)]
    engine = create_engine(url)
    category_counts: dict[str, list[int]] = {}
    tag_counts: dict[str, list[int]] = {}
    try:
        rows, tag_rows = [], []
        for i in range(markets):
            resolved = rng.random() < 0.2
            traded = rng.random() < 0.7
            cat = rng.choice(CATEGORIES)
            tags = rng.sample(TAGS, rng.randint(1, 3))
            category_counts.setdefault(cat, [0, 0])
            category_counts[cat][0] += 1
            category_counts[cat][1] += 0 if resolved else 1
            for t in tags:
                tag_counts.setdefault(t, [0, 0])
                tag_counts[t][0] += 1
                tag_counts[t][1] += 0 if resolved else 1
                tag_rows.append({"market_id": i + 1, "tag": t})
            bid = rng.randint(1, 499)
            rows.append(
                {
                    "id": i + 1,
                    "market_address": addresses[i],
                    "contract_id": _hex(i, "market"),
                    "registry_address": "bench-registry",
                    "registry_index": i,
                    "yes_token_id": _hex(i, "yes"),
                    "no_token_id": _hex(i, "no"),
                    "question": f"Will synthetic event number {i} happen before the deadline?",
                    "category": cat,
                    "creator": rng.choice(owners[:50]),
                    "close_at": T0 + timedelta(days=3650),
                    "metadata": {"tags": tags},
                    "created_at": T0 + timedelta(minutes=i),
                    "created_block_hash": _hex(i, "block"),
                    "created_tx_id": _hex(i, "tx"),
                    "status": "resolved" if resolved else "open",
                    "resolution": "yes" if resolved else None,
                    "resolved_at": T0 + timedelta(days=10) if resolved else None,
                    "volume": rng.randrange(10**24) if traded else 0,
                    "trade_count": rng.randint(1, 500) if traded else 0,
                    "last_trade_at": T0 + timedelta(minutes=i + 5) if traded else None,
                    "last_fill_id": i + 1 if traded else 0,
                    "last_price_yes": rng.randint(1, 999) if traded else None,
                    "best_bid_yes": bid,
                    "best_ask_yes": bid + rng.randint(1, 400),
                    "best_bid_no": rng.randint(1, 499),
                    "best_ask_no": rng.randint(500, 999),
                    "book_version": rng.randint(0, 10_000),
                    "updated_at": T0,
                }
            )
        async with engine.begin() as conn:
            for start in range(0, len(rows), CHUNK):
                await conn.execute(insert(market), rows[start : start + CHUNK])
            for start in range(0, len(tag_rows), CHUNK):
                await conn.execute(insert(market_tag), tag_rows[start : start + CHUNK])
            await conn.execute(
                insert(category),
                [
                    {"name": n, "market_count": c[0], "open_market_count": c[1], "updated_at": T0}
                    for n, c in category_counts.items()
                ],
            )
            await conn.execute(
                insert(tag),
                [
                    {"name": n, "market_count": c[0], "open_market_count": c[1], "updated_at": T0}
                    for n, c in tag_counts.items()
                ],
            )
        hot = 1
        next_chain_id = [0] * (markets + 1)
        for start in range(0, orders, CHUNK):
            chunk = []
            for n in range(start, min(orders, start + CHUNK)):
                market_id = hot if rng.random() < 0.1 else rng.randint(1, markets)
                next_chain_id[market_id] += 1
                side = rng.choice(("buy", "sell"))
                price = rng.randint(1, 499) if side == "buy" else rng.randint(501, 999)
                quantity = rng.randint(1, 50) * SHARE
                roll = rng.random()
                status = "open" if roll < 0.3 else "filled" if roll < 0.8 else "cancelled"
                open_ = status == "open"
                chunk.append(
                    {
                        "market_id": market_id,
                        "chain_order_id": next_chain_id[market_id],
                        "owner": rng.choice(owners),
                        "side": side,
                        "outcome": rng.choice(("yes", "no")),
                        "price": price,
                        "quantity": quantity,
                        "remaining": quantity if open_ else 0,
                        "locked_collateral": price * quantity // 1000 if open_ else 0,
                        "locked_shares": 0,
                        "deposit": 2 * 10**17 if open_ else 0,
                        "status": status,
                        "cancel_reason": "owner" if status == "cancelled" else None,
                        "placed_tx_id": _hex(n, "otx"),
                        "placed_block_hash": _hex(n // 4, "oblock"),
                        "closed_tx_id": None if open_ else _hex(n, "ctx"),
                        "created_at": T0 + timedelta(seconds=n),
                        "updated_at": T0 + timedelta(seconds=n),
                        "closed_at": None if open_ else T0 + timedelta(seconds=n + 60),
                    }
                )
            async with engine.begin() as conn:
                await conn.execute(insert(order), chunk)
        async with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execute(
                    text("SELECT setval(pg_get_serial_sequence('market', 'id'), :n)"),
                    {"n": markets},
                )
        async with engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.exec_driver_sql("ANALYZE")
    finally:
        await engine.dispose()
    return {"addresses": addresses, "hot": addresses[hot - 1]}


BIG_TABLES = ("market", "order", "fill", "market_tag")


def scans_of(plan: str, dialect: str) -> list[str]:
    """Full scans of the big tables in a plan (an ordered walk of an index is fine)."""
    bad = []
    for line in plan.splitlines():
        text = line.strip().lstrip("|-` ")
        for table in BIG_TABLES:
            if dialect == "postgresql":
                full = f"Seq Scan on {table} " in text + " " or f'Seq Scan on "{table}"' in text
            else:
                full = text.split(" ")[:2] == ["SCAN", table] and "USING" not in text
            if full:
                bad.append(text)
    return bad


async def _run_db(url: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from sqlalchemy import event

    from predmarket.app import create_app
    from predmarket.books import queries as book_queries
    from predmarket.settings import IndexerSettings, LimitSettings, Settings

    t0 = time.perf_counter()
    data = await fill_database(url, args.markets, args.orders)
    load_s = time.perf_counter() - t0
    print(f"   loaded {args.markets} markets and {args.orders} orders in {load_s:.0f} s")
    settings = Settings(
        data_dir=tmp / "app",
        database_url=url,
        node_url="http://127.0.0.1:9",
        demo=False,
        indexer=IndexerSettings(enabled=False),
        secret_key="bench-secret-0123456789-0123456789-0123456789",
        limits=LimitSettings(
            anonymous_reads_per_minute=HIGH_LIMIT, anonymous_writes_per_minute=HIGH_LIMIT
        ),
    )
    app = create_app(settings)
    rng = random.Random(3)
    results: dict[str, Any] = {"loadSeconds": round(load_s, 1)}
    t0 = time.perf_counter()
    async with app.router.lifespan_context(app):
        results["startupSeconds"] = round(time.perf_counter() - t0, 2)
        print(f"   app start (books cache loads every open order): {results['startupSeconds']} s")
        engine = app.state.engine
        captured: list[tuple[str, Any]] = []
        capturing = [False]

        def capture(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
            # The books cache's background poll of the outbox is not the request's.
            if capturing[0] and "FROM outbox WHERE outbox.id >" not in statement:
                captured.append((statement, params))

        event.listen(engine.sync_engine, "before_cursor_execute", capture)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            first = (await client.get("/v1/markets", params={"limit": 50})).json()
            cursor = first["pagination"]["nextCursor"]
            addresses: list[str] = data["addresses"]
            hot: str = data["hot"]

            def m() -> str:
                return rng.choice(addresses)

            cases: dict[str, Callable[[], tuple[str, dict[str, Any]]]] = {
                "markets (default: open, newest)": lambda: ("/v1/markets", {"limit": 50}),
                "markets cursor page 2": lambda: ("/v1/markets", {"limit": 50, "cursor": cursor}),
                "markets sort=volume": lambda: ("/v1/markets", {"limit": 50, "sort": "volume"}),
                "markets sort=recently-traded": lambda: (
                    "/v1/markets",
                    {"limit": 50, "sort": "recently-traded"},
                ),
                "markets status=all sort=best-bid-yes asc": lambda: (
                    "/v1/markets",
                    {"limit": 50, "status": "all", "sort": "best-bid-yes", "order": "asc"},
                ),
                "markets category=": lambda: (
                    "/v1/markets",
                    {"limit": 50, "category": rng.choice(CATEGORIES)},
                ),
                "markets tags=a,b": lambda: (
                    "/v1/markets",
                    {"limit": 50, "tags": ",".join(rng.sample(TAGS, 2))},
                ),
                "markets minVolume=": lambda: (
                    "/v1/markets",
                    {"limit": 50, "sort": "volume", "minVolume": str(10**23)},
                ),
                "orderbook (memory)": lambda: (f"/v1/markets/{m()}/orderbook", {}),
                "orderbook hot market (memory)": lambda: (f"/v1/markets/{hot}/orderbook", {}),
                "orders of a market": lambda: (f"/v1/markets/{m()}/orders", {"limit": 50}),
                "orders of the hot market": lambda: (f"/v1/markets/{hot}/orders", {"limit": 50}),
            }
            timings: dict[str, Any] = {}
            plans: dict[str, list[tuple[str, str]]] = {}
            for name, make in cases.items():
                path, params = make()
                capturing[0] = True
                captured.clear()
                response = await client.get(path, params=params)
                capturing[0] = False
                assert response.status_code == 200, (name, response.text[:300])
                plans[name] = list(captured)
                lat = []
                for _ in range(args.iterations):
                    path, params = make()
                    started = time.perf_counter()
                    response = await client.get(path, params=params)
                    lat.append(time.perf_counter() - started)
                    assert response.status_code == 200, (name, response.text[:300])
                timings[name] = lat
            # The database side of a book: a market's open orders (what rebuilds it).
            for name, pick in (
                ("book rows from the db", m),
                ("book rows, hot market", lambda: hot),
            ):
                lat = []
                capturing[0] = True
                captured.clear()
                async with engine.connect() as conn:
                    await book_queries.load_books(conn, [pick()])
                capturing[0] = False
                plans[name] = list(captured)
                for _ in range(args.iterations):
                    address = pick()
                    started = time.perf_counter()
                    async with engine.connect() as conn:
                        rows = await book_queries.load_books(conn, [address])
                    lat.append(time.perf_counter() - started)
                timings[f"{name} ({len(rows.orders)} open orders)"] = lat
                plans[f"{name} ({len(rows.orders)} open orders)"] = plans.pop(name)
        event.remove(engine.sync_engine, "before_cursor_execute", capture)

        results["queries"] = {}
        for name, lat in timings.items():
            p50, p99 = statistics.median(lat) * 1000, percentile(lat, 99) * 1000
            results["queries"][name] = {"p50Ms": round(p50, 2), "p99Ms": round(p99, 2)}
            flag = "" if p99 < 20 else "  <-- over 20 ms"
            print(f"   {name:55} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms{flag}")

        # EXPLAIN every statement the requests ran.
        dialect = engine.dialect.name
        prefix = "EXPLAIN" if dialect == "postgresql" else "EXPLAIN QUERY PLAN"
        results["plans"] = {}
        failures = []
        async with engine.connect() as conn:
            for name, statements in plans.items():
                shown = []
                for statement, params in statements:
                    if not statement.lstrip().upper().startswith("SELECT"):
                        continue
                    result = await conn.exec_driver_sql(f"{prefix} {statement}", params)
                    if dialect == "postgresql":
                        plan = "\n".join(str(r[0]) for r in result)
                    else:
                        plan = "\n".join(str(r[-1]) for r in result)
                    bad = scans_of(plan, dialect)
                    failures += [(name, b) for b in bad]
                    shown.append({"sql": " ".join(statement.split()), "plan": plan})
                results["plans"][name] = shown
        results["fullScans"] = failures
        print(f"   full scans of big tables: {failures or 'none'}")
    return results


def run_db(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        print("== db (sqlite) ==")
        out["sqlite"] = asyncio.run(
            _migrated_run(f"sqlite:///{Path(tmp) / 'bench.db'}", args, Path(tmp))
        )
        if args.postgres:
            print("== db (postgresql) ==")
            with postgres_database(args.postgres) as url:
                out["postgresql"] = asyncio.run(_migrated_run(url, args, Path(tmp)))
    return out


async def _migrated_run(url: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from predmarket.store import migrate

    await asyncio.to_thread(migrate.upgrade, url)
    return await _run_db(url, args, tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=("http", "db", "all"), default="all")
    parser.add_argument("--postgres", help="postgresql://… server to create bench databases on")
    parser.add_argument("--connections", type=int, default=16, help="load generator connections")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measurement")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the three endpoints")
    parser.add_argument("--extra-markets", type=int, default=60, help="markets besides the demo")
    parser.add_argument("--builds", type=int, default=300, help="build-tx requests to time")
    parser.add_argument("--markets", type=int, default=10_000, help="db: synthetic markets")
    parser.add_argument("--orders", type=int, default=1_000_000, help="db: synthetic orders")
    parser.add_argument("--iterations", type=int, default=300, help="db: requests per query")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args()
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {CLIENT_CPU})
    results: dict[str, Any] = {
        "machine": machine(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    if args.what in ("http", "all"):
        results["baseline"] = run_baseline(args)
        results["http"] = [run_http(args, None)]
        if args.postgres:
            with postgres_database(args.postgres) as url:
                results["http"].append(run_http(args, url))
    if args.what in ("db", "all"):
        results["db"] = run_db(args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
