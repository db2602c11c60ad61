"""Transactions: unlock scripts, inputs, outputs, unsigned and full transactions (§3.1-§3.4).

Every ``read_*`` takes a :class:`~predmarket.alephium.serde.Reader` and every ``decode_*`` takes
bytes or hex and rejects trailing bytes; all of them fail only with
:class:`~predmarket.alephium.errors.DecodeError`. The txId is the blake2b of the serialized
unsigned transaction, and that 32-byte id is what a wallet signs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, TypeAlias, TypeVar

from predmarket.alephium.address import format_address
from predmarket.alephium.constants import (
    DUST_AMOUNT,
    I32_MAX,
    I32_MIN,
    MAX_OUTPUT_DATA_SIZE,
    MAX_TOKENS_PER_ASSET_OUTPUT,
    MAX_TOKENS_PER_CONTRACT_OUTPUT,
    MAX_TX_INPUTS,
    MAX_TX_OUTPUTS,
    TOTAL_NUMBER_OF_GROUPS,
    U256_MAX,
)
from predmarket.alephium.errors import AlephiumError, DecodeError, EncodeError
from predmarket.alephium.hashing import blake2b256, int32_bytes, xor_byte
from predmarket.alephium.lockup import (
    P2C,
    P2HMPK,
    P2PK,
    LockupScript,
    PublicKeyLike,
    encode_lockup,
    group_of,
    output_hint,
    read_lockup,
    read_public_key_like,
)
from predmarket.alephium.script import (
    TxScript,
    Val,
    encode_script,
    encode_vals,
    read_script,
    read_vals,
)
from predmarket.alephium.serde import (
    Reader,
    decode_all,
    encode_array,
    encode_bool,
    encode_bytestring,
    encode_i32,
    encode_int32_fixed,
    encode_u64_fixed,
    encode_u256,
    parse_hex,
)

T = TypeVar("T")

PUBLIC_KEY_LENGTH: Final = 33
SIGNATURE_LENGTH: Final = 64


class TxRuleError(AlephiumError):
    """A transaction that encodes but breaks a node rule (dust, token count, sizes)."""


@contextmanager
def _decoding() -> Iterator[None]:
    """Turn a constructor's validation error into a DecodeError while decoding."""
    try:
        yield
    except EncodeError as e:
        raise DecodeError(str(e)) from None


def _check_bytes(value: object, length: int, what: str) -> None:
    if not isinstance(value, bytes) or len(value) != length:
        raise EncodeError(f"{what} must be {length} bytes")


