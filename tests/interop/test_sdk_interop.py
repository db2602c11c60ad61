"""Our chain formats against the official TypeScript SDK (``@alephium/web3`` 3.0.5).

Every case builds a value with our code, asks the SDK (through the node oracle of conftest.py)
for its view of the same value, and requires the two to agree exactly: transaction bytes, API
JSON and txId, message hashes and signatures (both sides are RFC 6979, so byte-identical),
addresses, groups and scripts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from predmarket.alephium.address import (
    KeyType,
    address_from_public_key,
    address_to_bytes,
    contract_address,
    format_address,
    group_of_address,
    is_valid_address,
    lockup_from_public_key,
    parse_address,
)
from predmarket.alephium.base58 import ALPHABET, b58decode, b58encode
from predmarket.alephium.constants import (
    DUST_AMOUNT,
    I32_MAX,
    I32_MIN,
    I256_MAX,
    I256_MIN,
    MAX_OUTPUT_DATA_SIZE,
    SECP256K1_N,
    TOTAL_NUMBER_OF_GROUPS,
    U256_MAX,
)
from predmarket.alephium.lockup import (
    KEY_LENGTHS,
    P2C,
    P2HMPK,
    P2MPKH,
    P2PK,
    P2PKH,
    P2SH,
    KeyKind,
    LockupScript,
    PublicKeyLike,
    encode_lockup,
)
from predmarket.alephium.script import (
    OPCODES,
    Approvals,
    Imm,
    Instr,
    Method,
    TxScript,
    Val,
    ValAddress,
    ValBool,
    ValByteVec,
    ValI256,
    ValU256,
    build_contract_call,
    decode_script,
    encode_script,
)
from predmarket.alephium.serde import encode_u256
from predmarket.alephium.signing import (
    hash_message,
    public_key_from_private,
    sign_message,
    sign_tx_id,
    verify_hash,
    verify_message,
)
from predmarket.alephium.tx import (
    P2PK_UNLOCK,
    SAME_AS_PREVIOUS,
    AssetOutput,
    Input,
    P2HMPKUnlock,
    P2MPKHUnlock,
    P2PKHUnlock,
    P2SHUnlock,
    Token,
    UnlockScript,
    UnsignedTx,
    decode_transaction,
    decode_unsigned_tx,
    encode_asset_output,
    encode_transaction,
    encode_unsigned_tx,
    from_group,
    signed_transaction,
    to_group,
    tx_id,
    unsigned_tx_to_api_json,
)

Call = Callable[..., dict[str, Any]]

KEY_TYPES = [KeyType.DEFAULT, KeyType.GL_SECP256K1]
HASHERS = ["alephium", "blake2b", "sha256"]


#: Multiplies every example count, e.g. PREDMARKET_INTEROP_SCALE=20 for a long hunt.
EXAMPLE_SCALE = float(os.environ.get("PREDMARKET_INTEROP_SCALE", "1"))


def interop_settings(examples: int) -> settings:
    # Each example is a few pipe round trips to node; no per-example deadline on IPC.
    return settings(
        max_examples=max(1, round(examples * EXAMPLE_SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def ok(result: dict[str, Any], what: str) -> dict[str, Any]:
    assert "error" not in result, f"SDK refused {what}: {result['error']}"
    return result


# --- strategies ----------------------------------------------------------------------------------

private_keys = st.one_of(
    st.sampled_from([1, 2, SECP256K1_N - 1, SECP256K1_N // 2]),
    st.integers(min_value=1, max_value=SECP256K1_N - 1),
).map(lambda n: n.to_bytes(32, "big"))
key_types = st.sampled_from(KEY_TYPES)
groups = st.integers(min_value=0, max_value=TOTAL_NUMBER_OF_GROUPS - 1)
hash32 = st.binary(min_size=32, max_size=32)
# A real contract id ends with its group byte (SC ContractId.from).
contract_ids = st.builds(
    lambda body, g: body + bytes([g]), st.binary(min_size=31, max_size=31), groups
)


@st.composite
def secp_public_keys(draw: st.DrawFn) -> bytes:
    return public_key_from_private(draw(private_keys))


@st.composite
def p2mpkh_scripts(draw: st.DrawFn) -> P2MPKH:
    hashes = draw(st.lists(hash32, min_size=1, max_size=16))
    m = draw(st.integers(min_value=1, max_value=len(hashes)))
    return P2MPKH(tuple(hashes), m)


@st.composite
def p2pk_scripts(draw: st.DrawFn) -> P2PK:
    # secp256k1 keys are real points; the other kinds only need the right length here.
    kind = draw(st.sampled_from(list(KeyKind)))
    if kind is KeyKind.SECP256K1:
        key = draw(secp_public_keys())
    else:
        n = KEY_LENGTHS[kind]
        key = draw(st.binary(min_size=n, max_size=n))
    return P2PK(PublicKeyLike(kind, key), draw(groups))


lockup_scripts: st.SearchStrategy[LockupScript] = st.one_of(
    st.builds(P2PKH, hash32),
    p2mpkh_scripts(),
    st.builds(P2SH, hash32),
    st.builds(P2C, contract_ids),
    p2pk_scripts(),
    st.builds(P2HMPK, hash32, groups),
)


# --- addresses -----------------------------------------------------------------------------------


@interop_settings(100)
@given(sk=private_keys, key_type=key_types)
def test_address_from_private_key_agrees(call: Call, sk: bytes, key_type: KeyType) -> None:
    theirs = ok(call("address", privateKey=sk.hex(), keyType=key_type.value), "address")
    public_key = public_key_from_private(sk)
    ours = address_from_public_key(public_key, key_type)
    assert public_key.hex() == theirs["publicKey"]
    assert ours == theirs["address"]
    assert group_of_address(ours) == theirs["group"]
    from_pk = ok(
        call("addressFromPublicKey", publicKey=public_key.hex(), keyType=key_type.value),
        "addressFromPublicKey",
    )
    assert from_pk == {"address": ours, "group": theirs["group"]}


@interop_settings(60)
@given(public_key=secp_public_keys())
def test_groupless_group_suffixes_agree(call: Call, public_key: bytes) -> None:
    bare = address_from_public_key(public_key, KeyType.GL_SECP256K1)
    for group in range(TOTAL_NUMBER_OF_GROUPS):
        script = lockup_from_public_key(public_key, KeyType.GL_SECP256K1, group)
        text = format_address(script)
        assert text == f"{bare}:{group}"
        theirs = call("addressInfo", address=text)
        assert theirs == {
            "valid": True,
            "group": group,
            "bytes": address_to_bytes(text).hex(),
        }
        assert group_of_address(text) == group
    for bad in (f"{bare}:{TOTAL_NUMBER_OF_GROUPS}", f"{bare}:9", f"{bare}:x"):
        assert call("addressInfo", address=bad)["valid"] is False, bad
        assert not is_valid_address(bad), bad


@interop_settings(150)
@given(script=lockup_scripts)
def test_lockup_scripts_format_and_parse_like_the_sdk(call: Call, script: LockupScript) -> None:
    binary = encode_lockup(script)
    text = format_address(script)
    # Lockup bytes -> address string (the SDK always shows a groupless group as ':N').
    assert ok(call("addressFromLockup", hex=binary.hex()), "addressFromLockup") == {
        "address": text,
        "trailingBytes": 0,
    }
    # Address string -> validity, group and bytes, for every string form we produce.
    forms = [text]
    if isinstance(script, P2PK | P2HMPK):
        forms.append(format_address(script, explicit_group=False))
    for form in forms:
        theirs = call("addressInfo", address=form)
        ours = {
            "valid": is_valid_address(form),
            "group": group_of_address(form),
            "bytes": address_to_bytes(form).hex(),
        }
        assert ours == theirs, form
    assert parse_address(text) == script


@interop_settings(60)
@given(contract_id=contract_ids)
def test_contract_address_agrees(call: Call, contract_id: bytes) -> None:
    theirs = ok(call("contractAddress", contractId=contract_id.hex()), "contractAddress")
    assert contract_address(contract_id) == theirs["address"]
    info = call("addressInfo", address=theirs["address"])
    assert info["group"] == group_of_address(theirs["address"]) == contract_id[-1]


@st.composite
def mutated_addresses(draw: st.DrawFn) -> str:
    """A valid address of any type with one small edit (or none)."""
    script = draw(lockup_scripts)
    text = format_address(script, explicit_group=draw(st.booleans()))
    edit = draw(st.sampled_from(["none", "replace", "delete", "insert", "suffix", "truncate"]))
    i = draw(st.integers(min_value=0, max_value=len(text) - 1))
    char = draw(st.sampled_from(ALPHABET + ":0123456789"))
    if edit == "replace":
        return text[:i] + char + text[i + 1 :]
    if edit == "delete":
        return text[:i] + text[i + 1 :]
    if edit == "insert":
        return text[:i] + char + text[i:]
    if edit == "suffix":
        base = text[:-2] if text[-2] == ":" else text
        return f"{base}:{draw(st.sampled_from('0123456789a'))}"
    if edit == "truncate":
        return text[:i]
    return text


@interop_settings(300)
@given(text=mutated_addresses())
def test_address_validity_agrees_on_edited_strings(call: Call, text: str) -> None:
    theirs = call("addressInfo", address=text)
    assert is_valid_address(text) == theirs["valid"], text
    if theirs["valid"]:
        assert address_to_bytes(text).hex() == theirs["bytes"], text
        parse_address(text)
        assert group_of_address(text) == theirs["group"], text


def test_contract_group_of_impossible_contract_id(call: Call) -> None:
    contract_id = bytes(31) + bytes([0x40])
    text = contract_address(contract_id)
    theirs = call("addressInfo", address=text)
    assert theirs["valid"] is True  # the SDK accepts it, with group 64
    assert is_valid_address(text)
    assert group_of_address(text) == theirs["group"]


def _groupless_with_extra_bytes(extra: bytes, suffix: str) -> str:
    key = public_key_from_private((7).to_bytes(32, "big"))
    body = format_address(P2PK(PublicKeyLike(KeyKind.SECP256K1, key), 0), explicit_group=False)
    return b58encode(b58decode(body) + extra) + suffix


@pytest.mark.parametrize(
    "text",
    [
        # Bytes after a P2PK body: the SDK's codec ignores them (with ':1' it even reads the
        # group from the extra byte and its groupOfAddress from the suffix); we refuse.
        pytest.param(_groupless_with_extra_bytes(b"\x02", ":1"), id="p2pk-extra-byte-suffix"),
        pytest.param(_groupless_with_extra_bytes(b"\x02\x03", ""), id="p2pk-extra-bytes"),
        # 17 keys: the SDK only checks 0 < m <= n; the node allows at most 16.
        pytest.param(
            b58encode(b"\x01" + bytes([17]) + bytes(32 * 17) + b"\x01"), id="p2mpkh-17-keys"
        ),
    ],
)
def test_addresses_the_sdk_accepts_and_we_refuse(call: Call, text: str) -> None:
    """Pinned, deliberate strictness: malformed addresses the SDK lets through."""
    assert call("addressInfo", address=text)["valid"] is True
    assert not is_valid_address(text)


# --- message and transaction signatures ----------------------------------------------------------

messages = st.one_of(
    st.text(),
    # Surrogate code points: what json.loads makes of "\\udXXX" escapes.
    st.text(alphabet=st.characters(categories=["Cs", "Lu", "So", "Zs"])),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1).map(lambda s: f"{s}\n{s}\r\n"),
    st.sampled_from(["", "hello\nworld", "\x00", "🦄 ünïcödé\u2028\u2029", " " * 300]),
)


@interop_settings(100)
@given(sk=private_keys, key_type=key_types, message=messages, hasher=st.sampled_from(HASHERS))
def test_message_signatures_are_identical_and_cross_verify(
    call: Call, sk: bytes, key_type: KeyType, message: str, hasher: str
) -> None:
    public_key = public_key_from_private(sk)
    theirs = ok(
        call(
            "signMessage",
            privateKey=sk.hex(),
            keyType=key_type.value,
            message=message,
            hasher=hasher,
        ),
        "signMessage",
    )
    assert hash_message(message, hasher).hex() == theirs["hash"]
    ours = sign_message(sk, message, hasher)
    assert ours == theirs["signature"]
    # Theirs verifies with ours, and ours (the same bytes, but check anyway) in the SDK.
    assert verify_message(message, hasher, public_key, theirs["signature"])
    verdict = call(
        "verifyMessage",
        message=message,
        hasher=hasher,
        publicKey=public_key.hex(),
        signature=ours,
        keyType=key_type.value,
    )
    assert verdict == {"valid": True}
    # And both reject the signature for a different message.
    other = message + "."
    assert not verify_message(other, hasher, public_key, ours)
    verdict = call(
        "verifyMessage", message=other, hasher=hasher, publicKey=public_key.hex(), signature=ours
    )
    assert verdict == {"valid": False}


@interop_settings(100)
@given(sk=private_keys, key_type=key_types, tx_id=hash32)
def test_tx_id_signatures_are_identical_and_cross_verify(
    call: Call, sk: bytes, key_type: KeyType, tx_id: bytes
) -> None:
    public_key = public_key_from_private(sk)
    theirs = ok(
        call("signTxId", privateKey=sk.hex(), keyType=key_type.value, txId=tx_id.hex()), "signTxId"
    )
    ours = sign_tx_id(sk, tx_id)
    assert ours == theirs["signature"]
    assert verify_hash(tx_id, theirs["signature"], public_key)
    verdict = call("verifyTxId", txId=tx_id.hex(), publicKey=public_key.hex(), signature=ours)
    assert verdict == {"valid": True}


@interop_settings(50)
@given(sk=private_keys, tx_id=hash32, flip=st.integers(min_value=0, max_value=63))
def test_bad_signatures_are_rejected_by_both(
    call: Call, sk: bytes, tx_id: bytes, flip: int
) -> None:
    public_key = public_key_from_private(sk)
    good = bytes.fromhex(sign_tx_id(sk, tx_id))
    r, s = good[:32], int.from_bytes(good[32:], "big")
    candidates = {
        # The high-s twin of a valid signature: malleable, the node refuses it.
        "high-s": (r + (SECP256K1_N - s).to_bytes(32, "big")).hex(),
        "bit flipped": (good[:flip] + bytes([good[flip] ^ 0x01]) + good[flip + 1 :]).hex(),
        "zero": "00" * 64,
    }
    for name, sig in candidates.items():
        theirs = call("verifyTxId", txId=tx_id.hex(), publicKey=public_key.hex(), signature=sig)
        assert theirs == {"valid": False}, name
        assert not verify_hash(tx_id, sig, public_key), name


def test_known_answer_vectors_through_the_oracle(call: Call) -> None:
    """The §7 vectors, to show the oracle itself is the SDK we think it is."""
    sk = bytes.fromhex("3aaae518f9d62205882ec740e4aa2ca958e6d721fb55986e89bb59ab2b977e8c")
    assert call("address", privateKey=sk.hex(), keyType="default") == {
        "address": "1qFU9uLcMEmPpfpoNx8Dm2iHnkHh2Fb35Y8TCFGb7BoR",
        "publicKey": "0340bb27b45880aefc69d2766f8fcae749992bfd2edb7b745f090534035eac2720",
        "group": 1,
    }
    signed = call(
        "signMessage",
        privateKey=sk.hex(),
        keyType="default",
        message="hello\nworld",
        hasher="alephium",
    )
    assert signed["hash"] == "c7a3bb37ace390055663700552fd1a60e24e360fc9ec891250c522b3cccd70ba"
    assert signed["signature"].startswith("cd726bd5")


def test_surrogates_hash_as_in_javascript(call: Call) -> None:
    """json.loads turns "\\ud800" into a lone surrogate; JavaScript strings are UTF-16, so the
    SDK hashes it as U+FFFD and joins a high+low pair into one character. We must too."""
    sk = (12345).to_bytes(32, "big")
    public_key = public_key_from_private(sk)
    for message in ("a\ud800b", "\udfff", "\ud83d\ude00", "x\ud83d", "\ude00\ud83d"):
        theirs = ok(
            call(
                "signMessage",
                privateKey=sk.hex(),
                keyType="default",
                message=message,
                hasher="sha256",
            ),
            "signMessage",
        )
        assert hash_message(message, "sha256").hex() == theirs["hash"], repr(message)
        assert sign_message(sk, message, "sha256") == theirs["signature"], repr(message)
        assert verify_message(message, "sha256", public_key, theirs["signature"]), repr(message)


# --- scripts -------------------------------------------------------------------------------------

u256s = st.one_of(
    st.integers(min_value=0, max_value=70),
    st.sampled_from([2**32, 10**18, U256_MAX]),
    st.integers(min_value=0, max_value=U256_MAX),
)
i256s = st.one_of(
    st.integers(min_value=-40, max_value=40),
    st.sampled_from([I256_MIN, I256_MAX, -(2**31), 2**31 - 1]),
    st.integers(min_value=I256_MIN, max_value=I256_MAX),
)
int32s = st.integers(min_value=I32_MIN, max_value=I32_MAX)
bytes_any = st.binary(max_size=80)

vals: st.SearchStrategy[Val] = st.one_of(
    st.builds(ValBool, st.booleans()),
    st.builds(ValI256, i256s),
    st.builds(ValU256, u256s),
    st.builds(ValByteVec, bytes_any),
    st.builds(ValAddress, lockup_scripts),
)


@st.composite
def approvals(draw: st.DrawFn) -> Approvals:
    alph = draw(st.one_of(st.just(0), u256s))
    token_ids = draw(st.lists(hash32, max_size=3, unique=True))
    amounts = [draw(st.integers(min_value=1, max_value=U256_MAX)) for _ in token_ids]
    return Approvals(alph, tuple(zip(token_ids, amounts, strict=True)))


@st.composite
def contract_calls(draw: st.DrawFn) -> TxScript:
    return build_contract_call(
        draw(contract_ids),
        draw(st.integers(min_value=0, max_value=255)),
        draw(st.lists(vals, max_size=6)),
        caller_approvals=draw(st.one_of(st.none(), approvals())),
        returns=draw(st.integers(min_value=0, max_value=3)),
    )


IMMEDIATES: dict[Imm, st.SearchStrategy[Any]] = {
    Imm.NONE: st.none(),
    Imm.BYTE: st.integers(min_value=0, max_value=255),
    Imm.BYTE_PAIR: st.tuples(
        st.integers(min_value=0, max_value=255), st.integers(min_value=0, max_value=255)
    ),
    Imm.I256: i256s,
    Imm.U256: u256s,
    Imm.BYTES: bytes_any,
    Imm.LOCKUP: lockup_scripts,
    Imm.I32: int32s,
    Imm.INT32: int32s,
    Imm.BYTESTRINGS: st.lists(st.binary(max_size=12), max_size=3).map(tuple),
}


@st.composite
def instructions(draw: st.DrawFn, opcodes: list[int] | None = None) -> Instr:
    opcode = draw(st.sampled_from(opcodes or sorted(OPCODES)))
    return Instr(opcode, draw(IMMEDIATES[OPCODES[opcode][1]]))


@st.composite
def methods(draw: st.DrawFn, *, public: bool | None = None, stateless: bool = False) -> Method:
    args_length = draw(st.integers(min_value=0, max_value=40))
    opcodes = [op for op in OPCODES if op < 0xA0] if stateless else None
    return Method(
        is_public=draw(st.booleans()) if public is None else public,
        use_preapproved_assets=False if stateless else draw(st.booleans()),
        use_contract_assets=draw(st.booleans()),
        use_pay_to_contract_only=draw(st.booleans()),
        args_length=args_length,
        locals_length=args_length + draw(st.integers(min_value=0, max_value=300)),
        return_length=draw(st.integers(min_value=0, max_value=40)),
        instrs=tuple(draw(st.lists(instructions(opcodes), max_size=12))),
    )


@st.composite
def random_scripts(draw: st.DrawFn, *, stateless: bool = False) -> TxScript:
    first = draw(methods(public=True, stateless=stateless))
    rest = draw(st.lists(methods(stateless=stateless), max_size=2))
    return TxScript((first, *rest))


def _our_immediate(instr: Instr) -> list[Any] | None:
    """Our immediate in the shape of the SDK's decoded instruction fields (None: not compared)."""
    kind = OPCODES[instr.opcode][1]
    arg: Any = instr.arg
    if kind is Imm.NONE:
        return []
    if kind is Imm.BYTE_PAIR:
        return list(arg)
    if kind in (Imm.I256, Imm.U256):
        return [str(arg)]
    if kind is Imm.BYTES:
        return [arg.hex()]
    if kind is Imm.BYTESTRINGS:
        return [[part.hex() for part in arg]]
    if kind is Imm.LOCKUP:
        return None  # an object on the SDK side; the byte comparison covers it
    return [arg]


