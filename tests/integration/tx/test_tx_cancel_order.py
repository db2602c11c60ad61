"""``DELETE /v1/tx/markets/{address}/orders/{id}`` against a real devnet over loopback HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from tx_harness import SHARE, Chain, ClientFactory, CreatedMarket, Wallet, insert_order, set_market

from predmarket.alephium.address import KeyType
from predmarket.alephium.script import ValU256, parse_contract_call
from predmarket.alephium.tx import decode_unsigned_tx, tx_id
from predmarket.devnet.abi import MARKET

pytestmark = pytest.mark.db


def cancel_path(created: CreatedMarket, order_id: int | str) -> str:
    return f"/v1/tx/markets/{created.address}/orders/{order_id}"


async def cancel(
    client: httpx.AsyncClient, created: CreatedMarket, order_id: int | str, body: Any
) -> httpx.Response:
    return await client.request("DELETE", cancel_path(created, order_id), json=body)


def check_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    return body


async def place(
    api: httpx.AsyncClient,
    chain: Chain,
    engine: AsyncEngine,
    listed: tuple[CreatedMarket, int],
    wallet: Wallet,
    *,
    owner_in_read_model: str | None = None,
) -> int:
    """Place a resting buy through the API, sign and submit it, and record it in the read
    model as the indexer would (optionally under a wrong owner); its on-chain order id."""
    created, row = listed
    r = await api.post(
        f"/v1/tx/markets/{created.address}/orders",
        json=wallet.order("buy", "yes", 250, 4 * SHARE),
    )
    assert r.status_code == 200, r.text
    sent = wallet.submit(chain, r.json())
    placed = chain.order_placed(sent, created)
    await insert_order(engine, row, placed, tx=sent, owner=owner_in_read_model)
    return int(placed["orderId"])


class TestCancel:
    @pytest.mark.parametrize(
        ("key_type", "explicit_group"),
        [
            pytest.param(KeyType.DEFAULT, True, id="default"),
            pytest.param(KeyType.GL_SECP256K1, True, id="gl-secp256k1 A:0"),
            pytest.param(KeyType.GL_SECP256K1, False, id="gl-secp256k1 bare A"),
        ],
    )
    async def test_own_order_builds_signs_submits_and_leaves_the_book(
        self,
        api: httpx.AsyncClient,
        chain: Chain,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
        key_type: str,
        explicit_group: bool,
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate(key_type, explicit_group=explicit_group)
        chain.fund(wallet)
        order_id = await place(api, chain, migrated_engine, listed, wallet)
        assert [o["orderId"] for o in chain.resting_orders(created)] == [order_id]

        r = await cancel(api, created, order_id, wallet.signer())
        assert r.status_code == 200, r.text
        build = r.json()
        assert build["collateralRequired"] == "0"
        assert build["tokens"] == []
        unsigned = decode_unsigned_tx(build["unsignedTx"])
        assert tx_id(unsigned).hex() == build["txId"]
        assert unsigned.script is not None
        parsed = parse_contract_call(unsigned.script)
        assert parsed is not None
        assert parsed.contract_id == created.ref.market_id
        assert parsed.method_index == MARKET.method("cancelOrder").index
        assert parsed.args == (ValU256(order_id),)
        assert parsed.approvals.count == 0
        assert all(out.lockup == wallet.lockup for out in unsigned.fixed_outputs)
        assert build["attoAlphAmount"] == str(unsigned.gas_amount * unsigned.gas_price)

        # idempotent by body
        again = await cancel(api, created, order_id, wallet.signer())
        assert again.json() == build

        wallet.submit(chain, build)
        assert chain.resting_orders(created) == []

    async def test_another_wallets_order_is_404(
        self,
        api: httpx.AsyncClient,
        chain: Chain,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
    ) -> None:
        created, _ = listed
        owner, intruder = Wallet.generate(), Wallet.generate()
        for wallet in (owner, intruder):
            chain.fund(wallet)
        order_id = await place(api, chain, migrated_engine, listed, owner)
        r = await cancel(api, created, order_id, intruder.signer())
        missing = await cancel(api, created, order_id + 1, owner.signer())
        body = check_error(r, 404, "NOT_FOUND")
        # the same answer as for an order that does not exist: ownership is not disclosed
        assert body["message"] == check_error(missing, 404, "NOT_FOUND")["message"]
        assert len(chain.resting_orders(created)) == 1

    async def test_the_chain_refuses_another_wallets_order_even_if_the_read_model_errs(
        self,
        api: httpx.AsyncClient,
        chain: Chain,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
    ) -> None:
        created, _ = listed
        owner, intruder = Wallet.generate(), Wallet.generate()
        for wallet in (owner, intruder):
            chain.fund(wallet)
        order_id = await place(
            api, chain, migrated_engine, listed, owner, owner_in_read_model=intruder.address
        )
        # the read model says the intruder's: the node's simulation reverts NOT_ORDER_OWNER (7)
        r = await cancel(api, created, order_id, intruder.signer())
        check_error(r, 404, "NOT_FOUND")

    async def test_an_order_already_gone_on_chain_is_404(
        self,
        api: httpx.AsyncClient,
        chain: Chain,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
        funded: Wallet,
    ) -> None:
        created, _ = listed
        order_id = await place(api, chain, migrated_engine, listed, funded)
        first = await cancel(api, created, order_id, funded.signer())
        funded.submit(chain, first.json())
        # the read model has not seen the cancellation yet: the node reverts UNKNOWN_ORDER (6)
        r = await cancel(api, created, order_id, funded.signer())
        check_error(r, 404, "NOT_FOUND")

    @pytest.mark.parametrize("status", ["filled", "cancelled"])
    async def test_an_order_no_longer_open_is_404(
        self,
        service: ClientFactory,
        dead_node: str,
        chain: Chain,
        api: httpx.AsyncClient,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
        funded: Wallet,
        status: str,
    ) -> None:
        created, row = listed
        r = await api.post(
            f"/v1/tx/markets/{created.address}/orders",
            json=funded.order("buy", "no", 100, SHARE),
        )
        sent = funded.submit(chain, r.json())
        await insert_order(
            migrated_engine, row, chain.order_placed(sent, created), tx=sent, status=status
        )
        async with service(dead_node) as client:  # refused before anything is built
            r = await cancel(client, created, 1, funded.signer())
        check_error(r, 404, "NOT_FOUND")

    async def test_resolved_market_is_409(
        self,
        service: ClientFactory,
        dead_node: str,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
    ) -> None:
        created, row = listed
        await set_market(migrated_engine, row, status="resolved", resolution="yes")
        async with service(dead_node) as client:
            r = await cancel(client, created, 1, Wallet.generate().signer())
        check_error(r, 409, "MARKET_CLOSED")

    async def test_unknown_market_is_404(
        self, service: ClientFactory, dead_node: str, market: CreatedMarket
    ) -> None:
        async with service(dead_node) as client:
            r = await cancel(client, market, 1, Wallet.generate().signer())
        check_error(r, 404, "NOT_FOUND")

    async def test_node_down_is_502(
        self,
        service: ClientFactory,
        dead_node: str,
        chain: Chain,
        api: httpx.AsyncClient,
        migrated_engine: AsyncEngine,
        listed: tuple[CreatedMarket, int],
        funded: Wallet,
    ) -> None:
        created, _ = listed
        order_id = await place(api, chain, migrated_engine, listed, funded)
        async with service(dead_node) as client:
            r = await cancel(client, created, order_id, funded.signer())
        check_error(r, 502, "UPSTREAM_ERROR")


class TestValidation:
    @pytest.mark.parametrize("order_id", [0, -1, "abc", 2**63, "1.5", "1e3"])
    async def test_order_id(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        order_id: object,
    ) -> None:
        created, _ = listed
        async with service(dead_node) as client:
            r = await cancel(client, created, str(order_id), Wallet.generate().signer())
        body = check_error(r, 400, "INVALID_REQUEST")
        assert [f["field"] for f in body["details"]["fields"]] == ["path.id"]

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"signerAddress": None}, "body.signerAddress"),
            ({"signerPublicKey": None}, "body.signerPublicKey"),
            ({"signerPublicKey": "03" + "00" * 32}, "body.signerPublicKey"),
            ({"signerKeyType": "gl-secp256k1"}, "body.signerKeyType"),
            ({"signerAddress": Wallet.generate().address}, "body.signerAddress"),
            ({"side": "buy"}, "body.side"),
        ],
        ids=["no address", "no key", "key off the curve", "key type", "other address", "extra"],
    )
    async def test_body(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        change: dict[str, Any],
        field: str,
    ) -> None:
        created, _ = listed
        body: dict[str, Any] = Wallet.generate().signer()
        for key, value in change.items():
            if value is None:
                del body[key]
            else:
                body[key] = value
        async with service(dead_node) as client:
            r = await cancel(client, created, 1, body)
        result = check_error(r, 400, "INVALID_REQUEST")
        assert [f["field"] for f in result["details"]["fields"]] == [field]

    async def test_no_body(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        async with service(dead_node) as client:
            r = await client.delete(cancel_path(created, 1))
        result = check_error(r, 400, "INVALID_REQUEST")
        assert [f["field"] for f in result["details"]["fields"]] == ["body"]