def _check_int(value: object, low: int, high: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise EncodeError(f"{what} {value!r} out of range {low}..{high}")


def _check_tuple(value: object, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, tuple) or not all(isinstance(x, kind) for x in value):
        raise EncodeError(f"{what} must be a tuple")


def _raw(data: bytes | str, what: str) -> bytes:
    return parse_hex(data, what) if isinstance(data, str) else data


# --------------------------------------------------------------------------------------------
# Unlock scripts


@dataclass(frozen=True, slots=True)
class P2PKHUnlock:
    """Tag 00: the 33-byte compressed secp256k1 public key of a P2PKH output."""

    public_key: bytes

    def __post_init__(self) -> None:
        _check_bytes(self.public_key, PUBLIC_KEY_LENGTH, "public key")


@dataclass(frozen=True, slots=True)
class P2MPKHUnlock:
    """Tag 01: the signing keys of a P2MPKH output, each with its index in the key list."""

    keys: tuple[tuple[bytes, int], ...]

    def __post_init__(self) -> None:
        _check_tuple(self.keys, tuple, "P2MPKH keys")
        for key in self.keys:
            if len(key) != 2:
                raise EncodeError("a P2MPKH key is a (public key, index) pair")
            _check_bytes(key[0], PUBLIC_KEY_LENGTH, "public key")
            _check_int(key[1], I32_MIN, I32_MAX, "P2MPKH key index")


@dataclass(frozen=True, slots=True)
class P2SHUnlock:
    """Tag 02: the serialized stateless script (whose hash is the P2SH) and its parameters."""

    script: bytes
    params: tuple[Val, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.script, bytes):
            raise EncodeError("P2SH script must be bytes")
        try:
            decode_all(self.script, lambda r: read_script(r, stateless=True), "P2SH script")
        except DecodeError as e:
            raise EncodeError(f"invalid P2SH script: {e}") from None
        if not isinstance(self.params, tuple):
            raise EncodeError("P2SH params must be a tuple")
        # Encoding validates each Val; a cheap shape check here keeps errors early.
        encode_vals(self.params)

    @property
    def decoded_script(self) -> TxScript:
        return decode_all(self.script, lambda r: read_script(r, stateless=True), "P2SH script")


@dataclass(frozen=True, slots=True)
class SameAsPrevious:
    """Tag 03: unlocked like the previous input (same lockup), no payload."""


@dataclass(frozen=True, slots=True)
class PoLWUnlock:
    """Tag 04: proof-of-less-work coinbase unlock, a 33-byte public key (SC ``UnlockScript``)."""

    public_key: bytes

    def __post_init__(self) -> None:
        _check_bytes(self.public_key, PUBLIC_KEY_LENGTH, "public key")


@dataclass(frozen=True, slots=True)
class P2PKUnlock:
    """Tag 05: groupless single key; the key is in the lockup script, so no payload."""


@dataclass(frozen=True, slots=True)
class P2HMPKUnlock:
    """Tag 06: groupless multisig: the whole key set and the indexes of the signing keys."""

    public_keys: tuple[PublicKeyLike, ...]
    indexes: tuple[int, ...]

    def __post_init__(self) -> None:
        _check_tuple(self.public_keys, PublicKeyLike, "P2HMPK public keys")
        _check_tuple(self.indexes, int, "P2HMPK indexes")
        for index in self.indexes:
            _check_int(index, I32_MIN, I32_MAX, "P2HMPK key index")


UnlockScript: TypeAlias = (
    P2PKHUnlock
    | P2MPKHUnlock
    | P2SHUnlock
    | SameAsPrevious
    | PoLWUnlock
    | P2PKUnlock
    | P2HMPKUnlock
)
SAME_AS_PREVIOUS: Final = SameAsPrevious()
P2PK_UNLOCK: Final = P2PKUnlock()


def encode_unlock_script(unlock: UnlockScript) -> bytes:
    match unlock:
        case P2PKHUnlock(pk):
            return b"\x00" + pk
        case P2MPKHUnlock(keys):
            return b"\x01" + encode_array(keys, lambda k: k[0] + encode_i32(k[1]))
        case P2SHUnlock(script, params):
            return b"\x02" + script + encode_vals(params)
        case SameAsPrevious():
            return b"\x03"
        case PoLWUnlock(pk):
            return b"\x04" + pk
        case P2PKUnlock():
            return b"\x05"
        case P2HMPKUnlock(keys, indexes):
            return (
                b"\x06"
                + encode_array(keys, lambda k: k.to_bytes())
                + encode_array(indexes, encode_i32)
            )
    raise EncodeError(f"not an unlock script: {unlock!r}")


def _read_public_key(r: Reader) -> bytes:
    return r.take(PUBLIC_KEY_LENGTH, "public key")


def _read_key_with_index(r: Reader) -> tuple[bytes, int]:
    return _read_public_key(r), r.i32("key index")


def read_unlock_script(r: Reader) -> UnlockScript:
    tag = r.byte("unlock script tag")
    if tag == 0:
        return P2PKHUnlock(_read_public_key(r))
    if tag == 1:
        return P2MPKHUnlock(r.array(_read_key_with_index, "P2MPKH keys"))
    if tag == 2:
        # The script is kept as its exact bytes (its hash is the P2SH lockup), so slice what
        # the method-array parse consumed.
        start = r.pos
        read_script(r, stateless=True)
        script = r.data[start : r.pos]
        params = read_vals(r)
        with _decoding():
            return P2SHUnlock(script, params)
    if tag == 3:
        return SAME_AS_PREVIOUS
    if tag == 4:
        return PoLWUnlock(_read_public_key(r))
    if tag == 5:
        return P2PK_UNLOCK
    if tag == 6:
        keys = r.array(read_public_key_like, "P2HMPK public keys")
        indexes = r.array(lambda rr: rr.i32("key index"), "P2HMPK indexes")
        return P2HMPKUnlock(keys, indexes)
    raise DecodeError(f"unknown unlock script tag {tag:#04x}")


def decode_unlock_script(data: bytes | str) -> UnlockScript:
    return decode_all(_raw(data, "unlock script"), read_unlock_script, "unlock script")


# --------------------------------------------------------------------------------------------
# Tokens, outputs, inputs


@dataclass(frozen=True, slots=True)
class Token:
    id: bytes
    amount: int

    def __post_init__(self) -> None:
        _check_bytes(self.id, 32, "token id")
        _check_int(self.amount, 0, U256_MAX, "token amount")


def encode_token(token: Token) -> bytes:
    return token.id + encode_u256(token.amount)


def read_token(r: Reader) -> Token:
    return Token(r.take(32, "token id"), r.u256("token amount"))


@dataclass(frozen=True, slots=True)
class AssetOutput:
    """An output locked by an asset lockup script (anything but a contract)."""

    amount: int
    lockup: LockupScript
    lock_time: int = 0
    tokens: tuple[Token, ...] = ()
    additional_data: bytes = b""

    def __post_init__(self) -> None:
        _check_int(self.amount, 0, U256_MAX, "amount")
        if not isinstance(self.lockup, LockupScript):
            raise EncodeError("lockup must be a lockup script")
        # SC AssetOutput holds a LockupScript.Asset: P2C does not deserialize there.
        if isinstance(self.lockup, P2C):
            raise EncodeError("an asset output cannot be locked by a contract (P2C)")
        _check_int(self.lock_time, 0, (1 << 64) - 1, "lockTime")
        _check_tuple(self.tokens, Token, "tokens")
        if not isinstance(self.additional_data, bytes):
            raise EncodeError("additional data must be bytes")


def encode_asset_output(output: AssetOutput) -> bytes:
    return (
        encode_u256(output.amount)
        + encode_lockup(output.lockup)
        + encode_u64_fixed(output.lock_time)
        + encode_array(output.tokens, encode_token)
        + encode_bytestring(output.additional_data)
    )


def read_asset_output(r: Reader) -> AssetOutput:
    amount = r.u256("amount")
    lockup = read_lockup(r)
    lock_time = r.u64_fixed("lockTime")
    tokens = r.array(read_token, "tokens")
    data = r.bytestring("additional data")
    with _decoding():
        return AssetOutput(amount, lockup, lock_time, tokens, data)


def decode_asset_output(data: bytes | str) -> AssetOutput:
    return decode_all(_raw(data, "asset output"), read_asset_output, "asset output")


@dataclass(frozen=True, slots=True)
class ContractOutput:
    """A contract's output, as found in a transaction's generated outputs."""

    amount: int
    contract_id: bytes
    tokens: tuple[Token, ...] = ()

    def __post_init__(self) -> None:
        _check_int(self.amount, 0, U256_MAX, "amount")
        _check_bytes(self.contract_id, 32, "contract id")
        _check_tuple(self.tokens, Token, "tokens")


def encode_contract_output(output: ContractOutput) -> bytes:
    return (
        encode_u256(output.amount) + output.contract_id + encode_array(output.tokens, encode_token)
    )


def read_contract_output(r: Reader) -> ContractOutput:
    return ContractOutput(
        r.u256("amount"), r.take(32, "contract id"), r.array(read_token, "tokens")
    )


GeneratedOutput: TypeAlias = AssetOutput | ContractOutput


def encode_generated_output(output: GeneratedOutput) -> bytes:
    """Either: 00 + asset output, 01 + contract output."""
    if isinstance(output, AssetOutput):
        return b"\x00" + encode_asset_output(output)
    if isinstance(output, ContractOutput):
        return b"\x01" + encode_contract_output(output)
    raise EncodeError(f"not an output: {output!r}")


def read_generated_output(r: Reader) -> GeneratedOutput:
    tag = r.byte("output tag")
    if tag == 0:
        return read_asset_output(r)
    if tag == 1:
        return read_contract_output(r)
    raise DecodeError(f"unknown output tag {tag:#04x}")


@dataclass(frozen=True, slots=True)
class OutputRef:
    """A reference to an output: its 4-byte hint and 32-byte key."""

    hint: int
    key: bytes

    def __post_init__(self) -> None:
        _check_int(self.hint, I32_MIN, I32_MAX, "hint")
        _check_bytes(self.key, 32, "output key")


def encode_output_ref(ref: OutputRef) -> bytes:
    return encode_int32_fixed(ref.hint) + ref.key


def read_output_ref(r: Reader) -> OutputRef:
    return OutputRef(r.int32_fixed("hint"), r.take(32, "output key"))


@dataclass(frozen=True, slots=True)
class Input:
    """A spent asset output (``hint``, ``key``) and the script that unlocks it."""

    hint: int
    key: bytes
    unlock: UnlockScript

    def __post_init__(self) -> None:
        _check_int(self.hint, I32_MIN, I32_MAX, "hint")
        _check_bytes(self.key, 32, "output key")
        if not isinstance(self.unlock, _UNLOCK_TYPES):
            raise EncodeError("unlock must be an unlock script")

    @property
    def ref(self) -> OutputRef:
        return OutputRef(self.hint, self.key)


_UNLOCK_TYPES: Final = (
    P2PKHUnlock,
    P2MPKHUnlock,
    P2SHUnlock,
    SameAsPrevious,
    PoLWUnlock,
    P2PKUnlock,
    P2HMPKUnlock,
)


def encode_input(inp: Input) -> bytes:
    return encode_int32_fixed(inp.hint) + inp.key + encode_unlock_script(inp.unlock)


def read_input(r: Reader) -> Input:
    return Input(r.int32_fixed("hint"), r.take(32, "output key"), read_unlock_script(r))


def decode_input(data: bytes | str) -> Input:
    return decode_all(_raw(data, "input"), read_input, "input")


# --------------------------------------------------------------------------------------------
# Unsigned and full transactions


@dataclass(frozen=True, slots=True)
class UnsignedTx:
    """Field order is the wire order (§3.1)."""

    version: int
    network_id: int
    script: TxScript | None
    gas_amount: int
    gas_price: int
    inputs: tuple[Input, ...]
    fixed_outputs: tuple[AssetOutput, ...]

    def __post_init__(self) -> None:
        _check_int(self.version, 0, 0xFF, "version")
        _check_int(self.network_id, 0, 0xFF, "networkId")
        if self.script is not None and not isinstance(self.script, TxScript):
            raise EncodeError("script must be a TxScript or None")
        _check_int(self.gas_amount, I32_MIN, I32_MAX, "gasAmount")
        _check_int(self.gas_price, 0, U256_MAX, "gasPrice")
        _check_tuple(self.inputs, Input, "inputs")
        _check_tuple(self.fixed_outputs, AssetOutput, "fixed outputs")


def encode_unsigned_tx(tx: UnsignedTx) -> bytes:
    script = b"\x00" if tx.script is None else b"\x01" + encode_script(tx.script)
    return b"".join(
        (
            bytes([tx.version, tx.network_id]),
            script,
            encode_i32(tx.gas_amount),
            encode_u256(tx.gas_price),
            encode_array(tx.inputs, encode_input),
            encode_array(tx.fixed_outputs, encode_asset_output),
        )
    )


def _read_option(r: Reader, read: Callable[[Reader], T], what: str) -> T | None:
    tag = r.byte(f"{what} option")
    if tag == 0:
        return None
    if tag == 1:
        return read(r)
    raise DecodeError(f"invalid option tag {tag:#04x} for {what}")


def read_unsigned_tx(r: Reader) -> UnsignedTx:
    version = r.byte("version")
    network_id = r.byte("networkId")
    script = _read_option(r, read_script, "script")
    gas_amount = r.i32("gasAmount")
    gas_price = r.u256("gasPrice")
    inputs = r.array(read_input, "inputs")
    outputs = r.array(read_asset_output, "fixed outputs")
    return UnsignedTx(version, network_id, script, gas_amount, gas_price, inputs, outputs)


def decode_unsigned_tx(data: bytes | str) -> UnsignedTx:
    return decode_all(_raw(data, "unsigned tx"), read_unsigned_tx, "unsigned tx")


def _check_signature(sig: object) -> None:
    _check_bytes(sig, SIGNATURE_LENGTH, "signature")


@dataclass(frozen=True, slots=True)
class Transaction:
    """A full transaction as stored in blocks (§3.3)."""

    unsigned: UnsignedTx
    script_execution_ok: bool = True
    contract_inputs: tuple[OutputRef, ...] = ()
    generated_outputs: tuple[GeneratedOutput, ...] = ()
    input_signatures: tuple[bytes, ...] = ()
    script_signatures: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.unsigned, UnsignedTx):
            raise EncodeError("unsigned must be an UnsignedTx")
        if not isinstance(self.script_execution_ok, bool):
            raise EncodeError("scriptExecutionOk must be a bool")
        _check_tuple(self.contract_inputs, OutputRef, "contract inputs")
        _check_tuple(self.generated_outputs, (AssetOutput, ContractOutput), "generated outputs")
        _check_tuple(self.input_signatures, bytes, "input signatures")
        _check_tuple(self.script_signatures, bytes, "script signatures")
        for sig in self.input_signatures + self.script_signatures:
            _check_signature(sig)