def assert_sdk_reads_script_like_us(call: Call, script: TxScript) -> None:
    binary = encode_script(script)
    theirs = ok(call("decodeScript", hex=binary.hex()), "decodeScript")
    assert theirs["hex"] == binary.hex()
    assert theirs["trailingBytes"] == 0
    assert decode_script(binary) == script
    assert len(theirs["methods"]) == len(script.methods)
    for method, sdk_method in zip(script.methods, theirs["methods"], strict=True):
        header = {k: v for k, v in sdk_method.items() if k != "instrs"}
        assert header == {
            "isPublic": method.is_public,
            "usePreapprovedAssets": method.use_preapproved_assets,
            "useContractAssets": method.use_contract_assets,
            "usePayToContractOnly": method.use_pay_to_contract_only,
            "argsLength": method.args_length,
            "localsLength": method.locals_length,
            "returnLength": method.return_length,
        }
        assert len(sdk_method["instrs"]) == len(method.instrs)
        for instr, sdk_instr in zip(method.instrs, sdk_method["instrs"], strict=True):
            assert (sdk_instr["code"], sdk_instr["name"]) == (instr.opcode, instr.name)
            ours = _our_immediate(instr)
            if ours is not None:
                rest = [v for k, v in sdk_instr.items() if k not in ("name", "code")]
                assert rest == ours, instr


