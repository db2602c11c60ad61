"""End to end over real HTTP: build an order with the API, sign it with our code, submit it to the
node the API names, follow it until indexed, and see it in the book; a second wallet's
complementary buy mints against it and both wallets see the fill.

The whole service runs as ``predmarket serve --no-demo`` in a child process (the devnet in it,
the indexer in its app); the wallets hold their own keys and talk to the API and to the node.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_process import Node, ServiceProcess, Wallet, create_market, eventually

from helpers.auth import sign_in_sync
from predmarket.alephium.address import KeyType
from predmarket.alephium.signing import sign_message
from predmarket.alephium.tx import decode_unsigned_tx, tx_id
from predmarket.exchange import SHARE, buy_lock

pytestmark = pytest.mark.db

PRICE = 620


class Api:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params)
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text}"
        return response.json()

    def sign_in(self, wallet: Wallet) -> dict[str, str]:
        """A bearer session of ``wallet`` (builds need the signer's own session): its headers."""
        key_type = "gl-secp256k1" if wallet.key_type == KeyType.GL_SECP256K1 else "default"
        signed = sign_in_sync(
            self.http,
            address=wallet.address,
            public_key=wallet.public_key.hex(),
            key_type=key_type,
            sign=lambda text: sign_message(wallet.private_key, text),
        )
        return signed.headers

    def build_order(
        self, market: str, wallet: Wallet, *, side: str, outcome: str, price: int, quantity: int
    ) -> dict[str, Any]:
        body = {
            "signerAddress": wallet.address,
            "signerPublicKey": wallet.public_key.hex(),
            "signerKeyType": wallet.key_type,
            "side": side,
            "outcome": outcome,
            "price": price,
            "quantity": str(quantity),
        }
        response = self.http.post(
            f"/v1/tx/markets/{market}/orders", json=body, headers=self.sign_in(wallet)
        )
        assert response.status_code == 200, response.text
        built: dict[str, Any] = response.json()
        return built

    def wait_indexed(self, market: str, tx: str) -> dict[str, Any]:
        """Poll the transaction and the market's activity until the tx is in the read model."""

        def probe() -> dict[str, Any] | None:
            activity = self.get(f"/v1/markets/{market}/activity", txId=tx)
            status: dict[str, Any] = self.get(f"/v1/transactions/{tx}")
            if not activity["indexed"] or status["status"] != "indexed":
                return None
            assert status["node"]["status"] == "Confirmed"
            assert status["indexer"]["indexed"] is True
            assert market in status["indexer"]["markets"]
            return status

        return eventually(probe, f"tx {tx} indexed")

    def book_after(self, market: str, version: int) -> dict[str, Any]:
        """The order book once it reflects a newer version than ``version``. The book is served
        from memory, which follows the outbox a poll interval behind the indexer's commit, so
        right after ``indexed`` it may still be the previous state for a moment."""

        def probe() -> dict[str, Any] | None:
            book: dict[str, Any] = self.get(f"/v1/markets/{market}/orderbook")
            return book if book["version"] > version else None

        return eventually(probe, "the book to move past version {version}", timeout_s=5)


@pytest.fixture
def service(serve_args: list[str]) -> Iterator[ServiceProcess]:
    with ServiceProcess([*serve_args, "--no-demo"]) as running:
        yield running.wait_banner()


def find(doc: Any, key: str) -> Any:
    """The value of ``key`` wherever it sits in a JSON document."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        for value in doc.values():
            found = find(value, key)
            if found is not None:
                return found
    if isinstance(doc, list):
        for value in doc:
            found = find(value, key)
            if found is not None:
                return found
    return None


def levels(book: dict[str, Any], outcome: str, side: str) -> list[tuple[int, str, int]]:
    return [(lv["price"], lv["totalQuantity"], lv["orderCount"]) for lv in book[outcome][side]]


def test_build_sign_submit_index_and_mint(service: ServiceProcess, tmp_path: Path) -> None:
    api = Api(service.api_url)
    config = api.get("/v1/protocol/config")
    node_url = find(config, "nodeUrl")
    assert node_url == service.node_url
    node = Node(node_url)
    try:
        market = create_market(node, tmp_path / "data", "Will the end-to-end test pass?")
        address = market.address
        eventually(
            lambda: (
                True if httpx.get(f"{service.api_url}/v1/markets/{address}").is_success else None
            ),
            "the new market indexed",
        )
        alice, bob = Wallet(), Wallet(KeyType.GL_SECP256K1)
        node.fund(alice)
        node.fund(bob)
        quantity = 10 * SHARE

        # alice: build with the API, check it is the order she asked for, sign, submit.
        built = api.build_order(
            address, alice, side="buy", outcome="yes", price=PRICE, quantity=quantity
        )
        assert built["collateralRequired"] == str(buy_lock(PRICE, quantity))
        assert {"id": market.collateral_id.hex(), "amount": str(buy_lock(PRICE, quantity))} in (
            built["tokens"]
        )
        assert (
            tx_id(decode_unsigned_tx(bytes.fromhex(built["unsignedTx"]))).hex() == (built["txId"])
        )
        placed = node.submit(alice, built["unsignedTx"], built["txId"])
        assert placed == built["txId"]  # the node's id is the one the API announced
        api.wait_indexed(address, placed)

        book = api.book_after(address, 0)
        assert book["version"] == 1  # one order event: alice's order placed
        assert levels(book, "yes", "bids") == [(PRICE, str(quantity), 1)]
        assert book["bestBidYes"] == PRICE
        assert levels(book, "no", "bids") == []
        orders = api.get(f"/v1/markets/{address}/orders")["orders"]
        assert [(o["owner"], o["status"], o["remaining"]) for o in orders] == [
            (alice.address, "open", str(quantity))
        ]

        # bob: a complementary buy of NO at 1000 - P for 4 of alice's 10 shares mints 4 pairs.
        minted = 4 * SHARE
        built = api.build_order(
            address, bob, side="buy", outcome="no", price=1000 - PRICE, quantity=minted
        )
        assert built["collateralRequired"] == str(buy_lock(1000 - PRICE, minted))
        matched = node.submit(bob, built["unsignedTx"], built["txId"])
        assert matched == built["txId"]
        api.wait_indexed(address, matched)

        fills = api.get(f"/v1/markets/{address}/fills")["fills"]
        assert len(fills) == 1
        (fill,) = fills
        assert fill["kind"] == "mint"
        assert fill["maker"] == alice.address and fill["taker"] == bob.address
        assert fill["price"] == PRICE
        assert fill["quantity"] == str(minted)
        assert fill["txId"] == matched

        book = api.book_after(address, 1)
        # bob's order placed (and filled at once) and alice's order updated: two order events
        assert book["version"] == 3
        assert levels(book, "yes", "bids") == [(PRICE, str(quantity - minted), 1)]
        assert levels(book, "no", "bids") == []  # bob's order filled completely: never rested
        prices = api.get(f"/v1/markets/{address}/prices")
        assert prices["yesPrice"] == pytest.approx(PRICE / 1000)
        assert prices["priceTimestamp"] > 0
        summary = api.get(f"/v1/markets/{address}")
        assert summary["volume"] == str(minted)  # mint volume: the pairs created
    finally:
        node.close()
        api.http.close()