def encode_transaction(tx: Transaction) -> bytes:
    return b"".join(
        (
            encode_unsigned_tx(tx.unsigned),
            encode_bool(tx.script_execution_ok),
            encode_array(tx.contract_inputs, encode_output_ref),
            encode_array(tx.generated_outputs, encode_generated_output),
            encode_array(tx.input_signatures, bytes),
            encode_array(tx.script_signatures, bytes),
        )
    )


def _read_signature(r: Reader) -> bytes:
    return r.take(SIGNATURE_LENGTH, "signature")


def read_transaction(r: Reader) -> Transaction:
    return Transaction(
        read_unsigned_tx(r),
        r.bool("scriptExecutionOk"),
        r.array(read_output_ref, "contract inputs"),
        r.array(read_generated_output, "generated outputs"),
        r.array(_read_signature, "input signatures"),
        r.array(_read_signature, "script signatures"),
    )


def decode_transaction(data: bytes | str) -> Transaction:
    return decode_all(_raw(data, "transaction"), read_transaction, "transaction")


def signed_transaction(unsigned: UnsignedTx, signatures: Sequence[bytes]) -> Transaction:
    """The transaction a node builds from ``/transactions/submit``: script ok, no contract
    inputs or generated outputs, the given input signatures."""
    return Transaction(unsigned, True, (), (), tuple(signatures), ())