@interop_settings(100)
@given(script=contract_calls())
def test_contract_call_scripts_decode_and_reencode_in_the_sdk(call: Call, script: TxScript) -> None:
    assert_sdk_reads_script_like_us(call, script)


@interop_settings(100)
@given(script=random_scripts())
def test_arbitrary_scripts_decode_and_reencode_in_the_sdk(call: Call, script: TxScript) -> None:
    assert_sdk_reads_script_like_us(call, script)


_CANONICAL_IMMEDIATE: dict[Imm, bytes] = {
    Imm.NONE: b"",
    Imm.BYTE: b"\x07",
    Imm.BYTE_PAIR: b"\x01\x02",
    Imm.I256: b"\x3f",
    Imm.U256: b"\x05",
    Imm.BYTES: b"\x01\xaa",
    Imm.LOCKUP: b"\x00" + bytes(32),
    Imm.I32: b"\x3e",
    Imm.INT32: b"\x12\x34\x56\x78",
    Imm.BYTESTRINGS: b"\x01\x01\xbb",
}


def _one_instruction_script(opcode: int) -> bytes:
    kind = OPCODES[opcode][1] if opcode in OPCODES else Imm.NONE
    # one public method, preapproved assets, no args/locals/returns, one instruction
    return bytes([1, 1, 3, 0, 0, 0, 1, opcode]) + _CANONICAL_IMMEDIATE[kind]


