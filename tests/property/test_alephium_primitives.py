"""Property tests and fuzzing of the chain primitives.

Round trips over the full value ranges, and fuzzing of every decoder with random, truncated and
mutated input: a decoder may only fail with an ``AlephiumError`` subclass, never with an
``IndexError``/``KeyError``/``OverflowError`` escaping from inside.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from predmarket.alephium import address as addr
from predmarket.alephium import signing
from predmarket.alephium.base58 import ALPHABET, b58decode, b58encode
from predmarket.alephium.constants import (
    I32_MAX,
    I32_MIN,
    I256_MAX,
    I256_MIN,
    SECP256K1_N,
    U32_MAX,
    U256_MAX,
)
from predmarket.alephium.errors import (
    AlephiumError,
    DecodeError,
    InvalidAddress,
    InvalidSignatureFormat,
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
    decode_lockup,
    encode_lockup,
    group_of,
    output_hint,
    read_lockup,
)
from predmarket.alephium.serde import (
    Reader,
    decode_all,
    encode_i32,
    encode_i256,
    encode_u32,
    encode_u256,
)
from predmarket.alephium.signing import MessageHasher

FUZZ = settings(max_examples=400, deadline=None)

# --- compact integers ---------------------------------------------------------------------------

# Bias towards the mode boundaries, where off-by-one bugs live.
_UNSIGNED_EDGES = [0, 0x3F, 0x40, 0x3FFF, 0x4000, 0x3FFF_FFFF, 0x4000_0000, U32_MAX, U256_MAX]
_SIGNED_EDGES = [-0x20, 0x1F, 0x20, -0x21, -0x2000, 0x1FFF, 0x2000, -0x2001, I32_MIN, I32_MAX]

u256s = st.one_of(st.integers(0, U256_MAX), st.sampled_from(_UNSIGNED_EDGES))
i256s = st.one_of(st.integers(I256_MIN, I256_MAX), st.sampled_from([*_SIGNED_EDGES, I256_MIN]))


def _round_trip(value: int, encode: Callable[[int], bytes], read: Callable[[Reader], int]) -> None:
    encoded = encode(value)
    decoded = decode_all(encoded, read, "value")
    assert decoded == value
    assert encode(decoded) == encoded


@given(u256s)
def test_compact_u256_round_trip(value: int) -> None:
    _round_trip(value, encode_u256, Reader.u256)


@given(st.integers(0, U32_MAX))
def test_compact_u32_round_trip(value: int) -> None:
    _round_trip(value, encode_u32, Reader.u32)


@given(i256s)
def test_compact_i256_round_trip(value: int) -> None:
    _round_trip(value, encode_i256, Reader.i256)


@given(st.integers(I32_MIN, I32_MAX))
def test_compact_i32_round_trip(value: int) -> None:
    _round_trip(value, encode_i32, Reader.i32)


@given(st.integers(I32_MIN, I32_MAX))
def test_i32_and_i256_agree_in_i32_range(value: int) -> None:
    assert encode_i32(value) == encode_i256(value)


@given(st.integers(0, 2**255 - 1))
def test_unsigned_and_signed_order_of_size(value: int) -> None:
    # A non-negative value never needs fewer bytes signed than unsigned (sign bit).
    assert len(encode_i256(value)) >= len(encode_u256(value))


# --- base58 -------------------------------------------------------------------------------------


@given(st.integers(0, 8), st.binary(max_size=80))
@example(3, b"")
@example(0, b"\x00\x01")
def test_base58_round_trip(zeros: int, body: bytes) -> None:
    data = bytes(zeros) + body
    text = b58encode(data)
    assert set(text) <= set(ALPHABET)
    assert b58decode(text) == data


@given(st.text(alphabet=ALPHABET, max_size=80))
def test_base58_decode_then_encode_is_identity(text: str) -> None:
    assert b58encode(b58decode(text)) == text


@FUZZ
@given(st.text(max_size=60))
def test_base58_decode_fuzz(text: str) -> None:
    _only_alephium_errors(lambda: b58decode(text), DecodeError)


# --- lockup scripts -----------------------------------------------------------------------------

hashes = st.binary(min_size=32, max_size=32)
groups = st.integers(0, 3)


@st.composite
def public_key_likes(draw: st.DrawFn) -> PublicKeyLike:
    kind = draw(st.sampled_from(list(KeyKind)))
    n = KEY_LENGTHS[kind]
    return PublicKeyLike(kind, draw(st.binary(min_size=n, max_size=n)))


@st.composite
def p2mpkhs(draw: st.DrawFn) -> P2MPKH:
    keys = draw(st.lists(hashes, min_size=1, max_size=16))
    return P2MPKH(tuple(keys), draw(st.integers(1, len(keys))))


lockup_scripts: st.SearchStrategy[LockupScript] = st.one_of(
    st.builds(P2PKH, hashes),
    p2mpkhs(),
    st.builds(P2SH, hashes),
    st.builds(P2C, hashes),
    st.builds(P2PK, public_key_likes(), groups),
    st.builds(P2HMPK, hashes, groups),
)


@given(lockup_scripts)
def test_lockup_round_trip(script: LockupScript) -> None:
    encoded = encode_lockup(script)
    assert decode_lockup(encoded) == script
    assert encode_lockup(decode_lockup(encoded)) == encoded


@given(lockup_scripts)
def test_group_and_hint_ranges(script: LockupScript) -> None:
    if isinstance(script, P2C):
        # As the node: a contract's group is its id's last byte, as is.
        assert group_of(script) == script.contract_id[-1]
    else:
        assert 0 <= group_of(script) < 4
    assert -(2**31) <= output_hint(script) < 2**31


@given(st.lists(lockup_scripts, max_size=4))
def test_lockups_concatenated_in_a_stream(scripts: list[LockupScript]) -> None:
    r = Reader(b"".join(encode_lockup(s) for s in scripts))
    assert [read_lockup(r) for _ in scripts] == scripts
    r.finish()


# --- addresses ----------------------------------------------------------------------------------


@given(lockup_scripts)
def test_address_round_trip(script: LockupScript) -> None:
    text = addr.format_address(script)
    assert addr.parse_address(text) == script
    assert addr.format_address(addr.parse_address(text)) == text
    assert addr.group_of_address(text) == group_of(script)
    assert addr.address_to_bytes(text) == encode_lockup(script)


@given(lockup_scripts)
def test_address_round_trip_without_group(script: LockupScript) -> None:
    text = addr.format_address(script, explicit_group=False)
    parsed = addr.parse_address(text)
    if isinstance(script, P2PK | P2HMPK):
        assert isinstance(parsed, P2PK | P2HMPK)
        assert parsed.group == script.default_group
        assert addr.format_address(parsed, explicit_group=False) == text
    else:
        assert parsed == script


# --- signing ------------------------------------------------------------------------------------

# st.text() never yields surrogate code points, but JSON-decoded strings can hold them.
texts_with_surrogates = st.lists(
    st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=40
).map("".join)
private_keys = st.integers(1, SECP256K1_N - 1).map(lambda k: k.to_bytes(32, "big"))
digests = st.binary(min_size=32, max_size=32)


@settings(max_examples=60, deadline=None)
@given(
    private_keys,
    st.one_of(st.text(max_size=200), texts_with_surrogates),
    st.sampled_from(["alephium", "blake2b", "sha256"]),
)
def test_sign_then_verify_message(private_key: bytes, message: str, hasher: str) -> None:
    public_key = signing.public_key_from_private(private_key)
    signature = signing.sign_message(private_key, message, hasher)
    assert signing.verify_message(message, hasher, public_key, signature)
    assert not signing.verify_message(message + "x", hasher, public_key, signature)
    s = int(signature[64:], 16)
    assert 0 < s <= SECP256K1_N // 2


@settings(max_examples=60, deadline=None)
@given(private_keys, digests)
def test_sign_then_verify_hash(private_key: bytes, digest: bytes) -> None:
    public_key = signing.public_key_from_private(private_key)
    signature = signing.sign_hash(private_key, digest)
    assert signing.parse_signature(signature)
    assert signing.verify_hash(digest, signature, public_key)
    r, s = int(signature[:64], 16), int(signature[64:], 16)
    malleated = f"{r:064x}{SECP256K1_N - s:064x}"
    assert not signing.verify_hash(digest, malleated, public_key)
    # A groupless address of the same key verifies the same signature.
    assert addr.address_belongs_to_key(
        addr.address_from_public_key(public_key, "gl-secp256k1"), public_key, "gl-secp256k1"
    )


@settings(max_examples=40, deadline=None)
@given(private_keys, private_keys, digests)
def test_signature_does_not_verify_under_another_key(a: bytes, b: bytes, digest: bytes) -> None:
    if a == b:
        return
    signature = signing.sign_hash(a, digest)
    assert not signing.verify_hash(digest, signature, signing.public_key_from_private(b))


# --- fuzzing: only AlephiumError may escape -----------------------------------------------------


def _only_alephium_errors(call: Callable[[], object], allowed: type[AlephiumError]) -> None:
    try:
        call()
    except allowed:
        pass
    except Exception as exc:  # pragma: no cover - the failure path of the property
        pytest.fail(f"{type(exc).__name__} escaped: {exc!r}")


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[bytes]) -> bytes:
    """A valid encoding, then truncated, extended, or with bytes flipped/overwritten."""
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "append", "flip", "set", "insert", "delete"]))
        if op == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif op == "append":
            data += draw(st.binary(min_size=1, max_size=8))
        elif data:
            i = draw(st.integers(0, len(data) - 1))
            if op == "flip":
                data[i] ^= 1 << draw(st.integers(0, 7))
            elif op == "set":
                data[i] = draw(st.sampled_from([0x00, 0x3F, 0x40, 0x7F, 0x80, 0xC0, 0xFF]))
            elif op == "insert":
                data.insert(i, draw(st.integers(0, 255)))
            else:
                del data[i]
    return bytes(data)


lockup_bytes = st.one_of(
    st.binary(max_size=120),
    mutated(lockup_scripts.map(encode_lockup)),
    st.tuples(st.integers(0, 7), st.binary(max_size=60)).map(lambda t: bytes([t[0]]) + t[1]),
)


@FUZZ
@given(lockup_bytes)
def test_decode_lockup_fuzz(data: bytes) -> None:
    _only_alephium_errors(lambda: decode_lockup(data), DecodeError)


READERS: dict[str, Callable[[Reader], Any]] = {
    "u256": Reader.u256,
    "u32": Reader.u32,
    "i256": Reader.i256,
    "i32": Reader.i32,
    "bool": Reader.bool,
    "byte": Reader.byte,
    "int32_fixed": Reader.int32_fixed,
    "u64_fixed": Reader.u64_fixed,
    "bytestring": Reader.bytestring,
    "count": Reader.count,
    "lockups": lambda r: r.array(read_lockup),
    "bytestrings": lambda r: r.array(Reader.bytestring),
}

compact_bytes = st.one_of(
    st.binary(max_size=70),
    mutated(u256s.map(encode_u256)),
    mutated(i256s.map(encode_i256)),
    st.tuples(st.integers(0xC0, 0xFF), st.binary(max_size=70)).map(lambda t: bytes([t[0]]) + t[1]),
)


@FUZZ
@given(st.sampled_from(sorted(READERS)), compact_bytes)
def test_reader_fuzz(name: str, data: bytes) -> None:
    _only_alephium_errors(lambda: decode_all(data, READERS[name], name), DecodeError)


@FUZZ
@given(compact_bytes)
def test_compact_decoders_never_return_out_of_range(data: bytes) -> None:
    for read, low, high in (
        (Reader.u256, 0, U256_MAX),
        (Reader.u32, 0, U32_MAX),
        (Reader.i256, I256_MIN, I256_MAX),
        (Reader.i32, I32_MIN, I32_MAX),
    ):
        try:
            value = read(Reader(data))
        except DecodeError:
            continue
        assert low <= value <= high


def _address_texts() -> st.SearchStrategy[str]:
    valid = lockup_scripts.flatmap(
        lambda s: st.sampled_from(
            [addr.format_address(s), addr.format_address(s, explicit_group=False)]
        )
    )

    @st.composite
    def mutate_text(draw: st.DrawFn) -> str:
        text = list(draw(valid))
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(["replace", "delete", "insert", "suffix", "truncate"]))
            i = draw(st.integers(0, max(len(text) - 1, 0)))
            char = draw(st.sampled_from(ALPHABET + ":0123456789 é"))
            if op == "replace" and text:
                text[i] = char
            elif op == "delete" and text:
                del text[i]
            elif op == "insert":
                text.insert(i, char)
            elif op == "suffix":
                text += [":", draw(st.sampled_from("0123456789ajz:"))]
            else:
                text = text[:i]
        return "".join(text)

    return st.one_of(
        st.text(max_size=120),
        st.text(alphabet=ALPHABET + ":", max_size=120),
        mutate_text(),
        st.binary(min_size=1, max_size=80).map(b58encode),
        st.binary(min_size=1, max_size=80).map(lambda b: b58encode(b) + ":2"),
    )


@FUZZ
@given(_address_texts())
def test_parse_address_fuzz(text: str) -> None:
    _only_alephium_errors(lambda: addr.parse_address(text), InvalidAddress)
    _only_alephium_errors(lambda: addr.contract_id_from_address(text), InvalidAddress)
    assert isinstance(addr.is_valid_address(text), bool)
    assert isinstance(addr.address_matches_key_type(text, "gl-secp256k1"), bool)


@FUZZ
@given(_address_texts())
def test_parsed_addresses_are_canonical(text: str) -> None:
    """Anything that parses formats back to the very same string (no aliases)."""
    try:
        script = addr.parse_address(text)
    except InvalidAddress:
        return
    explicit = addr._has_group_suffix(text)
    assert addr.format_address(script, explicit_group=explicit) == text


@FUZZ
@given(st.text(max_size=140), digests, st.binary(max_size=40))
def test_signature_fuzz(text: str, digest: bytes, public_key: bytes) -> None:
    _only_alephium_errors(lambda: signing.parse_signature(text), InvalidSignatureFormat)
    assert signing.verify_hash(digest, text, public_key) is False


@FUZZ
@given(
    st.one_of(st.text(max_size=80), texts_with_surrogates),
    st.sampled_from([*MessageHasher, "bogus"]),
)
def test_hash_message_fuzz(message: str, hasher: str) -> None:
    _only_alephium_errors(lambda: signing.hash_message(message, hasher), AlephiumError)
    assert isinstance(signing.verify_message(message, hasher, b"", ""), bool)