# --------------------------------------------------------------------------------------------
# Ids, groups, API JSON


def tx_id(unsigned: UnsignedTx) -> bytes:
    """blake2b-256 of the serialized unsigned transaction: the id a wallet signs."""
    return blake2b256(encode_unsigned_tx(unsigned))


def output_ref_key(tx_id: bytes, index: int) -> bytes:
    """Key of the ``index``-th output of a transaction: blake2b(txId ‖ int32BE(index))."""
    _check_bytes(tx_id, 32, "tx id")
    _check_int(index, 0, I32_MAX, "output index")
    return blake2b256(tx_id + int32_bytes(index))


def from_group(tx: UnsignedTx, groups: int = TOTAL_NUMBER_OF_GROUPS) -> int:
    """The group the transaction spends from: ``xorByte(inputs[0].hint) % groups``."""
    if not tx.inputs:
        raise EncodeError("a transaction without inputs has no from-group")
    return xor_byte(tx.inputs[0].hint) % groups


def to_group(tx: UnsignedTx, groups: int = TOTAL_NUMBER_OF_GROUPS) -> int:
    """The group of the first output outside the from-group, else the from-group (TS
    ``groupIndexOfTransaction``)."""
    source = from_group(tx, groups)
    for output in tx.fixed_outputs:
        group = group_of(output.lockup, groups)
        if group != source:
            return group
    return source