def test_opcode_table_matches_the_sdk(call: Call) -> None:
    """Every byte as a one-instruction script: known to both or to neither, with one name."""
    mismatches: dict[int, str] = {}
    for opcode in range(256):
        binary = _one_instruction_script(opcode)
        theirs = call("decodeScript", hex=binary.hex())
        sdk_ok = "error" not in theirs and theirs["trailingBytes"] == 0
        try:
            ours = decode_script(binary)
        except ValueError:
            ours = None
        if sdk_ok != (ours is not None):
            mismatches[opcode] = f"sdk={theirs!r} ours={ours!r}"
        elif ours is not None:
            assert theirs["hex"] == binary.hex()
            assert theirs["methods"][0]["instrs"][0]["name"] == ours.methods[0].instrs[0].name
    assert mismatches == {}


# --- unsigned transactions -----------------------------------------------------------------------


@st.composite
def p2sh_unlocks(draw: st.DrawFn) -> P2SHUnlock:
    script = encode_script(draw(random_scripts(stateless=True)))
    return P2SHUnlock(script, tuple(draw(st.lists(vals, max_size=3))))


@st.composite
def p2hmpk_unlocks(draw: st.DrawFn) -> P2HMPKUnlock:
    keys = draw(st.lists(p2pk_scripts().map(lambda s: s.public_key), min_size=1, max_size=4))
    indexes = draw(st.lists(st.integers(min_value=0, max_value=len(keys) - 1), max_size=4))
    return P2HMPKUnlock(tuple(keys), tuple(indexes))


