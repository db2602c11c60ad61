"""Known-answer tests: keys, addresses, groups, hashes, signatures and compact integers.

Every line of ``tests/vectors/chain-vectors.txt`` (produced with the official TypeScript SDK,
chain-formats.md §7) is one parametrized case named after its key. The transaction-codec lines
(unsigned/full transaction bytes, txIds, script bytecode) are checked by the codec's own tests;
``test_every_vector_line_is_owned`` makes sure no line is silently left unchecked.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from predmarket.alephium import address as addr
from predmarket.alephium import signing
from predmarket.alephium.base58 import b58decode, b58encode
from predmarket.alephium.errors import InvalidAddress
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import (
    P2PK,
    P2PKH,
    KeyKind,
    PublicKeyLike,
    encode_lockup,
    group_of,
    output_hint,
)
from predmarket.alephium.serde import (
    Reader,
    encode_i32,
    encode_i256,
    encode_u256,
)

VECTORS_PATH = Path(__file__).resolve().parents[2] / "vectors" / "chain-vectors.txt"


def _load(path: Path) -> dict[str, str]:
    vectors: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(" = ")
        assert sep, f"malformed vector line: {line!r}"
        assert key not in vectors, f"duplicate vector key {key!r}"
        vectors[key] = value
    return vectors


V = _load(VECTORS_PATH)

PRIVATE_KEY = bytes.fromhex(V["privateKey"])
PUBLIC_KEY = bytes.fromhex(V["publicKey"])
MESSAGE: str = json.loads(V["message(JSON)"])

#: Lines that belong to the transaction / script codec tests.
CODEC_OWNED = frozenset(
    {
        "tx1.unsignedTx",
        "tx1.txId",
        "tx1.txId(blake2b256 check)",
        "tx1.fullTransaction(serialized)",
        "tx2.unsignedTx",
        "tx2.txId",
        "tx3.unsignedTx",
        "tx3.txId",
        "script.bytecode",
    }
)
COMPACT_LINES = frozenset({"i32", "u256", "i256"})


def _flag(text: str) -> bool:
    assert text in ("true", "false"), text
    return text == "true"


def _gl_address_with_suffix(value: str, group: int) -> None:
    # "<group> valid=<bool> bytes=<hex>"
    group_text, valid_text, bytes_text = value.split(" ")
    text = f"{V['address.gl']}:{group}"
    assert addr.group_of_address(text) == int(group_text) == group
    assert addr.is_valid_address(text) is _flag(valid_text.removeprefix("valid="))
    assert addr.address_to_bytes(text).hex() == bytes_text.removeprefix("bytes=")
    script = addr.parse_address(text)
    assert addr.format_address(script) == text


def _check_gl_suffix(group: int) -> Callable[[str], None]:
    def check(value: str) -> None:
        _gl_address_with_suffix(value, group)

    return check


def _check_private_key(value: str) -> None:
    key = bytes.fromhex(value)
    assert len(key) == 32
    assert signing.public_key_from_private(key).hex() == V["publicKey"]


def _check_public_key(value: str) -> None:
    assert signing.public_key_from_private(PRIVATE_KEY).hex() == value


def _check_address_default(value: str) -> None:
    assert addr.address_from_public_key(PUBLIC_KEY) == value
    assert addr.address_from_public_key(PUBLIC_KEY, addr.KeyType.DEFAULT) == value
    assert addr.parse_address(value) == P2PKH(blake2b256(PUBLIC_KEY))
    assert addr.address_matches_key_type(value, "default")
    assert not addr.address_matches_key_type(value, "gl-secp256k1")


def _check_group_default(value: str) -> None:
    assert addr.group_of_address(V["address.default"]) == int(value)
    assert group_of(addr.lockup_from_public_key(PUBLIC_KEY, "default")) == int(value)


def _check_address_default_bytes(value: str) -> None:
    assert addr.address_to_bytes(V["address.default"]).hex() == value
    assert b58decode(V["address.default"]).hex() == value


def _check_address_gl(value: str) -> None:
    assert addr.address_from_public_key(PUBLIC_KEY, "gl-secp256k1") == value
    assert len(value) == 53
    assert addr.address_matches_key_type(value, addr.KeyType.GL_SECP256K1)
    assert not addr.address_matches_key_type(value, "default")
    script = addr.parse_address(value)
    assert addr.format_address(script, explicit_group=False) == value


def _check_group_gl_default(value: str) -> None:
    assert addr.group_of_address(V["address.gl"]) == int(value)
    assert addr.lockup_from_public_key(PUBLIC_KEY, "gl-secp256k1") == P2PK(
        PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), int(value)
    )


def _check_address_gl_bytes(value: str) -> None:
    assert addr.address_to_bytes(V["address.gl"]).hex() == value
    assert encode_lockup(addr.lockup_from_public_key(PUBLIC_KEY, "gl-secp256k1")).hex() == value


def _check_address_gl_base58(value: str) -> None:
    assert b58decode(V["address.gl"]).hex() == value
    assert b58encode(bytes.fromhex(value)) == V["address.gl"]


def _check_gl_suffix_invalid(value: str) -> None:
    text = f"{V['address.gl']}:4"
    assert addr.is_valid_address(text) is _flag(value) is False
    with pytest.raises(InvalidAddress):
        addr.parse_address(text)


def _check_blake2b_pubkey(value: str) -> None:
    assert blake2b256(PUBLIC_KEY).hex() == value


def _check_private_key2(value: str) -> None:
    public_key = signing.public_key_from_private(bytes.fromhex(value))
    assert addr.address_from_public_key(public_key) == V["address2"]


def _check_address2(value: str) -> None:
    public_key = signing.public_key_from_private(bytes.fromhex(V["privateKey2"]))
    assert addr.address_from_public_key(public_key) == value
    assert addr.format_address(addr.parse_address(value)) == value


def _check_group2(value: str) -> None:
    assert addr.group_of_address(V["address2"]) == int(value)


def _check_message(value: str) -> None:
    assert json.loads(value) == "hello\nworld"


def _check_hash(hasher: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        assert signing.hash_message(MESSAGE, hasher).hex() == value

    return check


def _check_signature(hasher: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        assert signing.sign_message(PRIVATE_KEY, MESSAGE, hasher) == value
        assert signing.verify_message(MESSAGE, hasher, PUBLIC_KEY, value)
        assert signing.verify_hash(bytes.fromhex(V[f"hash.{hasher}"]), value, PUBLIC_KEY)

    return check


def _check_verify(hasher: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        signature = V[f"signature.{hasher}"]
        assert signing.verify_message(MESSAGE, hasher, PUBLIC_KEY, signature) is _flag(value)
        # The same signature must not verify under another hasher or another message.
        other = "sha256" if hasher != "sha256" else "blake2b"
        assert not signing.verify_message(MESSAGE, other, PUBLIC_KEY, signature)
        assert not signing.verify_message(MESSAGE + " ", hasher, PUBLIC_KEY, signature)

    return check


def _check_signature_gl(value: str) -> None:
    # A gl-secp256k1 wallet has the same key and signs exactly like a default one.
    gl_public_key = bytes.fromhex(V["publicKey(gl)"])
    assert signing.sign_message(PRIVATE_KEY, MESSAGE, signing.MessageHasher.ALEPHIUM) == value
    assert signing.verify_message(MESSAGE, "alephium", gl_public_key, value)


def _check_public_key_gl(value: str) -> None:
    assert value == V["publicKey"]
    assert addr.address_from_public_key(bytes.fromhex(value), "gl-secp256k1") == V["address.gl"]


def _check_signature_identity(value: str) -> None:
    raw_hash = V["hash.alephium"]
    assert signing.hash_message(raw_hash, "identity").hex() == raw_hash
    assert signing.sign_message(PRIVATE_KEY, raw_hash, "identity") == value
    assert signing.verify_message(raw_hash, "identity", PUBLIC_KEY, value)


def _check_input_hint(value: str) -> None:
    assert output_hint(addr.parse_address(V["address.default"])) == int(value)


def _check_utxo_key(value: str) -> None:
    # The vector script derives its made-up UTXO key as blake2b256("test-utxo").
    assert blake2b256(b"test-utxo").hex() == value


def _check_tx_signature(tx: str, public_key_key: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        tx_id = bytes.fromhex(V[f"{tx}.txId"])
        public_key = bytes.fromhex(V[public_key_key])
        assert signing.sign_tx_id(PRIVATE_KEY, tx_id) == value
        assert signing.sign_hash(PRIVATE_KEY, tx_id) == value
        assert signing.verify_hash(tx_id, value, public_key)

    return check


def _check_tx1_verify(value: str) -> None:
    tx_id = bytes.fromhex(V["tx1.txId"])
    assert signing.verify_hash(tx_id, V["tx1.signature"], PUBLIC_KEY) is _flag(value)


def _check_api_json_outputs(value: str) -> None:
    api = json.loads(value)
    for output in api["fixedOutputs"]:
        script = addr.parse_address(output["address"])
        assert output_hint(script) == output["hint"]
        # The node renders every address the way format_address does (P2PK with ':N').
        assert addr.format_address(script) == output["address"]


def _check_tx1_api_json(value: str) -> None:
    _check_api_json_outputs(value)
    api = json.loads(value)
    assert [o["hint"] for o in api["fixedOutputs"]] == [-1243776413, -1308003579]
    own = addr.parse_address(V["address.default"])
    assert api["inputs"][0]["outputRef"]["hint"] == output_hint(own)


def _check_tx3_api_json(value: str) -> None:
    _check_api_json_outputs(value)
    api = json.loads(value)
    (output,) = api["fixedOutputs"]
    assert output["hint"] == -1906222409
    assert output["address"] == f"{V['address.gl']}:2"
    script = addr.lockup_from_public_key(PUBLIC_KEY, "gl-secp256k1", group=2)
    assert output_hint(script) == -1906222409
    assert group_of(script) == 2


def _check_submit_body(value: str) -> None:
    body = json.loads(value)
    assert body["signature"] == V["tx1.signature"]
    # The txId is the blake2b of the unsigned bytes that are submitted with the signature.
    tx_id = blake2b256(bytes.fromhex(body["unsignedTx"]))
    assert signing.verify_hash(tx_id, body["signature"], PUBLIC_KEY)


def _check_contract_address(value: str) -> None:
    contract_id = bytes.fromhex("aa" * 31 + "00")
    assert addr.contract_address(contract_id) == value
    assert addr.contract_id_from_address(value) == contract_id
    assert addr.group_of_address(value) == 0


def _check_lockup_gl(group: int | None) -> Callable[[str], None]:
    def check(value: str) -> None:
        script = addr.lockup_from_public_key(PUBLIC_KEY, "gl-secp256k1", group)
        assert encode_lockup(script).hex() == value
        text = V["address.gl"] if group is None else f"{V['address.gl']}:{group}"
        assert addr.address_to_bytes(text).hex() == value

    return check


CHECKS: dict[str, Callable[[str], None]] = {
    "privateKey": _check_private_key,
    "publicKey": _check_public_key,
    "publicKey(gl)": _check_public_key_gl,
    "address.default": _check_address_default,
    "group.default": _check_group_default,
    "address.default.bytes": _check_address_default_bytes,
    "address.gl": _check_address_gl,
    "group.gl(default group)": _check_group_gl_default,
    "address.gl.bytes(with group byte)": _check_address_gl_bytes,
    "address.gl.base58decoded": _check_address_gl_base58,
    **{f"address.gl:{g} group": _check_gl_suffix(g) for g in range(4)},
    "address.gl:4 valid": _check_gl_suffix_invalid,
    "blake2b256(pubkey)": _check_blake2b_pubkey,
    "privateKey2": _check_private_key2,
    "address2": _check_address2,
    "group2": _check_group2,
    "message(JSON)": _check_message,
    **{f"hash.{h}": _check_hash(h) for h in ("alephium", "blake2b", "sha256")},
    **{f"signature.{h}": _check_signature(h) for h in ("alephium", "blake2b", "sha256")},
    **{f"verify.{h}": _check_verify(h) for h in ("alephium", "blake2b", "sha256")},
    "signature.alephium(gl-secp256k1 key)": _check_signature_gl,
    "signature.identity(of alephium hash)": _check_signature_identity,
    "tx1.inputHint(int32)": _check_input_hint,
    "tx1.utxoKey": _check_utxo_key,
    "tx1.signature": _check_tx_signature("tx1", "publicKey"),
    "tx1.signature==transactionSign": _check_tx1_verify,
    "tx1.verify": _check_tx1_verify,
    "tx1.apiJson": _check_tx1_api_json,
    "tx1.submitBody": _check_submit_body,
    "script.contractAddress": _check_contract_address,
    "tx2.signature": _check_tx_signature("tx2", "publicKey"),
    "lockup.gl(default group)": _check_lockup_gl(None),
    "lockup.gl:2": _check_lockup_gl(2),
    "tx3.signature(gl key)": _check_tx_signature("tx3", "publicKey(gl)"),
    "tx3.apiJson": _check_tx3_api_json,
}


def test_every_vector_line_is_owned() -> None:
    unowned = set(V) - set(CHECKS) - CODEC_OWNED - COMPACT_LINES
    assert not unowned, f"vector lines nobody checks: {sorted(unowned)}"
    assert not set(CHECKS) - set(V), "checks for vector lines that no longer exist"


@pytest.mark.parametrize("key", [pytest.param(k, id=k) for k in V if k in CHECKS])
def test_vector(key: str) -> None:
    CHECKS[key](V[key])


def _compact_cases(line: str) -> list[tuple[int, str]]:
    pairs = [item.split(":") for item in V[line].split()]
    return [(int(n), h) for n, h in pairs]


COMPACT_CODECS: dict[str, tuple[Callable[[int], bytes], Callable[[Reader], int]]] = {
    "i32": (encode_i32, Reader.i32),
    "u256": (encode_u256, Reader.u256),
    "i256": (encode_i256, Reader.i256),
}


@pytest.mark.parametrize(
    ("line", "value", "hex_bytes"),
    [
        pytest.param(line, n, h, id=f"{line}:{n}")
        for line in ("i32", "u256", "i256")
        for n, h in _compact_cases(line)
    ],
)
def test_compact_integer_vector(line: str, value: int, hex_bytes: str) -> None:
    encode, read = COMPACT_CODECS[line]
    assert encode(value).hex() == hex_bytes
    reader = Reader(bytes.fromhex(hex_bytes))
    assert read(reader) == value
    reader.finish()


def test_compact_vector_lines_are_not_empty() -> None:
    # Guards the parametrization above against a parser that silently yields nothing.
    assert len(_compact_cases("i32")) == 21
    assert len(_compact_cases("u256")) == 11
    assert len(_compact_cases("i256")) == 4


def test_hash_vectors_use_the_documented_preimages() -> None:
    # Independent recomputation with hashlib, so a bug shared by hash_message and blake2b256
    # cannot make both sides agree.
    alephium = hashlib.blake2b(b"Alephium Signed Message: hello\nworld", digest_size=32)
    assert alephium.hexdigest() == V["hash.alephium"]
    assert hashlib.blake2b(b"hello\nworld", digest_size=32).hexdigest() == V["hash.blake2b"]
    assert hashlib.sha256(b"hello\nworld").hexdigest() == V["hash.sha256"]