def unsigned_tx_to_api_json(
    tx: UnsignedTx, *, groups: int = TOTAL_NUMBER_OF_GROUPS
) -> dict[str, object]:
    """The JSON the SDK's ``decodeApiUnsignedTx`` (and the node's decode-unsigned-tx) gives.

    Key order matches the SDK, so ``json.dumps(..., separators=(",", ":"))`` reproduces its
    ``JSON.stringify`` byte for byte; ``scriptOpt`` (script hex) is present only with a script.
    """
    txid = tx_id(tx)
    inputs = [
        {
            "outputRef": {"hint": inp.hint, "key": inp.key.hex()},
            "unlockScript": encode_unlock_script(inp.unlock).hex(),
        }
        for inp in tx.inputs
    ]
    outputs: list[dict[str, object]] = []
    for index, out in enumerate(tx.fixed_outputs):
        if isinstance(out.lockup, P2PK | P2HMPK) and out.lockup.group >= groups:
            raise EncodeError(f"output {index}: group {out.lockup.group} not below {groups}")
        outputs.append(
            {
                "hint": output_hint(out.lockup),
                "key": output_ref_key(txid, index).hex(),
                "attoAlphAmount": str(out.amount),
                "lockTime": out.lock_time,
                "tokens": [{"id": t.id.hex(), "amount": str(t.amount)} for t in out.tokens],
                "address": format_address(out.lockup, explicit_group=True),
                "message": out.additional_data.hex(),
            }
        )
    result: dict[str, object] = {
        "txId": txid.hex(),
        "version": tx.version,
        "networkId": tx.network_id,
        "gasAmount": tx.gas_amount,
    }
    if tx.script is not None:
        result["scriptOpt"] = encode_script(tx.script).hex()
    result["gasPrice"] = str(tx.gas_price)
    result["inputs"] = inputs
    result["fixedOutputs"] = outputs
    return result


