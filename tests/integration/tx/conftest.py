"""Fixtures of the transaction-builder tests (helpers in ``tx_harness.py``).

One devnet per module on a loopback port; the service under test is the real app on a migrated
database, pointed at the devnet's URL (or at a dead or silent port for the failure tests).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from tx_harness import Chain, ClientFactory, CreatedMarket, Wallet, insert_market, signer_key

from helpers.auth import auto_sign_in
from predmarket.app import create_app
from predmarket.settings import IndexerSettings, NodeSettings, Settings

TEST_SECRET = "test-secret-not-for-production-0123456789"


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chain]:
    """An automining devnet serving HTTP on a free loopback port, faucet cooldown off."""
    running = Chain(tmp_path_factory.mktemp("devnet"))
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def silent_node() -> Iterator[str]:
    """A port that accepts connections and never answers (a hung node)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@pytest.fixture
def dead_node() -> str:
    """A loopback port nothing listens on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def service(tmp_path: Path, migrated_url: str) -> ClientFactory:
    """``async with service(node_url) as client``: the app on the test database, pointed at a
    node, with its lifespan run around the block. The client signs in as the wallet each
    ``/v1/tx`` build names (``sign_in=False``: an anonymous client)."""

    @asynccontextmanager
    async def make(
        node_url: str, *, timeout_s: float = 10.0, sign_in: bool = True
    ) -> AsyncIterator[httpx.AsyncClient]:
        settings = Settings(
            data_dir=tmp_path / "data",
            database_url=migrated_url,
            node_url=node_url,
            demo=False,
            secret_key=TEST_SECRET,
            node=NodeSettings(timeout_seconds=timeout_s, retries=0),
            # the tests write the read model themselves, from the contracts' own events
            indexer=IndexerSettings(enabled=False),
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                # builds need the signer's session: sign in as the wallet each build names
                yield auto_sign_in(c, signer_key) if sign_in else c

    return make


@pytest.fixture
async def api(service: ClientFactory, chain: Chain) -> AsyncIterator[httpx.AsyncClient]:
    """The service on the devnet."""
    async with service(chain.url) as client:
        yield client


@pytest.fixture
def market(chain: Chain) -> CreatedMarket:
    """A fresh open market on the devnet (not yet in the read model)."""
    return chain.create_market()


@pytest.fixture
async def listed(market: CreatedMarket, migrated_engine: AsyncEngine) -> tuple[CreatedMarket, int]:
    """A fresh open market, on the devnet and in the read model: (market, row id)."""
    return market, await insert_market(migrated_engine, market)


@pytest.fixture
def funded(chain: Chain) -> Wallet:
    """A default-key wallet with the faucet's 100 ALPH and 10,000 collateral."""
    wallet = Wallet.generate()
    chain.fund(wallet)
    return wallet
