"""``predmarket serve --redis-url``: the option reaches the app, the banner says where limits are
counted, and an unreachable Redis refuses the start with a clear message."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import redis

SERVE = [sys.executable, "-c", "from predmarket.cli import app; app()", "serve"]


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDMARKET_")}
    env.update(extra)
    return env


def test_unreachable_redis_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *SERVE,
            "--port",
            "0",
            "--data-dir",
            str(tmp_path),
            "--redis-url",
            "redis://127.0.0.1:1/0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: cannot reach the rate-limit Redis" in done.stderr
    assert not (tmp_path / "predmarket.db").exists()  # refused before touching anything


def test_serve_counts_in_redis(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    args = ["--port", "0", "--devnet-port", "0", "--data-dir", str(tmp_path / "data")]
    args += ["--no-demo", "--log-level", "warning", "--redis-url", redis_url]
    env = child_env(
        PREDMARKET_LIMITS__ANONYMOUS_READS_PER_MINUTE="3",
        PREDMARKET_LIMITS__WINDOW_SECONDS="3600",
        PREDMARKET_LIMITS__REDIS_KEY_PREFIX=redis_prefix,
    )
    proc = subprocess.Popen(
        [*SERVE, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        banner: dict[str, str] = {}
        assert proc.stdout is not None
        for line in proc.stdout:
            name, _, value = line.strip().partition(" ")
            banner[name] = value.strip()
            if name == "demo":
                break
        assert "counted in Redis redis://" in banner["limits"], banner
        api = banner["API"].split()[0]
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{api}/v1/health", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the API did not answer"
                time.sleep(0.1)
        if 3600 - time.time() % 3600 < 20:  # do not straddle a window boundary
            time.sleep(3600 - time.time() % 3600 + 0.5)
        statuses = [httpx.get(f"{api}/v1/markets", timeout=10).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        client = redis.Redis.from_url(redis_url)
        try:
            assert list(client.scan_iter(match=f"{redis_prefix}anonymous:reads:*"))
        finally:
            client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
