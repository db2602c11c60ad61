"""Every rejection path over HTTP: the node's status and ``{"detail"}``, and nothing changes.

Each case snapshots the wallets' balances and UTXOs (with the mempool), the market's state and
events and the chain tip before the bad request, and requires the same snapshot after it.
Transactions the devnet would not build (a bad tick, a tampered network id, ...) are made by
editing a valid build with ``predmarket.alephium.tx`` and signing the new txId.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from typing import Any

import pytest
from devnet_http import Devnet, Market, Wallet, buy_lock

from predmarket.alephium.constants import SECP256K1_N
from predmarket.alephium.script import encode_script
from predmarket.alephium.signing import sign_tx_id
from predmarket.alephium.tx import (
    Input,
    UnsignedTx,
    decode_unsigned_tx,
    encode_unsigned_tx,
    tx_id,
)

QUANTITY = 10**18


class Case:
    """A devnet with two funded wallets and a market where ``alice`` has a resting order."""

    def __init__(self, devnet: Devnet, market: Market) -> None:
        self.dn = devnet
        self.market = market
        self.alice = Wallet.generate()
        self.bob = Wallet.generate("gl-secp256k1")
        for wallet in (self.alice, self.bob):
            devnet.faucet(wallet.address)
        self.order = self.alice.place(
            devnet, market, side=0, outcome=0, price=300, quantity=QUANTITY
        )
        self.baseline = self.snapshot()

    def rebaseline(self) -> None:
        """After a transaction a test makes accepted on purpose: compare against the new state."""
        self.baseline = self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        return self.dn.snapshot([self.alice.address, self.bob.address], [self.market.address])

    def expect(self, response: Any, status: int, *fragments: str) -> str:
        """The response is the node's error: ``status``, a ``detail`` holding ``fragments``."""
        assert response.status_code == status, response.text
        body = response.json()
        assert set(body) <= {"detail", "resource"} and isinstance(body["detail"], str)
        for fragment in fragments:
            assert fragment in body["detail"], body["detail"]
        detail: str = body["detail"]
        return detail

    def submit_raw(self, unsigned: UnsignedTx, key: bytes) -> Any:
        """Sign ``unsigned`` (its own txId) with ``key`` and submit it."""
        raw = encode_unsigned_tx(unsigned)
        signature = sign_tx_id(key, tx_id(unsigned))
        return self.dn.post(
            "/transactions/submit", {"unsignedTx": raw.hex(), "signature": signature}
        )

    def order_build(self, wallet: Wallet, price: int = 400) -> dict[str, Any]:
        script, alph, tokens = self.dn.place_order_call(
            self.market, side=0, outcome=0, price=price, quantity=QUANTITY
        )
        return wallet.build_call(self.dn, script, alph=alph, tokens=tokens)

    def revert_code(self, name: str) -> str:
        return f"AssertionFailedWithErrorCode({self.market.address}, {self.dn.error_code(name)})"


@pytest.fixture
def case(devnet: Devnet, market: Market) -> Iterator[Case]:
    c = Case(devnet, market)
    yield c
    assert c.snapshot() == c.baseline, "a rejected request changed the devnet's state"


def _decode(build: dict[str, Any]) -> UnsignedTx:
    return decode_unsigned_tx(bytes.fromhex(build["unsignedTx"]))