unlock_scripts: st.SearchStrategy[UnlockScript] = st.one_of(
    st.builds(P2PKHUnlock, secp_public_keys()),
    st.just(SAME_AS_PREVIOUS),
    st.just(P2PK_UNLOCK),
    st.builds(
        P2MPKHUnlock,
        st.lists(st.tuples(secp_public_keys(), st.integers(0, 15)), min_size=1, max_size=3).map(
            tuple
        ),
    ),
    p2hmpk_unlocks(),
    p2sh_unlocks(),
)
# The transaction-level strategies keep to the shapes the node builds; the unlock kinds above
# add coverage of the codec itself.
common_unlocks = st.one_of(
    st.builds(P2PKHUnlock, secp_public_keys()), st.just(SAME_AS_PREVIOUS), st.just(P2PK_UNLOCK)
)
asset_lockups: st.SearchStrategy[LockupScript] = st.one_of(
    st.builds(P2PKH, hash32),
    p2pk_scripts(),
    st.builds(P2SH, hash32),
    p2mpkh_scripts(),
    st.builds(P2HMPK, hash32, groups),
)
# The SDK renders lockTime with Number(), exact only below 2**53 (ms timestamps are far below).
lock_times = st.one_of(st.just(0), st.integers(min_value=0, max_value=2**53 - 1))


