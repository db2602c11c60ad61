"""``predmarket serve`` in a child process, for end-to-end tests over real HTTP.

The child is started exactly as a user starts it (the ``predmarket`` command's entry point), on
free loopback ports, and stopped with SIGTERM like a process manager would. Its start-up banner
gives the API and node URLs; everything it prints is kept for the assertions and for failures.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx

from predmarket.alephium.address import KeyType, format_address, lockup_from_public_key
from predmarket.alephium.script import TxScript, encode_script
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id
from predmarket.devnet import calls
from predmarket.devnet.genesis import DevnetConfig

T = TypeVar("T")

#: Seconds for the service to print its banner (migrations, devnet, demo seeding).
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
TEST_DATABASE_ENV = "PREDMARKET_TEST_DATABASE_URL"

#: Rate limits no functional test reaches; a test that wants the real ones passes its own env.
HIGH_LIMITS_ENV = {
    f"PREDMARKET_LIMITS__{tier}_{kind}_PER_MINUTE": "1000000"
    for tier in ("ANONYMOUS", "SESSION", "ELEVATED", "DEVELOPER")
    for kind in ("READS", "WRITES")
} | {"PREDMARKET_LIMITS__STREAM_CONNECTIONS_PER_MINUTE": "1000000"}


class ServiceFailed(AssertionError):
    """The service did not start, answer or stop as expected; carries its output."""


class ServiceProcess:
    """One ``predmarket serve`` child. Use as a context manager, or call :meth:`stop`."""

    def __init__(self, args: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
        child_env.update(HIGH_LIMITS_ENV)
        child_env.update(env or {})
        self.args = list(args)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from predmarket.cli import app; app()", "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=child_env,
        )
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        self.banner: dict[str, str] = {}
        self.api_url = ""
        self.node_url = ""

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line.rstrip("\n"))
            self._lines.put(line)
        self._lines.put(None)

    def text(self) -> str:
        return "\n".join(self.output)

    def fail(self, why: str) -> ServiceFailed:
        command = " ".join(self.args)
        return ServiceFailed(f"{why}\n--- predmarket serve {command} ---\n{self.text()}")

    def wait_banner(self) -> ServiceProcess:
        """Read the start-up banner (up to its ``demo`` line); the service then accepts requests
        as soon as uvicorn is up, which :meth:`wait_ready` waits for."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while "demo" not in self.banner:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise self.fail("no start-up banner in time") from None
            if line is None:
                raise self.fail(f"exited with {self.proc.wait()} before serving")
            name, _, value = line.strip().partition(" ")
            if line.startswith("  ") and name in ("API", "node", "database", "data", "demo"):
                self.banner[name] = value.strip()
        self.api_url = self.banner["API"].split()[0]
        self.node_url = self.banner["node"].split()[0]
        return self.wait_ready()

    def wait_ready(self, timeout_s: float = 30.0) -> ServiceProcess:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(f"{self.api_url}/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None:
                raise self.fail(f"exited with {self.proc.returncode} before answering")
            if time.monotonic() > deadline:
                raise self.fail("the API did not answer /v1/health in time")
            time.sleep(0.1)

    def stop(self) -> int:
        """SIGTERM, then wait; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise self.fail("did not stop within the timeout after SIGTERM") from None
        self._pump_thread.join(10)  # the rest of the output
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode

    def __enter__(self) -> ServiceProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_serve(args: Sequence[str], timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run ``predmarket serve`` expecting it to exit by itself (a refused start)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
    return subprocess.run(
        [sys.executable, "-c", "from predmarket.cli import app; app()", "serve", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
    )


def eventually(probe: Callable[[], T | None], what: str, timeout_s: float = 30.0) -> T:
    """Poll ``probe`` until it returns something other than None (or fail saying ``what``)."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        try:
            value = probe()
        except AssertionError as e:  # a probe may assert on intermediate states
            value, last = None, e
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {last!r}")
        time.sleep(0.05)


# -- a wallet that talks to the node directly (as a user's wallet does) ----------------------------


class Wallet:
    """A key, its address, and the node calls a wallet makes: faucet, sign + submit."""

    def __init__(self, key_type: str = KeyType.DEFAULT, private_key: bytes | None = None) -> None:
        self.private_key = private_key if private_key is not None else generate_private_key()
        self.key_type = key_type
        self.public_key = public_key_from_private(self.private_key)
        # A groupless key trades from group 0, where the protocol's contracts live.
        self.group = 0 if key_type == KeyType.GL_SECP256K1 else None
        self.address = format_address(lockup_from_public_key(self.public_key, key_type, self.group))

    def sign(self, tx_id: str) -> str:
        return sign_tx_id(self.private_key, bytes.fromhex(tx_id))


class Node:
    """The node's REST API as a wallet uses it."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def close(self) -> None:
        self.http.close()

    def ok(self, method: str, path: str, **kw: Any) -> Any:
        response = self.http.request(method, path, **kw)
        status = response.status_code
        assert status == 200, f"{method} {path}: {status} {response.text}"
        return response.json()

    def confirmed(self, tx_id: str) -> None:
        eventually(
            lambda: (
                True
                if self.ok("GET", "/transactions/status", params={"txId": tx_id})["type"]
                == "Confirmed"
                else None
            ),
            f"tx {tx_id} confirmed",
        )

    def fund(self, wallet: Wallet) -> None:
        self.confirmed(self.ok("POST", "/devnet/faucet", json={"address": wallet.address})["txId"])

    def submit(self, wallet: Wallet, unsigned_tx: str, tx_id: str) -> str:
        body = {"unsignedTx": unsigned_tx, "signature": wallet.sign(tx_id)}
        submitted = self.ok("POST", "/transactions/submit", json=body)
        self.confirmed(submitted["txId"])
        return str(submitted["txId"])

    def execute(self, wallet: Wallet, script: TxScript, alph: int, tokens: Any = ()) -> str:
        """Build a script call with execute-script, sign, submit; returns the txId."""
        body: dict[str, Any] = {
            "fromPublicKey": wallet.public_key.hex(),
            "fromPublicKeyType": wallet.key_type,
            "bytecode": encode_script(script).hex(),
            "attoAlphAmount": str(alph),
        }
        if tokens:
            body["tokens"] = [{"id": t.hex(), "amount": str(a)} for t, a in tokens]
        if wallet.group is not None:
            body["group"] = wallet.group
        built = self.ok("POST", "/contracts/unsigned-tx/execute-script", json=body)
        return self.submit(wallet, built["unsignedTx"], built["txId"])


def operator_wallet(data_dir: Path) -> Wallet:
    """The devnet's operator (creates markets), from the test keys of ``devnet.json``."""
    doc = json.loads((data_dir / "devnet" / "devnet.json").read_text())
    return Wallet(private_key=bytes.fromhex(doc["operator"]["privateKey"]))


def create_market(
    node: Node,
    data_dir: Path,
    question: str,
    *,
    category: str = "testing",
    tags: Sequence[str] = (),
    close_in_ms: int = 86_400_000,
) -> calls.MarketRef:
    """Create a market as the devnet's operator; its ids from the MarketCreated event."""
    config = DevnetConfig.load(data_dir / "devnet")
    assert config is not None
    registry = config.registry_address
    metadata = json.dumps({"tags": list(tags)}).encode()
    call = calls.create_market(
        config.registry_id, question, category, int(time.time() * 1000) + close_in_ms, metadata
    )
    tx_id = node.execute(operator_wallet(data_dir), call.script, call.alph, call.tokens)
    start = 0
    while True:
        page = node.ok("GET", f"/events/contract/{registry}", params={"start": start})
        for event in page["events"]:
            if event["txId"] == tx_id:
                return calls.MarketRef.from_event(event["fields"], config.collateral_token_id)
        assert page["nextStart"] != start, f"no MarketCreated event for {tx_id}"
        start = page["nextStart"]
