"""``POST /v1/tx/markets/{address}/orders`` against a real devnet over loopback HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine
from tx_harness import SHARE, Chain, ClientFactory, CreatedMarket, Wallet, far_past, set_market

from predmarket.alephium.address import KeyType
from predmarket.alephium.lockup import group_of
from predmarket.alephium.script import ValU256, parse_contract_call
from predmarket.alephium.tx import decode_unsigned_tx, tx_id
from predmarket.devnet.abi import MARKET, ORDER_DEPOSIT
from predmarket.exchange import QUANTITY_STEP, buy_lock
from predmarket.tx.service import ORDER_APPROVED_ALPH

pytestmark = pytest.mark.db

KEY_TYPES = [
    pytest.param(KeyType.DEFAULT, True, id="default"),
    pytest.param(KeyType.GL_SECP256K1, True, id="gl-secp256k1 A:0"),
    pytest.param(KeyType.GL_SECP256K1, False, id="gl-secp256k1 bare A"),
]


def path(created: CreatedMarket) -> str:
    return f"/v1/tx/markets/{created.address}/orders"


def any_order(side: str = "buy") -> dict[str, Any]:
    return Wallet.generate().order(side, "yes", 5, SHARE)


def fields_of(response: httpx.Response) -> list[str]:
    body = response.json()
    assert body["code"] == "INVALID_REQUEST", body
    return [f["field"] for f in body["details"]["fields"]]


def check_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["error"]["code"] == code
    assert body["requestId"] == response.headers["x-request-id"]
    return body


# -- validation: every rule is a 400 naming its field, before anything is built ----------------


_OTHER = Wallet.generate()
_GL = Wallet.generate(KeyType.GL_SECP256K1)
_BAD_POINT = "02" + "ff" * 32  # x = 2^256-1 is not a field element

# (change to a valid body, the field named). The service points at a dead node: a 400 proves the
# rule was checked before any build (a build would have been a 502).
INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("no signerAddress", {"signerAddress": None}, "body.signerAddress"),
    ("signerAddress not base58", {"signerAddress": "0OIl" * 10}, "body.signerAddress"),
    ("signerAddress empty", {"signerAddress": ""}, "body.signerAddress"),
    ("signerAddress a number", {"signerAddress": 12345}, "body.signerAddress"),
    ("signerAddress another key's", {"signerAddress": _OTHER.address}, "body.signerAddress"),
    ("no signerPublicKey", {"signerPublicKey": None}, "body.signerPublicKey"),
    ("signerPublicKey short", {"signerPublicKey": "02" + "11" * 31}, "body.signerPublicKey"),
    ("signerPublicKey not hex", {"signerPublicKey": "zz" * 33}, "body.signerPublicKey"),
    ("signerPublicKey uncompressed", {"signerPublicKey": "04" + "11" * 32}, "body.signerPublicKey"),
    ("signerPublicKey off the curve", {"signerPublicKey": _BAD_POINT}, "body.signerPublicKey"),
    ("signerKeyType webauthn", {"signerKeyType": "gl-webauthn"}, "body.signerKeyType"),
    ("signerKeyType other", {"signerKeyType": "schnorr"}, "body.signerKeyType"),
    ("signerKeyType of 3… on 1…", {"signerKeyType": "gl-secp256k1"}, "body.signerKeyType"),
    ("no side", {"side": None}, "body.side"),
    ("side hold", {"side": "hold"}, "body.side"),
    ("side BUY", {"side": "BUY"}, "body.side"),
    ("no outcome", {"outcome": None}, "body.outcome"),
    ("outcome maybe", {"outcome": "maybe"}, "body.outcome"),
    ("no price", {"price": None}, "body.price"),
    ("price 0", {"price": 0}, "body.price"),
    ("price 1000", {"price": 1000}, "body.price"),
    ("price -1", {"price": -1}, "body.price"),
    ("price as string", {"price": "500"}, "body.price"),
    ("price fractional", {"price": 500.5}, "body.price"),
    ("price float", {"price": 500.0}, "body.price"),
    ("price bool", {"price": True}, "body.price"),
    ("no quantity", {"quantity": None}, "body.quantity"),
    ("quantity 0", {"quantity": "0"}, "body.quantity"),
    ("quantity negative", {"quantity": "-10000000"}, "body.quantity"),
    ("quantity off-step", {"quantity": "10000001"}, "body.quantity"),
    ("quantity below step", {"quantity": "9999999"}, "body.quantity"),
    ("quantity leading zero", {"quantity": "010000000"}, "body.quantity"),
    ("quantity exponent", {"quantity": "1e7"}, "body.quantity"),
    ("quantity float", {"quantity": 1.5e19}, "body.quantity"),
    ("quantity over 2^256", {"quantity": str(2**256)}, "body.quantity"),
    ("unknown field", {"tif": "gtc"}, "body.tif"),
]


def _apply(body: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    for key, value in change.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


class TestValidation:
    @pytest.mark.parametrize(
        ("change", "field"), [(c, f) for _, c, f in INVALID], ids=[i for i, _, _ in INVALID]
    )
    async def test_each_rule_is_a_400_naming_the_field(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        change: dict[str, Any],
        field: str,
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate()
        body = _apply(wallet.order("buy", "yes", 500, 10 * SHARE), change)
        async with service(dead_node) as client:
            r = await client.post(path(created), json=body)
        check_envelope(r, 400, "INVALID_REQUEST")
        assert field in fields_of(r), r.json()

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"signerKeyType": "default"}, "body.signerKeyType"),
            ({"signerAddress": _GL.address}, "body.signerAddress"),
            ({"signerPublicKey": _GL.public_key.hex()}, "body.signerAddress"),
        ],
        ids=["default on 3…", "another gl key's address", "another gl key"],
    )
    async def test_groupless_signer_rules(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        change: dict[str, Any],
        field: str,
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate(KeyType.GL_SECP256K1)
        body = _apply(wallet.order("buy", "yes", 500, 10 * SHARE), change)
        async with service(dead_node) as client:
            r = await client.post(path(created), json=body)
        check_envelope(r, 400, "INVALID_REQUEST")
        assert fields_of(r) == [field]

    async def test_all_problems_at_once_and_no_value_echoed(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        body = {"signerAddress": "nope", "signerPublicKey": "zz", "side": "x", "price": 0}
        async with service(dead_node) as client:
            r = await client.post(path(created), json=body)
        check_envelope(r, 400, "INVALID_REQUEST")
        assert set(fields_of(r)) == {
            "body.signerAddress",
            "body.signerPublicKey",
            "body.side",
            "body.outcome",
            "body.price",
            "body.quantity",
        }
        assert "nope" not in r.text

    @pytest.mark.parametrize("body", [None, [], "x", 5], ids=["none", "list", "string", "number"])
    async def test_a_body_that_is_not_an_object(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int], body: Any
    ) -> None:
        created, _ = listed
        async with service(dead_node) as client:
            r = await client.post(path(created), json=body)
        check_envelope(r, 400, "INVALID_REQUEST")
        assert fields_of(r)[0].startswith("body")

    @pytest.mark.parametrize(
        "address",
        ["short", "0" * 44, "a" * 81, "25A3rM3uJjvptdsvBpreGuXKoiy863Gi6PTBB3Cvyef/B"],
        ids=["short", "not base58", "too long", "slash"],
    )
    async def test_a_malformed_market_address(
        self, service: ClientFactory, dead_node: str, address: str
    ) -> None:
        body = Wallet.generate().order("buy", "yes", 500, 10 * SHARE)
        async with service(dead_node) as client:
            r = await client.post(f"/v1/tx/markets/{address}/orders", json=body)
        if "/" in address:
            assert r.status_code == 404  # another path altogether
            return
        check_envelope(r, 400, "INVALID_REQUEST")
        assert fields_of(r) == ["path.address"]


class TestMarketState:
    async def test_unknown_market_is_404(
        self, service: ClientFactory, dead_node: str, market: CreatedMarket
    ) -> None:
        body = Wallet.generate().order("buy", "yes", 500, 10 * SHARE)
        async with service(dead_node) as client:
            r = await client.post(path(market), json=body)  # on chain, not in the read model
        check_envelope(r, 404, "NOT_FOUND")

    async def test_resolved_market_is_409(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        migrated_engine: AsyncEngine,
    ) -> None:
        created, row = listed
        await set_market(migrated_engine, row, status="resolved", resolution="no")
        async with service(dead_node) as client:
            r = await client.post(path(created), json=any_order())
        check_envelope(r, 409, "MARKET_CLOSED")

    async def test_market_past_its_close_time_is_409(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        migrated_engine: AsyncEngine,
    ) -> None:
        created, row = listed
        await set_market(migrated_engine, row, close_at=far_past())
        async with service(dead_node) as client:
            r = await client.post(path(created), json=any_order("sell"))
        check_envelope(r, 409, "MARKET_CLOSED")

    async def test_resolved_on_chain_before_the_read_model_knows_is_409(
        self, api: httpx.AsyncClient, chain: Chain, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        chain.resolve(created)
        wallet = Wallet.generate()
        chain.fund(wallet)
        # the row still says open: the node's simulation reverts with MARKET_CLOSED (code 5)
        r = await api.post(path(created), json=wallet.order("buy", "yes", 500, SHARE))
        check_envelope(r, 409, "MARKET_CLOSED")


# -- building ------------------------------------------------------------------------------------


def check_build(
    build: dict[str, Any],
    wallet: Wallet,
    created: CreatedMarket,
    *,
    side: int,
    outcome: int,
    price: int,
    quantity: int,
    lock: tuple[bytes, int],
) -> None:
    """The build is what was asked: decodes, hashes to its txId, calls placeOrder with the
    approvals of the ABI, spends the wallet's outputs, and its numbers add up."""
    assert set(build) == {
        "unsignedTx",
        "txId",
        "fromGroup",
        "toGroup",
        "gasAmount",
        "gasPrice",
        "collateralRequired",
        "attoAlphAmount",
        "tokens",
    }
    unsigned = decode_unsigned_tx(build["unsignedTx"])
    assert tx_id(unsigned).hex() == build["txId"]
    assert unsigned.script is not None
    parsed = parse_contract_call(unsigned.script)
    assert parsed is not None
    assert parsed.contract_id == created.ref.market_id
    assert parsed.method_index == MARKET.method("placeOrder").index
    assert parsed.args == (ValU256(side), ValU256(outcome), ValU256(price), ValU256(quantity))
    assert parsed.approvals.alph == ORDER_APPROVED_ALPH
    assert parsed.approvals.tokens == (lock,)
    assert all(out.lockup == wallet.lockup for out in unsigned.fixed_outputs)
    assert build["fromGroup"] == build["toGroup"] == group_of(wallet.lockup)
    assert build["gasAmount"] == unsigned.gas_amount
    assert build["gasPrice"] == str(unsigned.gas_price)
    fee = unsigned.gas_amount * unsigned.gas_price
    assert build["attoAlphAmount"] == str(fee + ORDER_DEPOSIT + 5 * 10**15)
    assert build["tokens"] == [{"id": lock[0].hex(), "amount": str(lock[1])}]