@st.composite
def asset_outputs(draw: st.DrawFn) -> AssetOutput:
    tokens = tuple(draw(st.lists(st.builds(Token, hash32, u256s), max_size=1)))
    amount = DUST_AMOUNT if tokens else draw(st.integers(min_value=DUST_AMOUNT, max_value=U256_MAX))
    return AssetOutput(
        amount=amount,
        lockup=draw(asset_lockups),
        lock_time=draw(lock_times),
        tokens=tokens,
        additional_data=draw(st.binary(max_size=MAX_OUTPUT_DATA_SIZE)),
    )


@st.composite
def inputs(draw: st.DrawFn, unlocks: st.SearchStrategy[UnlockScript] = common_unlocks) -> Input:
    return Input(draw(int32s), draw(hash32), draw(unlocks))


@st.composite
def unsigned_txs(
    draw: st.DrawFn, unlocks: st.SearchStrategy[UnlockScript] = common_unlocks
) -> UnsignedTx:
    return UnsignedTx(
        version=draw(st.one_of(st.just(0), st.integers(min_value=0, max_value=255))),
        network_id=draw(st.sampled_from([0, 1, 2, 4, 255])),
        script=draw(st.one_of(st.none(), contract_calls())),
        gas_amount=draw(st.integers(min_value=20_000, max_value=5_000_000)),
        gas_price=draw(st.integers(min_value=10**11, max_value=U256_MAX)),
        inputs=tuple(draw(st.lists(inputs(unlocks), min_size=1, max_size=4))),
        fixed_outputs=tuple(draw(st.lists(asset_outputs(), min_size=1, max_size=4))),
    )


