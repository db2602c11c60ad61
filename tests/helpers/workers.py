"""API worker PROCESSES for the tests that need several: ``uvicorn --factory
predmarket.app:create_app`` on loopback ports, configured through ``PREDMARKET_*`` like the
workers of ``predmarket serve --workers N``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

TEST_SECRET = "test-secret-not-for-production-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_healthy(url: str, proc: subprocess.Popen[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout is not None else ""
            raise AssertionError(f"worker exited with {proc.returncode}: {out}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"worker at {url} did not become healthy")


@contextmanager
def api_workers(
    count: int, *, database_url: str, data_dir: Path, env: Mapping[str, str] | None = None
) -> Iterator[list[str]]:
    """``count`` worker processes on one database (no node, no indexer, no demo); yields their
    base URLs and stops them on exit."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
    environ.update(
        {
            "PREDMARKET_DATA_DIR": str(data_dir),
            "PREDMARKET_DATABASE_URL": database_url,
            "PREDMARKET_NODE_URL": "http://127.0.0.1:9",
            "PREDMARKET_INDEXER__ENABLED": "false",
            "PREDMARKET_DEMO": "false",
            "PREDMARKET_SECRET_KEY": TEST_SECRET,
            **(env or {}),
        }
    )
    procs: list[subprocess.Popen[str]] = []
    urls: list[str] = []
    try:
        for _ in range(count):
            port = free_port()
            command = [sys.executable, "-m", "uvicorn", "--factory", "predmarket.app:create_app"]
            command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
            procs.append(
                subprocess.Popen(
                    command,
                    env=environ,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        for url, proc in zip(urls, procs, strict=True):
            wait_healthy(url, proc)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
