"""Property tests of the chain codecs: round trips, and fuzzing that only DecodeError escapes.

For every codec, ``encode(decode(encode(v))) == encode(v)`` and ``decode(encode(v)) == v``. The
fuzz tests feed random bytes, every truncation of valid encodings (the codecs are prefix-free,
so a strict prefix never decodes) and single-byte mutations to every decoder: each must either
return a value or raise :class:`DecodeError`; no other exception may escape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from predmarket.alephium.constants import I32_MAX, I32_MIN, I256_MAX, I256_MIN, U256_MAX
from predmarket.alephium.errors import DecodeError
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
    decode_instr,
    decode_method,
    decode_script,
    decode_val,
    encode_instr,
    encode_method,
    encode_script,
    encode_val,
    parse_contract_call,
    val_from_json,
    val_to_json,
)
from predmarket.alephium.tx import (
    AssetOutput,
    ContractOutput,
    Input,
    OutputRef,
    P2HMPKUnlock,
    P2MPKHUnlock,
    P2PKHUnlock,
    P2PKUnlock,
    P2SHUnlock,
    PoLWUnlock,
    SameAsPrevious,
    Token,
    Transaction,
    UnlockScript,
    UnsignedTx,
    decode_asset_output,
    decode_input,
    decode_transaction,
    decode_unlock_script,
    decode_unsigned_tx,
    encode_asset_output,
    encode_input,
    encode_transaction,
    encode_unlock_script,
    encode_unsigned_tx,
)

T = TypeVar("T")

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------------------------
# Strategies (kept small: a few elements per array, short byte strings)

b32 = st.binary(min_size=32, max_size=32)
u256s = st.one_of(st.integers(0, 70), st.integers(0, 2**40), st.integers(0, U256_MAX))
i256s = st.one_of(
    st.integers(-70, 70), st.integers(-(2**40), 2**40), st.integers(I256_MIN, I256_MAX)
)
i32s = st.one_of(st.integers(-70, 70), st.integers(I32_MIN, I32_MAX))
groups = st.integers(0, 3)
short_bytes = st.binary(max_size=40)


@st.composite
def public_key_likes(draw: st.DrawFn) -> PublicKeyLike:
    kind = draw(st.sampled_from(list(KeyKind)))
    size = KEY_LENGTHS[kind]
    return PublicKeyLike(kind, draw(st.binary(min_size=size, max_size=size)))


@st.composite
def p2mpkhs(draw: st.DrawFn) -> P2MPKH:
    hashes = draw(st.lists(b32, min_size=1, max_size=3))
    return P2MPKH(tuple(hashes), draw(st.integers(1, len(hashes))))


asset_lockups: st.SearchStrategy[LockupScript] = st.one_of(
    st.builds(P2PKH, b32),
    p2mpkhs(),
    st.builds(P2SH, b32),
    st.builds(P2PK, public_key_likes(), groups),
    st.builds(P2HMPK, b32, groups),
)
lockups: st.SearchStrategy[LockupScript] = st.one_of(asset_lockups, st.builds(P2C, b32))

vals: st.SearchStrategy[Val] = st.one_of(
    st.builds(ValBool, st.booleans()),
    st.builds(ValI256, i256s),
    st.builds(ValU256, u256s),
    st.builds(ValByteVec, short_bytes),
    st.builds(ValAddress, lockups),
)

_IMMEDIATES: dict[Imm, st.SearchStrategy[Any]] = {
    Imm.NONE: st.none(),
    Imm.BYTE: st.integers(0, 255),
    Imm.BYTE_PAIR: st.tuples(st.integers(0, 255), st.integers(0, 255)),
    Imm.I256: i256s,
    Imm.U256: u256s,
    Imm.BYTES: short_bytes,
    Imm.LOCKUP: lockups,
    Imm.I32: i32s,
    Imm.BYTESTRINGS: st.lists(st.binary(max_size=8), max_size=3).map(tuple),
    Imm.INT32: st.integers(I32_MIN, I32_MAX),
}


@st.composite
def instrs(draw: st.DrawFn) -> Instr:
    opcode = draw(st.sampled_from(sorted(OPCODES)))
    return Instr(opcode, draw(_IMMEDIATES[OPCODES[opcode][1]]))


@st.composite
def methods(
    draw: st.DrawFn, *, public: bool | None = None, preapproved: bool | None = None
) -> Method:
    args = draw(st.integers(0, 40))
    return Method(
        is_public=draw(st.booleans()) if public is None else public,
        use_preapproved_assets=draw(st.booleans()) if preapproved is None else preapproved,
        use_contract_assets=draw(st.booleans()),
        use_pay_to_contract_only=draw(st.booleans()),
        args_length=args,
        locals_length=args + draw(st.integers(0, 70)),
        return_length=draw(st.integers(0, 3)),
        instrs=tuple(draw(st.lists(instrs(), max_size=5))),
    )


@st.composite
def scripts(draw: st.DrawFn, *, stateless: bool = False) -> TxScript:
    pre = False if stateless else None
    first = draw(methods(public=True, preapproved=pre))
    rest = draw(st.lists(methods(preapproved=pre), max_size=2))
    return TxScript((first, *rest))


unlock_scripts: st.SearchStrategy[UnlockScript] = st.one_of(
    st.builds(P2PKHUnlock, st.binary(min_size=33, max_size=33)),
    st.lists(st.tuples(st.binary(min_size=33, max_size=33), i32s), max_size=3).map(
        lambda keys: P2MPKHUnlock(tuple(keys))
    ),
    st.builds(
        P2SHUnlock,
        scripts(stateless=True).map(encode_script),
        st.lists(vals, max_size=3).map(tuple),
    ),
    st.just(SameAsPrevious()),
    st.builds(PoLWUnlock, st.binary(min_size=33, max_size=33)),
    st.just(P2PKUnlock()),
    st.builds(
        P2HMPKUnlock,
        st.lists(public_key_likes(), max_size=3).map(tuple),
        st.lists(i32s, max_size=3).map(tuple),
    ),
)

tokens = st.builds(Token, b32, u256s)
asset_outputs = st.builds(
    AssetOutput,
    u256s,
    asset_lockups,
    st.integers(0, 2**64 - 1),
    st.lists(tokens, max_size=2).map(tuple),
    short_bytes,
)
inputs = st.builds(Input, st.integers(I32_MIN, I32_MAX), b32, unlock_scripts)
contract_outputs = st.builds(ContractOutput, u256s, b32, st.lists(tokens, max_size=2).map(tuple))

unsigned_txs = st.builds(
    UnsignedTx,
    st.integers(0, 255),
    st.integers(0, 255),
    st.none() | scripts(),
    i32s,
    u256s,
    st.lists(inputs, max_size=3).map(tuple),
    st.lists(asset_outputs, max_size=3).map(tuple),
)
signatures = st.binary(min_size=64, max_size=64)
transactions = st.builds(
    Transaction,
    unsigned_txs,
    st.booleans(),
    st.lists(st.builds(OutputRef, st.integers(I32_MIN, I32_MAX), b32), max_size=2).map(tuple),
    st.lists(st.one_of(asset_outputs, contract_outputs), max_size=2).map(tuple),
    st.lists(signatures, max_size=2).map(tuple),
    st.lists(signatures, max_size=2).map(tuple),
)

# name -> (value strategy, encode, decode)
CODECS: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], bytes], Callable[[bytes], Any]]] = {
    "lockup": (lockups, encode_lockup, decode_lockup),
    "instr": (instrs(), encode_instr, decode_instr),
    "method": (methods(), encode_method, decode_method),
    "script": (scripts(), encode_script, decode_script),
    "stateless script": (
        scripts(stateless=True),
        encode_script,
        lambda raw: decode_script(raw, stateless=True),
    ),
    "val": (vals, encode_val, decode_val),
    "unlock script": (unlock_scripts, encode_unlock_script, decode_unlock_script),
    "asset output": (asset_outputs, encode_asset_output, decode_asset_output),
    "input": (inputs, encode_input, decode_input),
    "unsigned tx": (unsigned_txs, encode_unsigned_tx, decode_unsigned_tx),
    "transaction": (transactions, encode_transaction, decode_transaction),
}
DECODERS = [decode for _, _, decode in CODECS.values()]

any_codec = st.sampled_from(sorted(CODECS))


@st.composite
def encodings(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(any_codec)
    strategy, encode, _ = CODECS[name]
    return name, encode(draw(strategy))


def _decode_or_decode_error(decode: Callable[[bytes], T], raw: bytes) -> T | None:
    """Decode; a DecodeError is fine, any other exception fails the test by propagating."""
    try:
        return decode(raw)
    except DecodeError:
        return None


# --------------------------------------------------------------------------------------------
# Round trips


@FAST
@given(st.data())
def test_round_trip_every_codec(data: st.DataObject) -> None:
    for strategy, encode, decode in CODECS.values():
        value = data.draw(strategy)
        raw = encode(value)
        decoded = decode(raw)
        assert decoded == value
        assert encode(decoded) == raw


@FAST
@given(transactions)
def test_transaction_round_trip(tx: Transaction) -> None:
    raw = encode_transaction(tx)
    assert decode_transaction(raw) == tx
    assert decode_transaction(raw.hex()) == tx
    assert encode_unsigned_tx(decode_unsigned_tx(encode_unsigned_tx(tx.unsigned))) == (
        encode_unsigned_tx(tx.unsigned)
    )


@FAST
@given(vals)
def test_val_json_round_trip(val: Val) -> None:
    assert val_from_json(val_to_json(val)) == val


@FAST
@given(
    b32,
    st.integers(0, 255),
    st.lists(vals, max_size=4),
    st.integers(0, 2**70),
    st.lists(st.tuples(b32, st.integers(1, U256_MAX)), max_size=3, unique_by=lambda t: t[0]),
    st.integers(0, 3),
)
def test_contract_call_round_trip(
    contract_id: bytes,
    index: int,
    args: list[Val],
    alph: int,
    token_approvals: list[tuple[bytes, int]],
    returns: int,
) -> None:
    approvals = Approvals(alph, tuple(token_approvals))
    script = build_contract_call(
        contract_id, index, args, caller_approvals=approvals, returns=returns
    )
    assert decode_script(encode_script(script)) == script
    call = parse_contract_call(script)
    assert call is not None
    assert call.contract_id == contract_id and call.method_index == index
    assert call.args == tuple(args) and call.approvals == approvals and call.returns == returns


# --------------------------------------------------------------------------------------------
# Fuzz: only DecodeError may escape


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=120))
def test_random_bytes(raw: bytes) -> None:
    for decode in DECODERS:
        _decode_or_decode_error(decode, raw)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(DECODERS), encodings(), st.binary(max_size=40))
def test_valid_prefix_then_random_bytes(
    decode: Callable[[bytes], object], encoded: tuple[str, bytes], tail: bytes
) -> None:
    _, raw = encoded
    _decode_or_decode_error(decode, raw[: len(raw) // 2] + tail)


@FAST
@given(encodings())
def test_every_truncation_fails_cleanly(encoded: tuple[str, bytes]) -> None:
    name, raw = encoded
    decode = CODECS[name][2]
    for end in range(len(raw)):
        try:
            decode(raw[:end])
        except DecodeError:
            continue
        raise AssertionError(f"{name}: a {end}-byte prefix of {raw.hex()} decoded")


@FAST
@given(encodings(), st.data())
def test_single_byte_mutations(encoded: tuple[str, bytes], data: st.DataObject) -> None:
    name, raw = encoded
    decode = CODECS[name][2]
    if not raw:
        return
    positions = data.draw(
        st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=12, unique=True)
    )
    for pos in positions:
        for value in (0x00, 0x3F, 0x40, 0x7F, 0x80, 0xC0, 0xFF, raw[pos] ^ 0x01, raw[pos] ^ 0x20):
            mutated = raw[:pos] + bytes([value]) + raw[pos + 1 :]
            result = _decode_or_decode_error(decode, mutated)
            if result is not None:
                # Whatever decodes must encode again (perhaps canonically, so maybe not equal).
                CODECS[name][1](result)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(OPCODES)), st.binary(max_size=12))
def test_instruction_immediates_fuzz(opcode: int, tail: bytes) -> None:
    result = _decode_or_decode_error(decode_instr, bytes([opcode]) + tail)
    if result is not None:
        assert encode_instr(result)[:1] == bytes([opcode])
