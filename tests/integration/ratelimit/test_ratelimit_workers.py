"""Two API worker PROCESSES (uvicorn servers on their own ports) counting in one real Redis share
one budget: the successes across both add up to the limit, exactly."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers.workers import api_workers

pytestmark = pytest.mark.db

READS = 25
WRITES = 4
WINDOW_S = 3600  # long windows: the test never straddles a boundary (checked below too)


@pytest.fixture
def workers(
    migrated_url: str, redis_url: str, redis_prefix: str, tmp_path: Path
) -> Iterator[list[str]]:
    """Two worker processes on the same database and Redis."""
    env = {
        "PREDMARKET_REDIS_URL": redis_url,
        "PREDMARKET_LIMITS__REDIS_KEY_PREFIX": redis_prefix,
        "PREDMARKET_LIMITS__REDIS_TIMEOUT_SECONDS": "30",
        "PREDMARKET_LIMITS__WINDOW_SECONDS": str(WINDOW_S),
        "PREDMARKET_LIMITS__ANONYMOUS_READS_PER_MINUTE": str(READS),
        "PREDMARKET_LIMITS__ANONYMOUS_WRITES_PER_MINUTE": str(WRITES),
    }
    with api_workers(2, database_url=migrated_url, data_dir=tmp_path / "data", env=env) as urls:
        yield urls


def test_two_worker_processes_share_one_redis_budget(workers: list[str]) -> None:
    if WINDOW_S - time.time() % WINDOW_S < 30:  # about to roll over: wait for the new window
        time.sleep(WINDOW_S - time.time() % WINDOW_S + 0.5)

    def get(i: int) -> tuple[int, int]:
        worker = i % 2
        response = httpx.get(f"{workers[worker]}/v1/markets", timeout=30)
        assert "ratelimit-remaining" in response.headers
        return worker, response.status_code

    def post(i: int) -> tuple[int, int]:
        worker = i % 2
        response = httpx.post(f"{workers[worker]}/v1/auth/challenge", json={}, timeout=30)
        return worker, response.status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        reads = list(pool.map(get, range(60)))
        writes = list(pool.map(post, range(12)))

    assert sum(status == 200 for _, status in reads) == READS, reads
    assert sum(status == 429 for _, status in reads) == 60 - READS, reads
    assert {worker for worker, status in reads if status == 200} == {0, 1}, "both served"
    assert sum(status == 200 for _, status in writes) == WRITES, writes
    assert sum(status == 429 for _, status in writes) == 12 - WRITES, writes
    # Either worker now reports the one spent budget.
    for url in workers:
        response = httpx.get(f"{url}/v1/markets", timeout=30)
        assert response.status_code == 429
        assert response.headers["ratelimit-remaining"] == "0"
        assert response.headers["ratelimit-policy"] == f'"reads";q={READS};w={WINDOW_S}'