class TestMalformedInput:
    @pytest.mark.parametrize(
        "body",
        [
            {"unsignedTx": "zz", "signature": "00" * 64},
            {"unsignedTx": "0", "signature": "00" * 64},
            {"unsignedTx": "00", "signature": "00" * 63},
            {"unsignedTx": "00", "signature": "xy" * 64},
            {"unsignedTx": "00"},
            {"signature": "00" * 64},
            {"unsignedTx": 5, "signature": "00" * 64},
            [],
            "text",
        ],
    )
    def test_submit_body(self, case: Case, body: Any) -> None:
        case.expect(case.dn.post("/transactions/submit", body), 400, "Invalid value for: body")

    def test_invalid_json(self, case: Case) -> None:
        response = case.dn.http.post(
            "/transactions/submit",
            content=b'{"unsignedTx": ',
            headers={"content-type": "application/json"},
        )
        case.expect(response, 400, "Invalid value for: body")

    def test_undecodable_tx(self, case: Case) -> None:
        response = case.dn.post(
            "/transactions/submit", {"unsignedTx": "0004ff", "signature": "00" * 64}
        )
        case.expect(response, 400, "Failed in decoding unsigned tx")
        response = case.dn.post("/transactions/decode-unsigned-tx", {"unsignedTx": "00"})
        case.expect(response, 400, "Failed in decoding unsigned tx")

    @pytest.mark.parametrize(
        "field",
        [
            {"fromPublicKey": "02" + "11" * 31},
            {"fromPublicKey": "nothex"},
            {"fromPublicKeyType": "bip340-schnorr"},
            {"attoAlphAmount": "-1"},
            {"attoAlphAmount": "1.5"},
            {"attoAlphAmount": str(2**256)},
            {"gasAmount": "20000"},
            {"gasAmount": 2**40},
            {"gasPrice": "1"},
            {"bytecode": "0"},
            {"bytecode": "ff"},
            {"tokens": [{"id": "00", "amount": "1"}]},
            {"gasEstimationMultiplier": 3},
            {"group": 9},
        ],
    )
    def test_execute_script_fields(self, case: Case, field: dict[str, Any]) -> None:
        script, alph, _ = case.dn.place_order_call(
            case.market, side=0, outcome=0, price=400, quantity=QUANTITY
        )
        body = {
            "fromPublicKey": case.alice.public_key.hex(),
            "bytecode": encode_script(script).hex(),
            "attoAlphAmount": str(alph),
            **field,
        }
        case.expect(case.dn.post("/contracts/unsigned-tx/execute-script", body), 400)

    @pytest.mark.parametrize(
        "destination",
        [
            {"address": "not-an-address", "attoAlphAmount": "1000000000000000000"},
            {"address": "{alice}", "attoAlphAmount": "1"},
            {"address": "{alice}", "attoAlphAmount": "abc"},
            {"address": "{market}", "attoAlphAmount": "1000000000000000000"},
            {"address": "{alice}", "attoAlphAmount": "1000000000000000000", "message": "zz"},
        ],
    )
    def test_build_transfer_fields(self, case: Case, destination: dict[str, Any]) -> None:
        address = destination["address"].format(
            alice=case.alice.address, market=case.market.address
        )
        body = {
            "fromPublicKey": case.bob.public_key.hex(),
            "fromPublicKeyType": "gl-secp256k1",
            "destinations": [{**destination, "address": address}],
        }
        case.expect(case.dn.post("/transactions/build", body), 400)

    @pytest.mark.parametrize(
        ("path", "params"),
        [
            ("/addresses/notanaddress/balance", {}),
            ("/addresses/notanaddress/utxos", {}),
            ("/addresses/{alice}/balance", {"mempool": "maybe"}),
            ("/transactions/status", {"txId": "12"}),
            ("/transactions/status", {"txId": "{tx}", "fromGroup": "x"}),
            ("/transactions/status", {"txId": "{tx}", "fromGroup": 7}),
            ("/transactions/details/xyz", {}),
            ("/events/contract/{market}", {}),
            ("/events/contract/{market}", {"start": -1}),
            ("/events/contract/{market}", {"start": 0, "limit": 0}),
            ("/events/contract/{market}", {"start": 0, "limit": 101}),
            ("/events/contract/{alice}", {"start": 0}),
            ("/events/contract/bad/current-count", {}),
            ("/contracts/{alice}/state", {}),
            ("/blockflow/is-block-in-main-chain", {"blockHash": "00"}),
            ("/blockflow/is-block-in-main-chain", {}),
        ],
    )
    def test_bad_query_or_path(self, case: Case, path: str, params: dict[str, Any]) -> None:
        names = {
            "alice": case.alice.address,
            "market": case.market.address,
            "tx": case.order.tx_id,
        }
        resolved = {k: v.format(**names) if isinstance(v, str) else v for k, v in params.items()}
        case.expect(case.dn.get(path.format(**names), **resolved), 400)


