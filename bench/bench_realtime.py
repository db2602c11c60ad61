"""Realtime fan-out benchmark: N concurrent SSE subscribers to one market topic while events are
appended to the outbox at a fixed rate.

Run: ``.venv/bin/python bench/bench_realtime.py [--clients 1000] [--rate 100] [--seconds 20]
[--postgres URL]``. Results: ``docs/benchmarks.md`` (section "Realtime fan-out").

Three processes: the app under uvicorn (uvloop + httptools) pinned to CPU 0 (SQLite in a temp
dir, or a fresh PostgreSQL database with ``--postgres``; indexer and webhooks off); the
subscribers, pinned to CPU 1; and this process, also on CPU 1, which appends the events with
``store.uow.append_outbox`` (PostgreSQL) or the same rows through a synchronous engine (SQLite),
each in its own transaction, at ``--rate`` per second.

The subscribers are one process reading raw non-blocking sockets through one ``epoll``:
``bench/sse_subscribers.c``, compiled with the machine's ``cc`` (``--client c``, the default when
``cc`` exists), or the same loop in Python (``--client python``). The client must not be the
bottleneck: a Python asyncio client with 1,000 sockets at 100k frames/s is, and even the epoll
loop in Python takes most of a core, so its own lag shows up as latency. Each payload carries
the wall time of its commit; latency is "frame received - commit" over every frame of every
client. Every client also checks that the
ids it receives strictly increase (none twice, none out of order) and counts them.

Reported: delivery p50/p99/max, frames delivered vs expected, order violations, and the server's
RSS before and after the clients connected (memory per connection). On SQLite the writer is
another process, so the server is woken by its poll (``--poll-ms``, 10 by default); on
PostgreSQL by LISTEN/NOTIFY (the poll stays at 1 s).
"""

from __future__ import annotations

import argparse
import array
import asyncio
import contextlib
import multiprocessing
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path

import httpx
import sqlalchemy
from sqlalchemy import insert

from bench_service import postgres_database
from predmarket.store import migrate
from predmarket.store.engine import create_engine
from predmarket.store.tables.outbox import outbox
from predmarket.store.uow import append_outbox, transaction

