"""The service's order flow with the official SDK as the wallet.

``predmarket serve --no-demo`` runs in a child process (the e2e harness of
``tests/e2e/service_process.py``). Two ``@alephium/web3-wallet`` ``PrivateKeyWallet``s — a default
key and a groupless ``gl-secp256k1`` key — take the unsigned transactions the API builds
(``POST /v1/tx/markets/{address}/orders``), and the SDK signs and submits them
(``signAndSubmitUnsignedTx``, driven through ``js/devnet_client.js``) to the node URL that
``GET /v1/protocol/config`` publishes. The API must then index them: the first wallet's order
rests in the book, the second one's complementary buy mints against it, and both see the fill.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from devnet_sdk import DevnetClient

from helpers.auth import sign_in_sync
from predmarket.alephium.address import KeyType
from predmarket.alephium.signing import generate_private_key, public_key_from_private
from predmarket.exchange import SHARE, buy_lock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from service_process import (
    TEST_DATABASE_ENV,
    Node,
    ServiceProcess,
    create_market,
    eventually,
)

pytestmark = [pytest.mark.interop, pytest.mark.db]

PRICE = 555


@pytest.fixture
def sdk(oracle: object) -> Iterator[DevnetClient]:
    # ``oracle`` found node, installed the pinned SDK and checked it (or skipped the test).
    del oracle
    node = shutil.which("node")
    assert node is not None
    wallets = DevnetClient(node)
    try:
        yield wallets
    finally:
        wallets.close()


@pytest.fixture
def service(
    tmp_path: Path, empty_database: Callable[[], AbstractContextManager[str]]
) -> Iterator[ServiceProcess]:
    args = ["--port", "0", "--devnet-port", "0", "--data-dir", str(tmp_path / "data")]
    args += ["--no-demo", "--log-level", "warning"]
    with empty_database() as url:
        if os.environ.get(TEST_DATABASE_ENV):
            args += ["--database-url", url]
        with ServiceProcess(args) as running:
            yield running.wait_banner()


def sdk_account(sdk: DevnetClient, node: Node, key_type: str) -> dict[str, Any]:
    """A funded SDK wallet; ``service`` is the address it trades from (groupless: ``:0``,
    the group of the protocol's contracts, where the API builds its transactions)."""
    private_key = generate_private_key()
    account = sdk.ok("account", privateKey=private_key.hex(), keyType=key_type)
    assert account["publicKey"] == public_key_from_private(private_key).hex()
    address = account["address"]
    trading = f"{address}:0" if key_type == KeyType.GL_SECP256K1 else address
    faucet = node.ok("POST", "/devnet/faucet", json={"address": trading})
    node.confirmed(faucet["txId"])
    return {**account, "privateKey": private_key.hex(), "keyType": key_type, "trading": trading}


def test_sdk_wallets_sign_what_the_service_builds(
    sdk: DevnetClient, oracle: Any, service: ServiceProcess, tmp_path: Path
) -> None:
    api = httpx.Client(base_url=service.api_url, timeout=30)
    config = api.get("/v1/protocol/config").json()
    node_url = config["network"]["nodeUrl"]
    node = Node(node_url)
    try:
        market = create_market(node, tmp_path / "data", "Will the SDK sign what we build?")
        eventually(
            lambda: True if api.get(f"/v1/markets/{market.address}").is_success else None,
            "the market indexed",
        )

        def place(account: dict[str, Any], outcome: str, price: int, quantity: int) -> str:
            body = {
                "signerAddress": account["trading"],
                "signerPublicKey": account["publicKey"],
                "signerKeyType": account["keyType"],
                "side": "buy",
                "outcome": outcome,
                "price": price,
                "quantity": str(quantity),
            }
            # the signer's own session, signed in with the SDK's signMessage
            session = sign_in_sync(
                api,
                address=account["trading"],
                public_key=account["publicKey"],
                key_type=account["keyType"],
                sign=lambda text: oracle.ok(
                    "signMessage",
                    message=text,
                    hasher="alephium",
                    privateKey=account["privateKey"],
                    keyType=account["keyType"],
                )["signature"],
            )
            built = api.post(
                f"/v1/tx/markets/{market.address}/orders", json=body, headers=session.headers
            )
            assert built.status_code == 200, built.text
            tx = built.json()
            assert tx["collateralRequired"] == str(buy_lock(price, quantity))
            sent = sdk.ok(
                "signAndSubmitUnsigned",
                url=node_url,
                privateKey=account["privateKey"],
                keyType=account["keyType"],
                unsignedTx=tx["unsignedTx"],
            )
            assert sent["txId"] == tx["txId"]
            eventually(
                lambda: (
                    True
                    if api.get(
                        f"/v1/markets/{market.address}/activity", params={"txId": sent["txId"]}
                    ).json()["indexed"]
                    else None
                ),
                f"{sent['txId']} indexed",
            )
            return str(sent["txId"])

        def book_after(version: int) -> dict[str, Any]:
            # The book is served from memory, a poll interval behind the indexer's commit.
            def probe() -> dict[str, Any] | None:
                book: dict[str, Any] = api.get(f"/v1/markets/{market.address}/orderbook").json()
                return book if book["version"] > version else None

            return eventually(probe, f"book version > {version}", timeout_s=5)

        alice = sdk_account(sdk, node, KeyType.DEFAULT)
        bob = sdk_account(sdk, node, KeyType.GL_SECP256K1)
        place(alice, "yes", PRICE, 6 * SHARE)
        book = book_after(0)
        assert [(lv["price"], lv["totalQuantity"]) for lv in book["yes"]["bids"]] == [
            (PRICE, str(6 * SHARE))
        ]

        minted_by = place(bob, "no", 1000 - PRICE, 6 * SHARE)
        fills = api.get(f"/v1/markets/{market.address}/fills").json()["fills"]
        assert [(f["kind"], f["price"], f["quantity"], f["txId"]) for f in fills] == [
            ("mint", PRICE, str(6 * SHARE), minted_by)
        ]
        assert fills[0]["maker"] == alice["trading"]
        book = book_after(book["version"])
        assert book["yes"]["bids"] == [] and book["no"]["bids"] == []
    finally:
        node.close()
        api.close()
    # Every call the SDK made went to the node (the API only built) and succeeded.
    assert sdk.requests, "the SDK made no request"
    assert all(r.endswith("-> 200") for r in sdk.requests), sdk.requests