class TestSignatures:
    def test_signature_of_another_key(self, case: Case) -> None:
        build = case.order_build(case.alice)
        response = case.dn.post(
            "/transactions/submit",
            {"unsignedTx": build["unsignedTx"], "signature": case.bob.sign(build)},
        )
        case.expect(response, 400, "InvalidSignature", build["txId"])

    def test_high_s_signature(self, case: Case) -> None:
        build = case.order_build(case.alice)
        low = case.alice.sign(build)
        r, s = int(low[:64], 16), int(low[64:], 16)
        high = f"{r:064x}{SECP256K1_N - s:064x}"  # the same signature, non-canonical
        response = case.dn.post(
            "/transactions/submit", {"unsignedTx": build["unsignedTx"], "signature": high}
        )
        case.expect(response, 400, "InvalidSignature")

    def test_all_zero_signature(self, case: Case) -> None:
        build = case.order_build(case.alice)
        response = case.dn.post(
            "/transactions/submit", {"unsignedTx": build["unsignedTx"], "signature": "00" * 64}
        )
        case.expect(response, 400, "InvalidSignature")


class TestLedgerRules:
    def test_wrong_network_id(self, case: Case) -> None:
        unsigned = dataclasses.replace(_decode(case.order_build(case.alice)), network_id=0)
        case.expect(case.submit_raw(unsigned, case.alice.private_key), 400, "InvalidNetworkId")

    def test_unknown_input(self, case: Case) -> None:
        unsigned = _decode(case.order_build(case.alice))
        first = unsigned.inputs[0]
        forged = Input(first.hint, os.urandom(32), first.unlock)
        unsigned = dataclasses.replace(unsigned, inputs=(forged, *unsigned.inputs[1:]))
        case.expect(case.submit_raw(unsigned, case.alice.private_key), 400, "NonExistInput")

    def test_input_of_another_owner(self, case: Case) -> None:
        # Alice's inputs, with Bob's key in the unlock script: not Bob's to spend.
        bob_default = Wallet(case.bob.private_key)
        case.dn.faucet(bob_default.address)
        case.rebaseline()
        before = case.dn.snapshot([bob_default.address])
        build = case.order_build(bob_default)
        unsigned = _decode(build)
        theirs = _decode(case.order_build(case.alice)).inputs[0]
        stolen = Input(theirs.hint, theirs.key, unsigned.inputs[0].unlock)
        unsigned = dataclasses.replace(unsigned, inputs=(stolen,))
        response = case.submit_raw(unsigned, bob_default.private_key)
        case.expect(response, 400, "InvalidPublicKeyHash")
        after = case.dn.snapshot([bob_default.address])
        assert after[bob_default.address] == before[bob_default.address]

    def test_double_spend(self, case: Case) -> None:
        to = Wallet.generate().address
        first = case.alice.build_transfer(case.dn, to, 10**18)
        second = case.alice.build_transfer(case.dn, Wallet.generate().address, 10**18)
        assert _decode(first).inputs[0].key == _decode(second).inputs[0].key
        sent = case.alice.submit(case.dn, first)
        case.rebaseline()  # the accepted transfer is the one change this case makes
        response = case.dn.post(
            "/transactions/submit",
            {"unsignedTx": second["unsignedTx"], "signature": case.alice.sign(second)},
        )
        case.expect(response, 400, "DoubleSpending")
        resubmit = case.dn.post(
            "/transactions/submit",
            {"unsignedTx": first["unsignedTx"], "signature": case.alice.sign(first)},
        )
        case.expect(resubmit, 400, "TxAlreadyExisted")
        assert case.dn.status(sent.tx_id)["type"] == "Confirmed"
        assert case.dn.status(second["txId"]) == {"type": "TxNotFound"}

    def test_insufficient_funds_at_build(self, case: Case) -> None:
        too_much = case.dn.alph(case.bob.address) + 1
        body = {
            "fromPublicKey": case.bob.public_key.hex(),
            "fromPublicKeyType": "gl-secp256k1",
            "destinations": [{"address": case.alice.address, "attoAlphAmount": str(too_much)}],
        }
        case.expect(case.dn.post("/transactions/build", body), 400, "Not enough balance")

    def test_insufficient_funds_at_submit(self, case: Case) -> None:
        build = case.alice.build_transfer(case.dn, case.bob.address, 10**18)
        unsigned = _decode(build)
        first = unsigned.fixed_outputs[0]
        richer = dataclasses.replace(first, amount=first.amount + 10**24)
        unsigned = dataclasses.replace(
            unsigned, fixed_outputs=(richer, *unsigned.fixed_outputs[1:])
        )
        response = case.submit_raw(unsigned, case.alice.private_key)
        case.expect(response, 400, "InvalidAlphBalance")

    def test_not_enough_collateral_for_the_order(self, case: Case) -> None:
        script, alph, tokens = case.dn.place_order_call(
            case.market, side=0, outcome=0, price=999, quantity=10**6 * QUANTITY
        )
        response = case.bob.request_call(case.dn, script, alph=alph, tokens=tokens)
        case.expect(response, 400, "Not enough balance for token")

    def test_gas_price_below_minimum(self, case: Case) -> None:
        unsigned = dataclasses.replace(_decode(case.order_build(case.alice)), gas_price=10**10)
        case.expect(case.submit_raw(unsigned, case.alice.private_key), 400, "InvalidGasPrice")


