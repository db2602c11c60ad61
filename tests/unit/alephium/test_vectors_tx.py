"""Known-answer tests of the transaction and script codecs, byte for byte.

The expected values are lines of ``tests/vectors/chain-vectors.txt``, produced with the official
TypeScript SDK (chain-formats.md §7). Each transaction is built here from its parts, as the
vector script built it, and each vector is also decoded and re-encoded to the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from predmarket.alephium import signing
from predmarket.alephium.address import contract_address, format_address, parse_address
from predmarket.alephium.constants import ONE_ALPH
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import P2PK, P2PKH, LockupScript, encode_lockup, output_hint
from predmarket.alephium.script import (
    Approvals,
    ApproveAlph,
    CallerAddress,
    ContractCall,
    TxScript,
    ValAddress,
    ValBool,
    ValByteVec,
    ValU256,
    build_contract_call,
    decode_script,
    encode_script,
    parse_contract_call,
)
from predmarket.alephium.tx import (
    AssetOutput,
    Input,
    P2PKHUnlock,
    P2PKUnlock,
    Transaction,
    UnsignedTx,
    decode_transaction,
    decode_unsigned_tx,
    encode_transaction,
    encode_unsigned_tx,
    from_group,
    output_ref_key,
    signed_transaction,
    to_group,
    tx_id,
    unsigned_tx_to_api_json,
)

VECTORS_PATH = Path(__file__).resolve().parents[2] / "vectors" / "chain-vectors.txt"


def _load(path: Path) -> dict[str, str]:
    vectors: dict[str, str] = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition(" = ")
        if sep:
            vectors[key] = value
    return vectors


V = _load(VECTORS_PATH)

PRIVATE_KEY = bytes.fromhex(V["privateKey"])
PUBLIC_KEY = bytes.fromhex(V["publicKey"])
OWN: LockupScript = parse_address(V["address.default"])
DEST: LockupScript = parse_address(V["address2"])
GL2: LockupScript = parse_address(V["address.gl"] + ":2")
UTXO_KEY = blake2b256(b"test-utxo")
CONTRACT_ID = bytes.fromhex("aa" * 31 + "00")


def _tx1() -> UnsignedTx:
    own_hint = output_hint(OWN)
    return UnsignedTx(
        version=0,
        network_id=0,
        script=None,
        gas_amount=20_000,
        gas_price=100_000_000_000,
        inputs=(Input(own_hint, UTXO_KEY, P2PKHUnlock(PUBLIC_KEY)),),
        fixed_outputs=(
            AssetOutput(ONE_ALPH, DEST),
            AssetOutput(8_998_000_000_000_000_000, OWN),
        ),
    )


def _script() -> TxScript:
    return build_contract_call(
        CONTRACT_ID,
        3,
        [ValU256(12345), ValByteVec(bytes.fromhex("deadbeef")), ValBool(True), ValAddress(DEST)],
        caller_approvals=Approvals(alph=210_000_000_000_000_000),
    )


def _tx2() -> UnsignedTx:
    tx1 = _tx1()
    return UnsignedTx(
        version=0,
        network_id=0,
        script=_script(),
        gas_amount=100_000,
        gas_price=tx1.gas_price,
        inputs=tx1.inputs,
        fixed_outputs=(AssetOutput(9_780_000_000_000_000_000, OWN),),
    )


def _tx3() -> UnsignedTx:
    tx1 = _tx1()
    return UnsignedTx(
        version=0,
        network_id=0,
        script=None,
        gas_amount=20_000,
        gas_price=tx1.gas_price,
        inputs=(Input(0x12345679, UTXO_KEY, P2PKUnlock()),),
        fixed_outputs=(AssetOutput(ONE_ALPH, GL2),),
    )


BUILDERS = {"tx1": _tx1, "tx2": _tx2, "tx3": _tx3}


class TestTx1Parts:
    def test_utxo_key(self) -> None:
        assert UTXO_KEY.hex() == V["tx1.utxoKey"]

    def test_input_hint_is_own_output_hint(self) -> None:
        assert output_hint(OWN) == int(V["tx1.inputHint(int32)"])

    def test_output_lockups(self) -> None:
        assert encode_lockup(OWN).hex() == V["address.default.bytes"]
        assert isinstance(DEST, P2PKH)


@pytest.mark.parametrize("name", sorted(BUILDERS))
class TestUnsignedTxVectors:
    def test_built_bytes(self, name: str) -> None:
        assert encode_unsigned_tx(BUILDERS[name]()).hex() == V[f"{name}.unsignedTx"]

    def test_tx_id(self, name: str) -> None:
        assert tx_id(BUILDERS[name]()).hex() == V[f"{name}.txId"]

    def test_decode_reencode(self, name: str) -> None:
        raw = bytes.fromhex(V[f"{name}.unsignedTx"])
        decoded = decode_unsigned_tx(raw)
        assert decoded == BUILDERS[name]()
        assert encode_unsigned_tx(decoded) == raw
        assert decode_unsigned_tx(V[f"{name}.unsignedTx"]) == decoded  # hex form too

    def test_signature(self, name: str) -> None:
        key = "tx3.signature(gl key)" if name == "tx3" else f"{name}.signature"
        digest = tx_id(BUILDERS[name]())
        assert signing.sign_tx_id(PRIVATE_KEY, digest) == V[key]
        assert signing.verify_hash(digest, V[key], PUBLIC_KEY)


def test_tx1_txid_is_blake2b_of_bytes() -> None:
    raw = bytes.fromhex(V["tx1.unsignedTx"])
    assert blake2b256(raw).hex() == V["tx1.txId(blake2b256 check)"] == V["tx1.txId"]


class TestFullTransaction:
    def test_built_from_parts(self) -> None:
        signature = bytes.fromhex(V["tx1.signature"])
        full = signed_transaction(_tx1(), [signature])
        assert full.script_execution_ok is True
        assert full.contract_inputs == () and full.generated_outputs == ()
        assert encode_transaction(full).hex() == V["tx1.fullTransaction(serialized)"]

    def test_decode_reencode(self) -> None:
        raw = bytes.fromhex(V["tx1.fullTransaction(serialized)"])
        decoded = decode_transaction(raw)
        assert isinstance(decoded, Transaction)
        assert decoded.unsigned == _tx1()
        assert decoded.input_signatures == (bytes.fromhex(V["tx1.signature"]),)
        assert encode_transaction(decoded) == raw

    def test_submit_body(self) -> None:
        body = json.loads(V["tx1.submitBody"])
        assert body["unsignedTx"] == encode_unsigned_tx(_tx1()).hex()
        assert body["signature"] == V["tx1.signature"]


class TestApiJson:
    @pytest.mark.parametrize("name", ["tx1", "tx3"])
    def test_exact_json(self, name: str) -> None:
        got = json.dumps(unsigned_tx_to_api_json(BUILDERS[name]()), separators=(",", ":"))
        assert got == V[f"{name}.apiJson"]

    @pytest.mark.parametrize("name", ["tx1", "tx3"])
    def test_from_decoded_bytes(self, name: str) -> None:
        decoded = decode_unsigned_tx(V[f"{name}.unsignedTx"])
        assert unsigned_tx_to_api_json(decoded) == json.loads(V[f"{name}.apiJson"])

    def test_output_keys_are_output_refs(self) -> None:
        api = json.loads(V["tx1.apiJson"])
        txid = bytes.fromhex(V["tx1.txId"])
        for index, output in enumerate(api["fixedOutputs"]):
            assert output_ref_key(txid, index).hex() == output["key"]

    def test_script_opt_sits_between_gas_amount_and_gas_price(self) -> None:
        api = unsigned_tx_to_api_json(_tx2())
        assert list(api)[3:6] == ["gasAmount", "scriptOpt", "gasPrice"]
        assert api["scriptOpt"] == V["script.bytecode"]
        assert api["txId"] == V["tx2.txId"]


class TestScriptVector:
    def test_built_bytecode(self) -> None:
        assert encode_script(_script()).hex() == V["script.bytecode"]

    def test_decode_reencode(self) -> None:
        raw = bytes.fromhex(V["script.bytecode"])
        decoded = decode_script(raw)
        assert decoded == _script()
        assert encode_script(decoded) == raw
        instrs = decoded.methods[0].instrs
        assert (instrs[0], instrs[2]) == (CallerAddress, ApproveAlph)

    def test_parse_recovers_the_call(self) -> None:
        call = parse_contract_call(decode_script(V["script.bytecode"]))
        assert call == ContractCall(
            contract_id=CONTRACT_ID,
            method_index=3,
            args=(
                ValU256(12345),
                ValByteVec(bytes.fromhex("deadbeef")),
                ValBool(True),
                ValAddress(DEST),
            ),
            approvals=Approvals(alph=210_000_000_000_000_000),
            returns=0,
        )

    def test_contract_address(self) -> None:
        assert contract_address(CONTRACT_ID) == V["script.contractAddress"]


class TestGroupless:
    def test_lockup_lines(self) -> None:
        default = parse_address(V["address.gl"])
        assert isinstance(default, P2PK) and isinstance(GL2, P2PK)
        assert encode_lockup(default).hex() == V["lockup.gl(default group)"]
        assert encode_lockup(GL2).hex() == V["lockup.gl:2"]
        assert format_address(GL2) == V["address.gl"] + ":2"

    def test_groups(self) -> None:
        assert from_group(_tx1()) == to_group(_tx1()) == 1
        assert from_group(_tx3()) == 1
        assert to_group(_tx3()) == 2
