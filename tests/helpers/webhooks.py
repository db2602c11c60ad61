"""Helpers of the webhook tests: the real app on a migrated database, developer keys made
through the real routes, and a real HTTP receiver on a loopback port.

The receiver (``Receiver``) is a threading ``http.server`` that records every request and answers
with the status its ``plan`` gives for the n-th request (then ``default_status``).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import SignedIn, new_key, sign_in
from predmarket.settings import IndexerSettings, LimitSettings, Settings, WebhookSettings
from predmarket.store.uow import append_outbox

DEV_HEADER = "x-svc-developer-key"
TEST_SECRET = "test-secret-not-for-production-0123456789"
HIGH_LIMITS = LimitSettings(
    anonymous_reads_per_minute=1_000_000,
    anonymous_writes_per_minute=1_000_000,
    session_reads_per_minute=1_000_000,
    session_writes_per_minute=1_000_000,
    developer_reads_per_minute=1_000_000,
    developer_writes_per_minute=1_000_000,
)
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def market_address() -> str:
    """A fresh market-address-shaped string, so each test's topics are its own."""
    return "2" + "".join(secrets.choice(_BASE58) for _ in range(44))


def fills_topic() -> str:
    return f"market:{market_address()}:fills"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    status: int = 0


@dataclass
class Receiver:
    """A real HTTP server: records requests, answers with planned statuses."""

    plan: list[int] = field(default_factory=list)
    default_status: int = 204
    delay_s: float = 0.0
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def answer(self, request: Received) -> int:
        with self.lock:
            self.requests.append(request)
            n = len(self.requests)
        if self.delay_s:
            time.sleep(self.delay_s)
        request.status = self.plan[n - 1] if n <= len(self.plan) else self.default_status
        return request.status

    def events(self) -> list[dict[str, object]]:
        with self.lock:
            return [json.loads(r.body) for r in self.requests]

    def ok_event_ids(self) -> list[str]:
        """Event ids of the requests answered with a 2xx (in arrival order)."""
        with self.lock:
            return [json.loads(r.body)["id"] for r in self.requests if 200 <= r.status < 300]


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            status = receiver.answer(
                Received(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time()
                )
            )
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def fast_webhooks(**overrides: object) -> WebhookSettings:
    values: dict[str, object] = {
        "allow_private": True,
        "retry_schedule_seconds": [0.05, 0.1, 0.2, 0.2, 0.2],
        "poll_interval_seconds": 0.05,
        "timeout_seconds": 2.0,
        "lease_seconds": 5.0,
        "secret_grace_seconds": 3600.0,
    }
    values.update(overrides)
    return WebhookSettings(**values)  # type: ignore[arg-type]


def settings_for(url: str, data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": data_dir,
        "database_url": url,
        "node_url": "http://127.0.0.1:9",
        "demo": False,
        "indexer": IndexerSettings(enabled=False),
        "secret_key": TEST_SECRET,
        "limits": HIGH_LIMITS,
        "webhooks": fast_webhooks(),
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


def client_of(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@dataclass(frozen=True)
class Developer:
    """A wallet session and a developer key of that wallet."""

    session: SignedIn
    key: str

    @property
    def headers(self) -> dict[str, str]:
        """The developer key alone."""
        return {DEV_HEADER: self.key}

    @property
    def with_session(self) -> dict[str, str]:
        """The developer key and the wallet's bearer session."""
        return {DEV_HEADER: self.key, **self.session.headers}


async def make_developer(client: httpx.AsyncClient, scopes: list[str] | None = None) -> Developer:
    session = await sign_in(client, new_key())
    response = await client.post(
        "/v1/developer/keys",
        json={"name": "hooks", "scopes": scopes or ["webhooks:manage", "public:read"]},
        headers=session.headers,
    )
    assert response.status_code == 201, response.text
    return Developer(session, response.json()["key"])


async def create_webhook(
    client: httpx.AsyncClient, developer: Developer, url: str, topics: list[str]
) -> dict[str, object]:
    response = await client.post(
        "/v1/webhooks", json={"url": url, "topics": topics}, headers=developer.headers
    )
    assert response.status_code == 201, response.text
    data: dict[str, object] = response.json()
    return data


async def publish(engine: AsyncEngine, topic: str, count: int, *, start: int = 0) -> list[int]:
    """Commit ``count`` trade events on ``topic`` the way the indexer does; their event ids."""
    ids = []
    for n in range(start, start + count):
        async with engine.begin() as conn:
            ids.append(
                await append_outbox(
                    conn,
                    topic=topic,
                    operation="insert",
                    entity="trade",
                    key={"tradeId": str(n)},
                    payload={"price": 640, "quantity": "10000000", "n": n},
                    source="indexer",
                    created_at=datetime.now(UTC),
                )
            )
    return ids


async def wait_for(check: Callable[[], bool], timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.05)


@contextmanager
def serving(box: Receiver) -> Iterator[Receiver]:
    """Run ``box`` as a real HTTP server on a free loopback port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(box))
    server.daemon_threads = True
    box.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