# --------------------------------------------------------------------------------------------
# Node rules on outputs


def output_rule_violations(tx: UnsignedTx | Transaction) -> list[str]:
    """Every output rule the transaction breaks (SC ``TxValidation``); empty when it passes.

    Rules: at most 256 inputs and 256 outputs; each asset output holds at least dust ALPH, at
    most one token, and exactly dust ALPH when it holds one; additional data of at most 256
    bytes; contract outputs hold at most 8 tokens.
    """
    unsigned = tx.unsigned if isinstance(tx, Transaction) else tx
    generated = tx.generated_outputs if isinstance(tx, Transaction) else ()
    problems: list[str] = []
    if not unsigned.inputs:
        problems.append("no inputs")
    if len(unsigned.inputs) > MAX_TX_INPUTS:
        problems.append(f"{len(unsigned.inputs)} inputs, at most {MAX_TX_INPUTS} allowed")
    n_outputs = len(unsigned.fixed_outputs) + len(generated)
    if n_outputs > MAX_TX_OUTPUTS:
        problems.append(f"{n_outputs} outputs, at most {MAX_TX_OUTPUTS} allowed")
    all_outputs: list[tuple[str, GeneratedOutput]] = [
        (f"fixed output {i}", o) for i, o in enumerate(unsigned.fixed_outputs)
    ]
    all_outputs += [(f"generated output {i}", o) for i, o in enumerate(generated)]
    for where, out in all_outputs:
        if isinstance(out, ContractOutput):
            if len(out.tokens) > MAX_TOKENS_PER_CONTRACT_OUTPUT:
                problems.append(
                    f"{where}: {len(out.tokens)} tokens, "
                    f"at most {MAX_TOKENS_PER_CONTRACT_OUTPUT} in a contract output"
                )
            continue
        if out.amount < DUST_AMOUNT:
            problems.append(f"{where}: {out.amount} attoALPH is below dust ({DUST_AMOUNT})")
        if len(out.tokens) > MAX_TOKENS_PER_ASSET_OUTPUT:
            problems.append(
                f"{where}: {len(out.tokens)} tokens, "
                f"at most {MAX_TOKENS_PER_ASSET_OUTPUT} in an asset output"
            )
        if out.tokens and out.amount != DUST_AMOUNT:
            problems.append(
                f"{where}: an output holding a token must carry exactly {DUST_AMOUNT} attoALPH,"
                f" not {out.amount}"
            )
        if any(t.amount == 0 for t in out.tokens):
            problems.append(f"{where}: zero token amount")
        if len(out.additional_data) > MAX_OUTPUT_DATA_SIZE:
            problems.append(
                f"{where}: {len(out.additional_data)} bytes of additional data, "
                f"at most {MAX_OUTPUT_DATA_SIZE}"
            )
    return problems


def check_output_rules(tx: UnsignedTx | Transaction) -> None:
    """Raise :class:`TxRuleError` listing every output rule the transaction breaks."""
    problems = output_rule_violations(tx)
    if problems:
        raise TxRuleError("; ".join(problems))
