"""Fixtures of the devnet HTTP tests (helpers in ``devnet_http.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from devnet_http import Devnet, Market, Wallet, close_devnet, open_devnet


@pytest.fixture
def devnet(tmp_path: Path) -> Iterator[Devnet]:
    """A fresh automining devnet on a free loopback port, faucet cooldown off."""
    dn = open_devnet(tmp_path / "devnet")
    try:
        yield dn
    finally:
        close_devnet(dn)


@pytest.fixture
def funded(devnet: Devnet) -> Wallet:
    """A default-key wallet the faucet has funded."""
    wallet = Wallet.generate()
    devnet.faucet(wallet.address)
    return wallet


@pytest.fixture
def market(devnet: Devnet) -> Market:
    return devnet.create_market()
