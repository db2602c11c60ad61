"""Interop harness: the official TypeScript SDK, run by node, as an independent reference.

One long-lived ``node oracle.js`` process per test session answers JSON requests line by line
(see ``js/oracle.js`` for the operations), so a case costs a pipe round trip, not a node start.

Needs Node.js >= 20 and the pinned SDK in ``tests/interop/js/node_modules``. A missing
``node_modules`` (or one older than ``package-lock.json``) is installed once with ``npm ci``.
Without node, or when that install fails, the tests are skipped -- unless
``PREDMARKET_REQUIRE_INTEROP=1`` (CI), which turns every such skip into a failure.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

JS_DIR = Path(__file__).parent / "js"
REQUIRE_ENV = "PREDMARKET_REQUIRE_INTEROP"
MIN_NODE_MAJOR = 20
#: Seconds to wait for one response; generous, a healthy oracle answers in milliseconds.
RESPONSE_TIMEOUT = 30.0
NODE_MISSING = (
    "node not found: interop tests need Node.js >= 20 and `npm ci --prefix tests/interop/js`"
)


class OracleError(AssertionError):
    """The SDK answered a request with an error (or the oracle process failed)."""


def _unavailable(reason: str) -> NoReturn:
    """Skip, or fail when CI demands that interop tests run."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(reason)


def _node_major(node: str) -> int | None:
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def _needs_install() -> bool:
    modules = JS_DIR / "node_modules"
    installed = modules / ".package-lock.json"  # written by npm on every install
    if not all((modules / "@alephium" / pkg).is_dir() for pkg in ("web3", "web3-wallet")):
        return True
    if not installed.is_file():
        return True
    return installed.stat().st_mtime < (JS_DIR / "package-lock.json").stat().st_mtime


def _install() -> str | None:
    """Run ``npm ci`` once; return why it failed, or None."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm not found: cannot install the SDK for the interop tests"
    cmd = [npm, "ci", "--prefix", str(JS_DIR), "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"`npm ci --prefix tests/interop/js` failed: {exc}"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        return "`npm ci --prefix tests/interop/js` failed: " + " | ".join(tail)
    return None


class Oracle:
    """Client of the node oracle: one request line out, one response line back."""

    def __init__(self, node: str) -> None:
        self._proc = subprocess.Popen(
            [node, "oracle.js"],
            cwd=JS_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        self._next_id = 0
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # EOF: the process is gone

    def _pump_stderr(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _died(self, why: str) -> OracleError:
        tail = "\n".join(self._stderr[-20:])
        return OracleError(f"interop oracle {why}; node stderr:\n{tail}")

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one request; return the raw response (``result`` or ``error``)."""
        self._next_id += 1
        rid = self._next_id
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps({"id": rid, "op": op, "args": args}) + "\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise self._died(f"is not accepting requests ({exc})") from None
        try:
            line = self._lines.get(timeout=RESPONSE_TIMEOUT)
        except queue.Empty:
            raise self._died(f"did not answer {op!r} within {RESPONSE_TIMEOUT}s") from None
        if line is None:
            raise self._died(f"exited while answering {op!r}")
        response: dict[str, Any] = json.loads(line)
        if response.get("id") != rid:
            raise self._died(f"answered out of order: {line!r}")
        return response

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """The SDK's result for ``op``; an SDK error becomes ``{"error": message}``."""
        response = self.request(op, **args)
        if "error" in response:
            return {"error": response["error"]}
        result: dict[str, Any] = response["result"]
        return result

    def ok(self, op: str, **args: Any) -> dict[str, Any]:
        """Like :meth:`call`, but an SDK error fails the test with the request shown."""
        result = self.call(op, **args)
        if "error" in result:
            raise OracleError(f"SDK refused {op} {args!r}: {result['error']}")
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()  # the oracle exits when stdin closes
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/interop carries the ``interop`` marker."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    """The running SDK oracle, shared by the whole session and shut down at its end."""
    node = shutil.which("node")
    if node is None:
        _unavailable(NODE_MISSING)
    major = _node_major(node)
    if major is None or major < MIN_NODE_MAJOR:
        _unavailable(f"{NODE_MISSING} (found {node} reporting major version {major})")
    if _needs_install():
        failure = _install()
        if failure is not None:
            _unavailable(failure)
    client = Oracle(node)
    try:
        pins = json.loads((JS_DIR / "package.json").read_text())["dependencies"]
        versions = client.ok("ping")
        installed = {
            "@alephium/web3": versions["web3"],
            "@alephium/web3-wallet": versions["web3Wallet"],
        }
        if installed != pins:
            raise OracleError(f"installed SDK {installed} differs from the pins {pins}")
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def call(oracle: Oracle) -> Callable[..., dict[str, Any]]:
    """``call(op, **args) -> dict``: the SDK's answer, ``{"error": ...}`` when it refused."""
    return oracle.call
