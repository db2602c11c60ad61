"""``POST /devnet/faucet``: what it sends, its per-address rate limit, what it refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from devnet_http import Devnet, Wallet, close_devnet, open_devnet

from predmarket.alephium.constants import DUST_AMOUNT


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Devnet]:
    """A devnet with the faucet's default cooldown (one request per address per minute)."""
    dn = open_devnet(tmp_path / "devnet", faucet_cooldown_ms=None)
    try:
        yield dn
    finally:
        close_devnet(dn)


@pytest.mark.parametrize("key_type", ["default", "gl-secp256k1"])
def test_faucet_sends_alph_and_collateral(devnet: Devnet, key_type: str) -> None:
    wallet = Wallet.generate(key_type)
    faucet = devnet.config["faucet"]
    sent = devnet.faucet(wallet.address)
    assert sent["attoAlphAmount"] == faucet["attoAlphAmount"]
    assert sent["tokens"] == [
        {"id": devnet.collateral_id.hex(), "amount": faucet["collateralAmount"]}
    ]
    assert devnet.status(sent["txId"])["type"] == "Confirmed"
    # The collateral output carries the dust every token output needs.
    assert devnet.alph(wallet.address) == int(faucet["attoAlphAmount"]) + DUST_AMOUNT
    assert devnet.token(wallet.address, devnet.collateral_id) == int(faucet["collateralAmount"])
    minted = devnet.events(devnet.config["collateralToken"]["address"])[-1]
    assert minted["txId"] == sent["txId"]
    assert minted["fields"][0] == {"type": "Address", "value": wallet.address}
    assert minted["fields"][1] == {"type": "U256", "value": faucet["collateralAmount"]}


def test_collateral_has_18_decimals(devnet: Devnet) -> None:
    assert devnet.config["collateralToken"]["decimals"] == 18
    assert int(devnet.config["faucet"]["collateralAmount"]) % 10**18 == 0


def test_rate_limit_per_address(limited: Devnet) -> None:
    wallet, other = Wallet.generate(), Wallet.generate()
    assert limited.config["faucet"]["cooldownMs"] == 60_000
    limited.faucet(wallet.address)
    before = limited.snapshot([wallet.address])
    again = limited.post("/devnet/faucet", {"address": wallet.address})
    assert again.status_code == 429
    assert "Too many faucet requests" in again.json()["detail"]
    assert limited.snapshot([wallet.address]) == before
    # The limit is per address: another one is served.
    limited.faucet(other.address)


@pytest.mark.parametrize(
    "body",
    [{}, {"address": ""}, {"address": "nonsense"}, {"address": 12}, {"addr": "x"}, [], "x"],
)
def test_refuses_malformed_requests(devnet: Devnet, body: object) -> None:
    response = devnet.post("/devnet/faucet", body)
    assert response.status_code == 400
    assert isinstance(response.json()["detail"], str)


def test_refuses_contracts(devnet: Devnet) -> None:
    registry = devnet.config["marketRegistry"]["address"]
    response = devnet.post("/devnet/faucet", {"address": registry})
    assert response.status_code == 400
    assert "contract" in response.json()["detail"]