def assert_sdk_reads_tx_like_us(call: Call, tx: UnsignedTx) -> None:
    binary = encode_unsigned_tx(tx)
    theirs = ok(call("decodeUnsignedTx", hex=binary.hex()), "decodeUnsignedTx")
    assert "apiError" not in theirs, theirs["apiError"]
    ours = unsigned_tx_to_api_json(tx)
    assert ours == theirs["api"]
    # Same key order too, so our JSON text equals the SDK's JSON.stringify.
    assert json.dumps(ours) == json.dumps(theirs["api"])
    assert theirs["txId"] == tx_id(tx).hex()
    assert theirs["reencoded"] == binary.hex()
    assert theirs["trailingBytes"] == 0
    assert (theirs["fromGroup"], theirs["toGroup"]) == (from_group(tx), to_group(tx))
    # The other direction: the SDK builds the same bytes from our API JSON.
    built = ok(call("encodeApiUnsignedTx", json=ours), "encodeApiUnsignedTx")
    assert built == {"hex": binary.hex(), "txId": tx_id(tx).hex()}
    assert decode_unsigned_tx(binary) == tx


@interop_settings(100)
@given(tx=unsigned_txs())
def test_unsigned_txs_agree_with_the_sdk(call: Call, tx: UnsignedTx) -> None:
    assert_sdk_reads_tx_like_us(call, tx)


@interop_settings(60)
@given(tx=unsigned_txs(unlock_scripts))
def test_unsigned_txs_with_every_unlock_kind_agree(call: Call, tx: UnsignedTx) -> None:
    assert_sdk_reads_tx_like_us(call, tx)


@interop_settings(30)
@given(tx=unsigned_txs(), sk=private_keys, key_type=key_types)
def test_sdk_wallet_signs_our_unsigned_tx_like_us(
    call: Call, tx: UnsignedTx, sk: bytes, key_type: KeyType
) -> None:
    binary = encode_unsigned_tx(tx)
    theirs = ok(
        call("signUnsignedTx", privateKey=sk.hex(), keyType=key_type.value, hex=binary.hex()),
        "signUnsignedTx",
    )
    assert theirs["txId"] == tx_id(tx).hex()
    assert theirs["signature"] == sign_tx_id(sk, tx_id(tx))
    assert (theirs["fromGroup"], theirs["toGroup"]) == (from_group(tx), to_group(tx))
    # And the full transaction carrying that signature reads the same in the SDK.
    full = encode_transaction(signed_transaction(tx, [bytes.fromhex(theirs["signature"])]))
    decoded = ok(call("decodeTransaction", hex=full.hex()), "decodeTransaction")
    assert decoded == {
        "reencoded": full.hex(),
        "txId": tx_id(tx).hex(),
        "inputSignatures": [theirs["signature"]],
        "trailingBytes": 0,
    }
    assert decode_transaction(full).unsigned == tx


