"""The node process running ``js/devnet_client.js``: the official SDK's NodeProvider and wallets,
driven one JSON request line at a time.

Shared by the SDK tests against the devnet and against the service.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

JS_DIR = Path(__file__).parent / "js"
RESPONSE_TIMEOUT = 60.0


class SdkError(AssertionError):
    """The SDK refused a request, or the node process failed."""


class DevnetClient:
    """The node process running ``devnet_client.js``: one JSON request line, one response."""

    def __init__(self, node: str) -> None:
        self._proc = subprocess.Popen(
            [node, "devnet_client.js"],
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
        #: Every "METHOD /path -> status" the SDK made, over the whole session.
        self.requests: list[str] = []
        self._pumps = [
            threading.Thread(target=self._pump_stdout, daemon=True),
            threading.Thread(target=self._pump_stderr, daemon=True),
        ]
        for pump in self._pumps:
            pump.start()

    def _pump_stdout(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """The SDK's result; an SDK error becomes ``{"error": message}``."""
        self._next_id += 1
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps({"id": self._next_id, "op": op, "args": args}) + "\n")
        self._proc.stdin.flush()
        try:
            line = self._lines.get(timeout=RESPONSE_TIMEOUT)
        except queue.Empty:
            raise SdkError(f"devnet_client.js did not answer {op}") from None
        if line is None:
            raise SdkError("devnet_client.js exited:\n" + "\n".join(self._stderr[-20:]))
        response: dict[str, Any] = json.loads(line)
        assert response["id"] == self._next_id
        self.requests += response["requests"]
        if "error" in response:
            return {"error": response["error"], "requests": response["requests"]}
        result: dict[str, Any] = response["result"]
        return result

    def ok(self, op: str, **args: Any) -> Any:
        result = self.call(op, **args)
        if isinstance(result, dict) and "error" in result:
            raise SdkError(f"SDK refused {op}: {result['error']} ({result['requests']})")
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for pump in self._pumps:
            pump.join(10)
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