class TestBuild:
    @pytest.mark.parametrize(("key_type", "explicit_group"), KEY_TYPES)
    async def test_buy_builds_signs_submits_and_rests(
        self,
        api: httpx.AsyncClient,
        chain: Chain,
        listed: tuple[CreatedMarket, int],
        key_type: str,
        explicit_group: bool,
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate(key_type, explicit_group=explicit_group)
        chain.fund(wallet)
        quantity = 25 * SHARE
        r = await api.post(path(created), json=wallet.order("buy", "yes", 640, quantity))
        assert r.status_code == 200, r.text
        build = r.json()
        lock = buy_lock(640, quantity)
        assert build["collateralRequired"] == str(lock) == "16400000000000000000"
        check_build(
            build,
            wallet,
            created,
            side=0,
            outcome=0,
            price=640,
            quantity=quantity,
            lock=(chain.collateral_id, lock),
        )

        wallet.submit(chain, build)
        (resting,) = chain.resting_orders(created)
        assert resting["owner"] == wallet.address
        assert (resting["side"], resting["outcome"], resting["price"]) == ("buy", "yes", 640)
        assert int(str(resting["remaining"])) == quantity
        assert int(str(resting["deposit"])) == ORDER_DEPOSIT  # the headroom keeps it whole

    async def test_key_type_is_inferred_from_the_address(
        self, api: httpx.AsyncClient, chain: Chain, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        built = []
        for key_type in (KeyType.DEFAULT, KeyType.GL_SECP256K1):
            wallet = Wallet.generate(key_type)
            chain.fund(wallet)
            body = wallet.order("buy", "no", 120, SHARE)
            del body["signerKeyType"]
            r = await api.post(path(created), json=body)
            assert r.status_code == 200, r.text
            built.append(r.json())
        assert [b["collateralRequired"] for b in built] == [str(buy_lock(120, SHARE))] * 2

    async def test_sell_locks_shares_and_no_collateral(
        self, api: httpx.AsyncClient, chain: Chain, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        yes_buyer, no_buyer = Wallet.generate(), Wallet.generate(KeyType.GL_SECP256K1)
        for wallet in (yes_buyer, no_buyer):
            chain.fund(wallet)
        # yes at 600 + no at 400 mint a complete set: each wallet now holds 10 shares
        for wallet, outcome, price in ((yes_buyer, "yes", 600), (no_buyer, "no", 400)):
            r = await api.post(path(created), json=wallet.order("buy", outcome, price, 10 * SHARE))
            assert r.status_code == 200, r.text
            wallet.submit(chain, r.json())
        assert chain.resting_orders(created) == []

        for wallet, outcome, share_id in (
            (yes_buyer, "yes", created.ref.yes_id),
            (no_buyer, "no", created.ref.no_id),
        ):
            r = await api.post(path(created), json=wallet.order("sell", outcome, 700, 4 * SHARE))
            assert r.status_code == 200, r.text
            build = r.json()
            assert build["collateralRequired"] == "0"
            check_build(
                build,
                wallet,
                created,
                side=1,
                outcome=0 if outcome == "yes" else 1,
                price=700,
                quantity=4 * SHARE,
                lock=(share_id, 4 * SHARE),
            )
            wallet.submit(chain, build)
        resting = chain.resting_orders(created)
        assert [(o["owner"], o["side"], o["price"]) for o in resting] == [
            (yes_buyer.address, "sell", 700),
            (no_buyer.address, "sell", 700),
        ]

    async def test_idempotent_by_body_until_the_outputs_change(
        self, api: httpx.AsyncClient, chain: Chain, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate()
        chain.fund(wallet)
        body = wallet.order("buy", "yes", 333, 3 * SHARE)
        first = await api.post(path(created), json=body)
        again = await api.post(path(created), json=body)
        assert first.status_code == again.status_code == 200
        assert first.json() == again.json()
        # a different body is a different transaction
        other = await api.post(path(created), json={**body, "price": 334})
        assert other.json()["txId"] != first.json()["txId"]

        wallet.submit(chain, first.json())
        # the wallet's outputs changed: the same body now spends the change
        after = await api.post(path(created), json=body)
        assert after.status_code == 200
        assert after.json()["txId"] != first.json()["txId"]
        assert after.json()["collateralRequired"] == first.json()["collateralRequired"]

    @settings(
        max_examples=12,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(price=st.integers(1, 999), steps=st.integers(1, 10**14))  # up to 1,000 shares
    async def test_collateral_required_is_exact(
        self,
        api: httpx.AsyncClient,
        chain: Chain,
        funded: Wallet,
        listed: tuple[CreatedMarket, int],
        price: int,
        steps: int,
    ) -> None:
        created, _ = listed
        quantity = steps * QUANTITY_STEP
        r = await api.post(path(created), json=funded.order("buy", "no", price, quantity))
        assert r.status_code == 200, r.text
        lock = buy_lock(price, quantity)
        # price * quantity / 1000 * 1.025: exact (no rounding) for multiples of 10^7
        assert lock * 1000 * 1000 == price * quantity * 1025
        body = r.json()
        assert body["collateralRequired"] == str(lock)
        assert body["tokens"] == [{"id": chain.collateral_id.hex(), "amount": str(lock)}]
        unsigned = decode_unsigned_tx(body["unsignedTx"])
        assert unsigned.script is not None
        parsed = parse_contract_call(unsigned.script)
        assert parsed is not None
        assert parsed.approvals.tokens == ((chain.collateral_id, lock),)


class TestCannotPay:
    async def test_a_wallet_without_coins_is_422(
        self, api: httpx.AsyncClient, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        r = await api.post(path(created), json=Wallet.generate().order("buy", "yes", 500, SHARE))
        body = check_envelope(r, 422, "INSUFFICIENT_BALANCE")
        assert "Not enough balance" in body["details"]["nodeDetail"]

    @pytest.mark.parametrize("key_type", [KeyType.DEFAULT, KeyType.GL_SECP256K1])
    async def test_a_buy_beyond_the_collateral_held_is_422(
        self, api: httpx.AsyncClient, chain: Chain, listed: tuple[CreatedMarket, int], key_type: str
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate(key_type)
        chain.fund(wallet)  # 10,000 collateral
        r = await api.post(path(created), json=wallet.order("buy", "yes", 999, 10_000 * SHARE))
        check_envelope(r, 422, "INSUFFICIENT_BALANCE")
        r = await api.post(path(created), json=wallet.order("buy", "yes", 999, 9_000 * SHARE))
        assert r.status_code == 200, r.text

    async def test_a_sell_without_shares_is_422(
        self, api: httpx.AsyncClient, chain: Chain, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate()
        chain.fund(wallet)
        r = await api.post(path(created), json=wallet.order("sell", "yes", 500, SHARE))
        check_envelope(r, 422, "INSUFFICIENT_BALANCE")


class TestNodeFailures:
    async def test_node_down_is_502(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        async with service(dead_node) as client:
            r = await client.post(path(created), json=any_order())
        body = check_envelope(r, 502, "UPSTREAM_ERROR")
        assert body["details"]["requestId"] == body["requestId"]

    async def test_node_that_does_not_answer_is_502_upstream_timeout(
        self, service: ClientFactory, silent_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        async with service(silent_node, timeout_s=0.3) as client:
            r = await client.post(path(created), json=any_order())
        check_envelope(r, 502, "UPSTREAM_TIMEOUT")

    async def test_a_node_of_another_chain_is_502(
        self,
        service: ClientFactory,
        chain: Chain,
        tmp_path_factory: pytest.TempPathFactory,
        listed: tuple[CreatedMarket, int],
    ) -> None:
        # the market exists in the read model but not on this node: it refuses to build
        other = Chain(tmp_path_factory.mktemp("other-devnet"))
        try:
            wallet = Wallet.generate()
            other.fund(wallet)
            created, _ = listed
            async with service(other.url) as client:
                r = await client.post(path(created), json=wallet.order("buy", "yes", 5, SHARE))
            check_envelope(r, 502, "UPSTREAM_ERROR")
        finally:
            other.close()