@interop_settings(100)
@given(tx=unsigned_txs(), data=st.data())
def test_damaged_txs_never_read_differently(
    call: Call, tx: UnsignedTx, data: st.DataObject
) -> None:
    """Truncate or flip a byte: where both sides still decode, they must agree; we never accept
    what the SDK refuses. (We may refuse more: trailing bytes, P2C outputs, bad groups.)"""
    binary = bytearray(encode_unsigned_tx(tx))
    if data.draw(st.booleans()):
        damaged = bytes(binary[: data.draw(st.integers(min_value=0, max_value=len(binary) - 1))])
    else:
        i = data.draw(st.integers(min_value=0, max_value=len(binary) - 1))
        binary[i] ^= data.draw(st.integers(min_value=1, max_value=255))
        damaged = bytes(binary)
    theirs = call("decodeUnsignedTx", hex=damaged.hex())
    sdk_reads = "error" not in theirs and theirs["trailingBytes"] == 0 and "api" in theirs
    try:
        ours = decode_unsigned_tx(damaged)
    except ValueError:
        return
    assert sdk_reads, f"we decode what the SDK refuses: {damaged.hex()} -> {theirs}"
    assert theirs["reencoded"] == encode_unsigned_tx(ours).hex()
    assert _as_sdk_renders_it(unsigned_tx_to_api_json(ours)) == theirs["api"], damaged.hex()


def _as_sdk_renders_it(api: dict[str, Any]) -> dict[str, Any]:
    """Our API JSON with lockTimes as the SDK renders them: via a JS Number (a double)."""
    outputs = [dict(o, lockTime=_js_number(o["lockTime"])) for o in api["fixedOutputs"]]
    return dict(api, fixedOutputs=outputs)


def _js_number(n: int) -> int:
    """``JSON.stringify(Number(n))`` read back: the shortest digits of the nearest double
    (exact below 2**53; lockTimes stay below 1e21, so never in exponent form)."""
    return n if n < 2**53 else int(Decimal(repr(float(n))))


def test_p2c_fixed_output_is_refused_by_both(call: Call) -> None:
    """A fixed output locked by a contract: the SDK's codec reads the bytes, but its API view
    (like the node, SC AssetOutput) refuses; our decoder refuses the bytes outright."""
    template = AssetOutput(DUST_AMOUNT, P2PKH(bytes(32)))
    tx = UnsignedTx(0, 0, None, 20_000, 10**11, (Input(1, bytes(32), P2PK_UNLOCK),), (template,))
    p2pkh_output = encode_asset_output(template)
    # amount, then the lockup script: swap P2PKH(00 + 32 B) for P2C(03 + contract id)
    lockup_at = len(encode_u256(DUST_AMOUNT))
    p2c_output = (
        p2pkh_output[:lockup_at]
        + encode_lockup(P2C(bytes(31) + b"\x01"))
        + p2pkh_output[lockup_at + 33 :]
    )
    binary = encode_unsigned_tx(tx)
    assert binary.endswith(p2pkh_output)
    binary = binary[: -len(p2pkh_output)] + p2c_output
    theirs = ok(call("decodeUnsignedTx", hex=binary.hex()), "decodeUnsignedTx")
    assert "P2C" in theirs["apiError"]
    with pytest.raises(ValueError):
        decode_unsigned_tx(binary)


def test_sdk_api_json_rounds_huge_lock_times(call: Call) -> None:
    """A known SDK limitation, pinned: decodeApiUnsignedTx renders lockTime through a JS Number,
    so values from 2**53 on lose digits; our JSON keeps the exact integer. The bytes agree."""
    lock_time = 2**53 + 1
    output = AssetOutput(DUST_AMOUNT, P2PKH(bytes(32)), lock_time=lock_time)
    tx = UnsignedTx(0, 0, None, 20_000, 10**11, (Input(1, bytes(32), P2PK_UNLOCK),), (output,))
    theirs = ok(call("decodeUnsignedTx", hex=encode_unsigned_tx(tx).hex()), "decodeUnsignedTx")
    assert theirs["reencoded"] == encode_unsigned_tx(tx).hex()
    assert theirs["api"]["fixedOutputs"][0]["lockTime"] == 2**53 == _js_number(lock_time)
    ours: Any = unsigned_tx_to_api_json(tx)
    assert ours["fixedOutputs"][0]["lockTime"] == lock_time