TOPIC = "market:2AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAbnch:orders"
#: A data frame's id and commit stamp, from its JSON (``{"v":1,"id":"…",…,"payload":{"t":…``).
_FRAME = re.compile(rb'"id":"([0-9]+)".*?"t":([0-9.]+)')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _open(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"GET /v1/realtime/stream?topics={TOPIC} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("the stream closed before its headers")
        head += chunk
    assert b" 200 " in head.split(b"\r\n", 1)[0], head
    sock.setblocking(False)
    return sock


def _subscribers(port: int, clients: int, pipe: Connection) -> None:
    """The subscriber process: open ``clients`` streams, read them all until told to stop, then
    send back the latencies, frame counts and order violations."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {1})
    socks: dict[int, socket.socket] = {}
    for i in range(clients):
        sock = _open(port)
        socks[sock.fileno()] = sock
        if i % 100 == 99:
            time.sleep(0.05)
    pipe.send("open")
    poller = select.epoll()
    for fd in socks:
        poller.register(fd, select.EPOLLIN)
    tails = dict.fromkeys(socks, b"")
    last_id = dict.fromkeys(socks, 0)
    frames = dict.fromkeys(socks, 0)
    violations = 0
    latencies: list[float] = []
    read = os.read
    while not pipe.poll():
        for fd, _ in poller.poll(0.05):
            data = read(fd, 1 << 16)
            if not data:
                poller.unregister(fd)
                continue
            now = time.time()
            # Whole frames only: a partial one waits for the next read.
            tail = tails[fd]
            if tail or not data.endswith(b"\n\n"):
                data = tail + data
                cut = data.rfind(b"\n\n") + 2
                data, tails[fd] = data[:cut], data[cut:]
            previous = last_id[fd]
            found = _FRAME.findall(data)
            for raw_id, stamp in found:
                event_id = int(raw_id)
                if event_id <= previous:
                    violations += 1
                previous = event_id
                latencies.append(now - float(stamp))
            frames[fd] += len(found)
            last_id[fd] = previous
    pipe.send((latencies, sum(frames.values()), violations, min(frames.values())))
    for sock in socks.values():
        sock.close()


class _CSubscribers:
    """The subscribers as ``bench/sse_subscribers.c``, compiled here with ``cc`` and pinned to
    CPU 1: about a tenth of the Python reader's CPU per frame, so the client's own lag stays out
    of the latencies."""

    def __init__(self, tmp: Path, port: int, clients: int) -> None:
        binary = tmp / "sse_subscribers"
        source = Path(__file__).with_name("sse_subscribers.c")
        subprocess.run(["cc", "-O2", "-o", str(binary), str(source)], check=True)
        self.out = tmp / "latencies.bin"
        path = f"/v1/realtime/stream?topics={TOPIC}"
        self.proc = subprocess.Popen(
            ["taskset", "-c", "1", str(binary), str(port), str(clients), path, str(self.out)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line == "open", line

    def stop(self) -> tuple[list[float], int, int, int]:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        fields = dict(part.split("=") for part in out.split())
        latencies = array.array("d")
        latencies.frombytes(self.out.read_bytes())
        return (
            latencies.tolist(),
            int(fields["frames"]),
            int(fields["violations"]),
            int(fields["fewest"]),
        )


def _event(sent: int) -> dict[str, object]:
    # The commit time is what the latency counts from: the insert is the last statement before
    # the commit, so its stamp is the commit's to within ~0.1 ms.
    return {
        "topic": TOPIC,
        "operation": "insert",
        "entity": "order",
        "key": {"orderId": sent},
        "payload": {"t": round(time.time(), 6), "pad": "x" * 120},
        "source": "indexer",
    }


async def _writer(url: str, rate: int, seconds: float) -> int:
    """PostgreSQL: the production writer, ``append_outbox``, one transaction per event."""
    engine = create_engine(url)
    sent = 0
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds:
            async with transaction(engine) as conn:
                await append_outbox(conn, **_event(sent))  # type: ignore[arg-type]
            sent += 1
            await asyncio.sleep(max(0.0, start + sent / rate - time.monotonic()))
    finally:
        await engine.dispose()
    return sent


def _writer_sqlite(url: str, rate: int, seconds: float) -> int:
    """SQLite: the same rows through a synchronous engine (a writer in its own process, as the
    indexer of another process would be). aiosqlite's thread hand-offs cost ~2 ms of CPU per
    transaction, which on the subscribers' core distorted the latencies."""
    engine = sqlalchemy.create_engine(url)
    sent = 0
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds:
            row = _event(sent)
            with engine.begin() as conn:
                conn.execute(insert(outbox).values(**row, created_at=datetime.now(UTC)))
            sent += 1
            time.sleep(max(0.0, start + sent / rate - time.monotonic()))
    finally:
        engine.dispose()
    return sent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--postgres", default=None)
    parser.add_argument("--poll-ms", type=int, default=10)
    parser.add_argument(
        "--client",
        choices=("c", "python"),
        default="c" if shutil.which("cc") else "python",
        help="the subscribers: bench/sse_subscribers.c (compiled with cc) or a Python process",
    )
    return parser.parse_args()


async def main(args: argparse.Namespace, tmp: Path, url: str) -> None:
    migrate.upgrade(url)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
    env.update(
        PREDMARKET_DATABASE_URL=url,
        PREDMARKET_DATA_DIR=str(tmp / "data"),
        PREDMARKET_NODE_URL="http://127.0.0.1:9",
        PREDMARKET_INDEXER__ENABLED="false",
        PREDMARKET_WEBHOOKS__ENABLED="false",
        PREDMARKET_REALTIME__POLL_INTERVAL_MS=str(1000 if args.postgres else args.poll_ms),
        PREDMARKET_LIMITS__STREAM_CONNECTIONS_PER_MINUTE="1000000",
    )
    command = ["taskset", "-c", "0", sys.executable, "-m", "uvicorn", "--factory"]
    proc = subprocess.Popen(
        [*command, "predmarket.app:create_app", "--port", str(port), "--log-level", "warning",
         "--timeout-graceful-shutdown", "1", "--loop", "uvloop", "--http", "httptools"],
        env=env,
    )  # fmt: skip
    try:
        for _ in range(300):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                    break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        rss_before = _rss_kb(proc.pid)
        subscribers = _CSubscribers(tmp, port, args.clients) if args.client == "c" else None
        if subscribers is None:
            parent, child = multiprocessing.Pipe()
            readers = multiprocessing.Process(
                target=_subscribers, args=(port, args.clients, child), daemon=True
            )
            readers.start()
            assert parent.recv() == "open"
        await asyncio.sleep(1.0)
        rss_after = _rss_kb(proc.pid)
        if args.postgres:
            sent = await _writer(url, args.rate, args.seconds)
        else:
            sent = _writer_sqlite(url, args.rate, args.seconds)
        await asyncio.sleep(2.0)
        if subscribers is not None:
            latencies, frame_count, violations, fewest = subscribers.stop()
        else:
            parent.send("stop")
            latencies, frame_count, violations, fewest = parent.recv()
            readers.join(30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    backend = "PostgreSQL" if args.postgres else f"SQLite (poll {args.poll_ms} ms)"
    print(f"backend            {backend}")
    print(f"clients            {args.clients}")
    print(f"events             {sent} at {args.rate}/s over {args.seconds:.0f} s")
    print(f"frames             {frame_count} of {sent * args.clients} expected "
          f"(fewest for one client: {fewest}); {len(lat)} latencies")  # fmt: skip
    print(f"order violations   {violations} (an id not above the previous one of its client)")
    print(f"latency ms         p50 {pct(0.50):.1f}  p99 {pct(0.99):.1f}  max {pct(1.0):.1f}")
    per_conn = (rss_after - rss_before) / max(1, args.clients)
    print(f"server RSS         {rss_before / 1024:.0f} MB idle, {rss_after / 1024:.0f} MB with "
          f"clients: {per_conn:.1f} KB per connection")  # fmt: skip


if __name__ == "__main__":
    arguments = parse_args()
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {1})
    workdir = Path(tempfile.mkdtemp(prefix="bench-realtime-"))
    if arguments.postgres:
        with postgres_database(arguments.postgres) as database:  # fresh, dropped afterwards
            asyncio.run(main(arguments, workdir, database))
    else:
        asyncio.run(main(arguments, workdir, f"sqlite:///{workdir / 'bench.db'}"))