class TestContractReverts:
    """A failing call is refused with the contract's code (``AssertionFailedWithErrorCode``),
    both when execute-script simulates it and when a hand-made transaction is submitted."""

    def _bad_order(self, case: Case, *, price: int, quantity: int) -> Any:
        script, alph, tokens = case.dn.place_order_call(
            case.market,
            side=0,
            outcome=0,
            price=price,
            quantity=quantity,
            lock=buy_lock(400, QUANTITY),
        )
        return script, alph, tokens

    @pytest.mark.parametrize(
        ("price", "quantity", "error"),
        [
            (0, QUANTITY, "INVALID_PRICE"),
            (1000, QUANTITY, "INVALID_PRICE"),
            (400, QUANTITY + 1, "INVALID_FILL"),
            (400, 0, "INVALID_FILL"),
        ],
    )
    def test_execute_script_refuses(
        self, case: Case, price: int, quantity: int, error: str
    ) -> None:
        script, alph, tokens = self._bad_order(case, price=price, quantity=quantity)
        response = case.alice.request_call(case.dn, script, alph=alph, tokens=tokens)
        case.expect(response, 400, case.revert_code(error))

    def test_codes_are_the_published_ones(self, case: Case) -> None:
        assert case.dn.error_code("INVALID_PRICE") == 13
        assert case.dn.error_code("INVALID_FILL") == 12

    @pytest.mark.parametrize(
        ("price", "quantity", "error"),
        [(1000, QUANTITY, "INVALID_PRICE"), (400, QUANTITY + 1, "INVALID_FILL")],
    )
    def test_submit_refuses(self, case: Case, price: int, quantity: int, error: str) -> None:
        # A valid build whose script is swapped for the bad call: same inputs and approvals.
        good = _decode(case.order_build(case.alice, price=400))
        bad_script, _, _ = self._bad_order(case, price=price, quantity=quantity)
        unsigned = dataclasses.replace(good, script=bad_script)
        response = case.submit_raw(unsigned, case.alice.private_key)
        case.expect(response, 400, "TxScriptExeFailed", case.revert_code(error))
        assert case.dn.status(tx_id(unsigned).hex()) == {"type": "TxNotFound"}

    def test_cancel_of_another_owners_order(self, case: Case) -> None:
        (order,) = case.dn.get_ok(f"/devnet/markets/{case.market.address}/orders")["orders"]
        script = case.dn.cancel_order_call(case.market, order["orderId"])
        response = case.bob.request_call(case.dn, script)
        case.expect(response, 400, case.revert_code("NOT_ORDER_OWNER"))

    def test_cancel_of_an_unknown_order(self, case: Case) -> None:
        script = case.dn.cancel_order_call(case.market, 10**6)
        response = case.alice.request_call(case.dn, script)
        case.expect(response, 400, case.revert_code("UNKNOWN_ORDER"))

    def test_unknown_contract(self, case: Case) -> None:
        ghost = dataclasses.replace(case.market, market_id=bytes(31) + b"\x00")
        script, alph, tokens = case.dn.place_order_call(
            ghost, side=0, outcome=0, price=400, quantity=QUANTITY
        )
        response = case.alice.request_call(case.dn, script, alph=alph, tokens=tokens)
        case.expect(response, 400)
