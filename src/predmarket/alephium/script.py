"""Scripts: instructions, methods, TxScripts, ``Val`` and the contract-call pattern (§3.5).

A TxScript is an array of methods; a method is a small header and an array of instructions; an
instruction is one opcode byte followed, for a few opcodes, by an immediate. The opcode table is
the SDK's ``instr-codec`` as of @alephium/web3 3.0.5 (0x00-0x91 and 0xa0-0xd6), so any compiled
script decodes.

``build_contract_call`` emits exactly the code the Ralph compiler produces for
``{callerAddress!() -> ALPH: a, token: b}`` followed by ``Contract(id).method(args)``;
``parse_contract_call`` recognises that pattern again (the embedded devnet dispatches with it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any, Final, TypeAlias

from predmarket.alephium.address import format_address, parse_address
from predmarket.alephium.constants import (
    I32_MAX,
    I32_MIN,
    I256_MAX,
    I256_MIN,
    U256_MAX,
)
from predmarket.alephium.errors import AlephiumError, DecodeError, EncodeError
from predmarket.alephium.lockup import LockupScript, encode_lockup, read_lockup
from predmarket.alephium.serde import (
    Reader,
    decode_all,
    encode_array,
    encode_bool,
    encode_bytestring,
    encode_i32,
    encode_i256,
    encode_int32_fixed,
    encode_u256,
    parse_hex,
)

# --------------------------------------------------------------------------------------------
# Instructions


class Imm(Enum):
    """The kind of immediate that follows an opcode."""

    NONE = auto()
    #: one unsigned byte: method index, local/field index, DevInstr code
    BYTE = auto()
    #: two unsigned bytes (CreateMapEntry: immutable and mutable field counts)
    BYTE_PAIR = auto()
    #: compact signed I256 (I256Const)
    I256 = auto()
    #: compact unsigned U256 (U256Const)
    U256 = auto()
    #: ByteString (BytesConst)
    BYTES = auto()
    #: binary lockup script (AddressConst)
    LOCKUP = auto()
    #: compact signed I32 jump offset (Jump, IfTrue, IfFalse)
    I32 = auto()
    #: Array of ByteString (DEBUG)
    BYTESTRINGS = auto()
    #: fixed 4-byte big-endian int32 (method selectors)
    INT32 = auto()


def _opcode_table() -> dict[int, tuple[str, Imm]]:
    with_imm: dict[str, Imm] = {
        "CallLocal": Imm.BYTE,
        "CallExternal": Imm.BYTE,
        "I256Const": Imm.I256,
        "U256Const": Imm.U256,
        "BytesConst": Imm.BYTES,
        "AddressConst": Imm.LOCKUP,
        "LoadLocal": Imm.BYTE,
        "StoreLocal": Imm.BYTE,
        "Jump": Imm.I32,
        "IfTrue": Imm.I32,
        "IfFalse": Imm.I32,
        "DEBUG": Imm.BYTESTRINGS,
        "DevInstr": Imm.BYTE,
        "LoadMutField": Imm.BYTE,
        "StoreMutField": Imm.BYTE,
        "LoadImmField": Imm.BYTE,
        "CreateMapEntry": Imm.BYTE_PAIR,
        "MethodSelector": Imm.INT32,
        "CallExternalBySelector": Imm.INT32,
    }
    # Stateless instructions occupy 0x00-0x91, stateful ones 0xa0-0xd6 (no gaps inside either);
    # each row ends with the opcode of its first name.
    # fmt: off
    stateless = (
        "CallLocal", "CallExternal", "Return", "ConstTrue",                                 # 00
        "ConstFalse", "I256Const0", "I256Const1", "I256Const2",                             # 04
        "I256Const3", "I256Const4", "I256Const5", "I256ConstN1",                            # 08
        "U256Const0", "U256Const1", "U256Const2", "U256Const3",                             # 0c
        "U256Const4", "U256Const5", "I256Const", "U256Const",                               # 10
        "BytesConst", "AddressConst", "LoadLocal", "StoreLocal",                            # 14
        "Pop", "BoolNot", "BoolAnd", "BoolOr",                                              # 18
        "BoolEq", "BoolNeq", "BoolToByteVec", "I256Add",                                    # 1c
        "I256Sub", "I256Mul", "I256Div", "I256Mod",                                         # 20
        "I256Eq", "I256Neq", "I256Lt", "I256Le",                                            # 24
        "I256Gt", "I256Ge", "U256Add", "U256Sub",                                           # 28
        "U256Mul", "U256Div", "U256Mod", "U256Eq",                                          # 2c
        "U256Neq", "U256Lt", "U256Le", "U256Gt",                                            # 30
        "U256Ge", "U256ModAdd", "U256ModSub", "U256ModMul",                                 # 34
        "NumericBitAnd", "NumericBitOr", "NumericXor", "NumericSHL",                        # 38
        "NumericSHR", "I256ToU256", "I256ToByteVec", "U256ToI256",                          # 3c
        "U256ToByteVec", "ByteVecEq", "ByteVecNeq", "ByteVecSize",                          # 40
        "ByteVecConcat", "AddressEq", "AddressNeq", "AddressToByteVec",                     # 44
        "IsAssetAddress", "IsContractAddress", "Jump", "IfTrue",                            # 48
        "IfFalse", "Assert", "Blake2b", "Keccak256",                                        # 4c
        "Sha256", "Sha3", "VerifyTxSignature", "VerifySecP256K1",                           # 50
        "VerifyED25519", "NetworkId", "BlockTimeStamp", "BlockTarget",                      # 54
        "TxId", "TxInputAddressAt", "TxInputsSize", "VerifyAbsoluteLocktime",               # 58
        "VerifyRelativeLocktime", "Log1", "Log2", "Log3",                                   # 5c
        "Log4", "Log5", "ByteVecSlice", "ByteVecToAddress",                                 # 60
        "Encode", "Zeros", "U256To1Byte", "U256To2Byte",                                    # 64
        "U256To4Byte", "U256To8Byte", "U256To16Byte", "U256To32Byte",                       # 68
        "U256From1Byte", "U256From2Byte", "U256From4Byte", "U256From8Byte",                 # 6c
        "U256From16Byte", "U256From32Byte", "EthEcRecover", "Log6",                         # 70
        "Log7", "Log8", "Log9", "ContractIdToAddress",                                      # 74
        "LoadLocalByIndex", "StoreLocalByIndex", "Dup", "AssertWithErrorCode",              # 78
        "Swap", "BlockHash", "DEBUG", "TxGasPrice",                                         # 7c
        "TxGasAmount", "TxGasFee", "I256Exp", "U256Exp",                                    # 80
        "U256ModExp", "VerifyBIP340Schnorr", "GetSegregatedSignature", "MulModN",           # 84
        "AddModN", "U256ToString", "I256ToString", "BoolToString",                          # 88
        "GroupOfAddress", "VerifySignature", "GetSegregatedWebAuthnSignature", "DevInstr",  # 8c
        "I256RoundInfinityDiv", "U256RoundInfinityDiv",                                     # 90
    )
    stateful = (
        "LoadMutField", "StoreMutField", "ApproveAlph", "ApproveToken",                     # a0
        "AlphRemaining", "TokenRemaining", "IsPaying", "TransferAlph",                      # a4
        "TransferAlphFromSelf", "TransferAlphToSelf",                                       # a8
        "TransferToken", "TransferTokenFromSelf", "TransferTokenToSelf", "CreateContract",  # aa
        "CreateContractWithToken", "CopyCreateContract", "DestroySelf", "SelfContractId",   # ae
        "SelfAddress", "CallerContractId", "CallerAddress", "IsCalledFromTxScript",         # b2
        "CallerInitialStateHash", "CallerCodeHash",                                         # b6
        "ContractInitialStateHash", "ContractCodeHash",                                     # b8
        "MigrateSimple", "MigrateWithFields", "CopyCreateContractWithToken", "BurnToken",   # ba
        "LockApprovedAssets", "CreateSubContract",                                          # be
        "CreateSubContractWithToken", "CopyCreateSubContract",                              # c0
        "CopyCreateSubContractWithToken", "LoadMutFieldByIndex",                            # c2
        "StoreMutFieldByIndex", "ContractExists",                                           # c4
        "CreateContractAndTransferToken", "CopyCreateContractAndTransferToken",             # c6
        "CreateSubContractAndTransferToken", "CopyCreateSubContractAndTransferToken",       # c8
        "NullContractAddress", "SubContractId", "SubContractIdOf", "ALPHTokenId",           # ca
        "LoadImmField", "LoadImmFieldByIndex", "PayGasFee", "MinimalContractDeposit",       # ce
        "CreateMapEntry", "MethodSelector",                                                 # d2
        "CallExternalBySelector", "ExternalCallerContractId", "ExternalCallerAddress",      # d4
    )
    # fmt: on
    assert len(stateless) == 0x92 and len(stateful) == 0xD7 - 0xA0
    table: dict[int, tuple[str, Imm]] = {}
    for base, names in ((0x00, stateless), (0xA0, stateful)):
        for offset, name in enumerate(names):
            table[base + offset] = (name, with_imm.get(name, Imm.NONE))
    return table


#: opcode -> (SDK name, immediate kind). Every other byte is an unknown opcode.
OPCODES: Final[Mapping[int, tuple[str, Imm]]] = _opcode_table()
#: SDK name -> opcode.
OPCODE_BY_NAME: Final[Mapping[str, int]] = {name: op for op, (name, _) in OPCODES.items()}

InstrArg: TypeAlias = int | bytes | LockupScript | tuple[bytes, ...] | tuple[int, int] | None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_in(value: object, low: int, high: int) -> bool:
    """``value`` is an int (not a bool) within ``low..high``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_byte(value: object) -> bool:
    return _int_in(value, 0, 0xFF)


#: Validity test of each immediate kind.
_IMM_VALID: Final[Mapping[Imm, Callable[[object], bool]]] = {
    Imm.NONE: lambda a: a is None,
    Imm.BYTE: _is_byte,
    Imm.BYTE_PAIR: lambda a: isinstance(a, tuple) and len(a) == 2 and all(map(_is_byte, a)),
    Imm.I256: lambda a: _int_in(a, I256_MIN, I256_MAX),
    Imm.U256: lambda a: _int_in(a, 0, U256_MAX),
    Imm.BYTES: lambda a: isinstance(a, bytes),
    Imm.LOCKUP: lambda a: isinstance(a, LockupScript),
    Imm.I32: lambda a: _int_in(a, I32_MIN, I32_MAX),
    Imm.BYTESTRINGS: lambda a: isinstance(a, tuple) and all(isinstance(x, bytes) for x in a),
    Imm.INT32: lambda a: _int_in(a, I32_MIN, I32_MAX),
}

# Encoders and readers of each immediate kind. ``Instr.__post_init__`` has already checked the
# value against its kind, hence ``Any`` on these private tables.
_IMM_ENCODE: Final[Mapping[Imm, Callable[[Any], bytes]]] = {
    Imm.NONE: lambda _: b"",
    Imm.BYTE: lambda a: bytes([a]),
    Imm.BYTE_PAIR: bytes,
    Imm.I256: encode_i256,
    Imm.U256: encode_u256,
    Imm.BYTES: encode_bytestring,
    Imm.LOCKUP: encode_lockup,
    Imm.I32: encode_i32,
    Imm.BYTESTRINGS: lambda a: encode_array(a, encode_bytestring),
    Imm.INT32: encode_int32_fixed,
}
_IMM_READ: Final[Mapping[Imm, Callable[[Reader], InstrArg]]] = {
    Imm.BYTE: lambda r: r.byte("instruction index"),
    Imm.BYTE_PAIR: lambda r: (r.byte("field count"), r.byte("field count")),
    Imm.I256: lambda r: r.i256("I256Const"),
    Imm.U256: lambda r: r.u256("U256Const"),
    Imm.BYTES: lambda r: r.bytestring("BytesConst"),
    Imm.LOCKUP: read_lockup,
    Imm.I32: lambda r: r.i32("jump offset"),
    Imm.BYTESTRINGS: lambda r: r.array(lambda rr: rr.bytestring("DEBUG part"), "DEBUG parts"),
    Imm.INT32: lambda r: r.int32_fixed("method selector"),
}


@dataclass(frozen=True, slots=True)
class Instr:
    """One VM instruction: an opcode and, for some opcodes, its immediate ``arg``."""

    opcode: int
    arg: InstrArg = None

    def __post_init__(self) -> None:
        entry = OPCODES.get(self.opcode) if _is_int(self.opcode) else None
        if entry is None:
            raise EncodeError(f"unknown opcode {self.opcode!r}")
        name, kind = entry
        if not _IMM_VALID[kind](self.arg):
            raise EncodeError(f"invalid immediate {self.arg!r} for {name} ({kind.name})")

    @property
    def name(self) -> str:
        return OPCODES[self.opcode][0]

    @classmethod
    def named(cls, name: str, arg: InstrArg = None) -> Instr:
        """Build an instruction by its SDK name, e.g. ``Instr.named("U256Add")``."""
        opcode = OPCODE_BY_NAME.get(name)
        if opcode is None:
            raise EncodeError(f"unknown instruction name {name!r}")
        return cls(opcode, arg)

    def __repr__(self) -> str:
        return self.name if self.arg is None else f"{self.name}({self.arg!r})"


def encode_instr(instr: Instr) -> bytes:
    return bytes([instr.opcode]) + _IMM_ENCODE[OPCODES[instr.opcode][1]](instr.arg)


def read_instr(r: Reader) -> Instr:
    opcode = r.byte("opcode")
    entry = OPCODES.get(opcode)
    if entry is None:
        raise DecodeError(f"unknown opcode {opcode:#04x}")
    kind = entry[1]
    if kind is Imm.NONE:
        return _NO_ARG[opcode]
    return Instr(opcode, _IMM_READ[kind](r))


def decode_instr(data: bytes) -> Instr:
    return decode_all(data, read_instr, "instruction")


# Shared instances of the instructions without an immediate: they are immutable, and decoding
# reuses them instead of building a new object per instruction.
_NO_ARG: Final[Mapping[int, Instr]] = {
    op: Instr(op) for op, (_, kind) in OPCODES.items() if kind is Imm.NONE
}


def _simple(name: str) -> Instr:
    return _NO_ARG[OPCODE_BY_NAME[name]]


# Named constructors of the instructions this client emits (SDK names).
Return: Final = _simple("Return")
ConstTrue: Final = _simple("ConstTrue")
ConstFalse: Final = _simple("ConstFalse")
I256Const0: Final = _simple("I256Const0")
I256Const1: Final = _simple("I256Const1")
I256Const2: Final = _simple("I256Const2")
I256Const3: Final = _simple("I256Const3")
I256Const4: Final = _simple("I256Const4")
I256Const5: Final = _simple("I256Const5")
I256ConstN1: Final = _simple("I256ConstN1")
U256Const0: Final = _simple("U256Const0")
U256Const1: Final = _simple("U256Const1")
U256Const2: Final = _simple("U256Const2")
U256Const3: Final = _simple("U256Const3")
U256Const4: Final = _simple("U256Const4")
U256Const5: Final = _simple("U256Const5")
Pop: Final = _simple("Pop")
U256Add: Final = _simple("U256Add")
U256Mul: Final = _simple("U256Mul")
Dup: Final = _simple("Dup")
ApproveAlph: Final = _simple("ApproveAlph")
ApproveToken: Final = _simple("ApproveToken")
SelfAddress: Final = _simple("SelfAddress")
CallerAddress: Final = _simple("CallerAddress")
MinimalContractDeposit: Final = _simple("MinimalContractDeposit")


def CallLocal(index: int) -> Instr:
    return Instr(0x00, index)


def CallExternal(index: int) -> Instr:
    return Instr(0x01, index)


def I256Const(value: int) -> Instr:
    return Instr(0x12, value)


def U256Const(value: int) -> Instr:
    return Instr(0x13, value)


def BytesConst(value: bytes) -> Instr:
    return Instr(0x14, value)


def AddressConst(lockup: LockupScript) -> Instr:
    return Instr(0x15, lockup)


def LoadLocal(index: int) -> Instr:
    return Instr(0x16, index)


def StoreLocal(index: int) -> Instr:
    return Instr(0x17, index)


def MethodSelector(selector: int) -> Instr:
    return Instr(0xD3, selector)


def CallExternalBySelector(selector: int) -> Instr:
    return Instr(0xD4, selector)


_U256_SMALL: Final = (U256Const0, U256Const1, U256Const2, U256Const3, U256Const4, U256Const5)
_I256_SMALL: Final = (I256Const0, I256Const1, I256Const2, I256Const3, I256Const4, I256Const5)


def u256_const(value: int) -> Instr:
    """Push a U256 the way the Ralph compiler does: U256Const0..5 for 0..5, else U256Const."""
    if _is_int(value) and 0 <= value <= 5:
        return _U256_SMALL[value]
    return U256Const(value)


def i256_const(value: int) -> Instr:
    """Push an I256 as the compiler does: I256Const0..5, I256ConstN1 for -1, else I256Const."""
    if _is_int(value) and 0 <= value <= 5:
        return _I256_SMALL[value]
    if _is_int(value) and value == -1:
        return I256ConstN1
    return I256Const(value)


def _u256_of(instr: Instr) -> int | None:
    """The value an instruction pushes if it is a U256 constant, else None."""
    if 0x0C <= instr.opcode <= 0x11:
        return instr.opcode - 0x0C
    if instr.opcode == 0x13 and isinstance(instr.arg, int):
        return instr.arg
    return None


def _i256_of(instr: Instr) -> int | None:
    if 0x05 <= instr.opcode <= 0x0A:
        return instr.opcode - 0x05
    if instr.opcode == 0x0B:
        return -1
    if instr.opcode == 0x12 and isinstance(instr.arg, int):
        return instr.arg
    return None


# --------------------------------------------------------------------------------------------
# Methods and scripts


@contextmanager
def _decoding() -> Iterator[None]:
    """Turn a constructor's validation error into a DecodeError while decoding."""
    try:
        yield
    except EncodeError as e:
        raise DecodeError(str(e)) from None


def _check_i32(value: object, what: str) -> None:
    if not _int_in(value, I32_MIN, I32_MAX):
        raise EncodeError(f"{what} {value!r} is not an int32")


@dataclass(frozen=True, slots=True)
class Method:
    """A method: header flags, lengths and instructions (SC ``vm.Method``)."""

    is_public: bool
    use_preapproved_assets: bool
    use_contract_assets: bool
    use_pay_to_contract_only: bool
    args_length: int
    locals_length: int
    return_length: int
    instrs: tuple[Instr, ...]

    def __post_init__(self) -> None:
        _check_i32(self.args_length, "argsLength")
        _check_i32(self.locals_length, "localsLength")
        _check_i32(self.return_length, "returnLength")
        # SC Method.validate, applied to every method of a script.
        if self.args_length < 0 or self.return_length < 0:
            raise EncodeError("argsLength and returnLength must not be negative")
        if self.locals_length < self.args_length:
            raise EncodeError("localsLength must be at least argsLength")
        if not isinstance(self.instrs, tuple) or not all(isinstance(i, Instr) for i in self.instrs):
            raise EncodeError("instrs must be a tuple of Instr")

    @property
    def asset_modifier(self) -> int:
        """The header byte: low two bits for (preapproved, contract) assets, ``| 4`` for
        payToContractOnly (SC ``Method.serializeAssetModifier``)."""
        bits = _MODIFIER_BITS[(self.use_preapproved_assets, self.use_contract_assets)]
        return bits | 4 if self.use_pay_to_contract_only else bits


#: (usePreapprovedAssets, useContractAssets) -> low two bits; 1 was "payable" before Leman.
_MODIFIER_BITS: Final = {(False, False): 0, (True, True): 1, (False, True): 2, (True, False): 3}
_MODIFIER_FLAGS: Final = {bits: flags for flags, bits in _MODIFIER_BITS.items()}


def encode_method(method: Method) -> bytes:
    return (
        encode_bool(method.is_public)
        + bytes([method.asset_modifier])
        + encode_i32(method.args_length)
        + encode_i32(method.locals_length)
        + encode_i32(method.return_length)
        + encode_array(method.instrs, encode_instr)
    )


def read_method(r: Reader) -> Method:
    is_public = r.bool("method isPublic")
    modifier = r.byte("asset modifier")
    # Any bit besides the two asset bits and payToContractOnly is invalid (SC).
    if modifier & ~0x07:
        raise DecodeError(f"invalid asset modifier {modifier:#04x}")
    preapproved, contract = _MODIFIER_FLAGS[modifier & 0x03]
    args_length = r.i32("argsLength")
    locals_length = r.i32("localsLength")
    return_length = r.i32("returnLength")
    instrs = r.array(read_instr, "instructions")
    with _decoding():
        return Method(
            is_public,
            preapproved,
            contract,
            bool(modifier & 0x04),
            args_length,
            locals_length,
            return_length,
            instrs,
        )


def decode_method(data: bytes) -> Method:
    return decode_all(data, read_method, "method")


@dataclass(frozen=True, slots=True)
class TxScript:
    """A stateful script run by a transaction; ``methods[0]`` is the public entry point."""

    methods: tuple[Method, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.methods, tuple) or not all(
            isinstance(m, Method) for m in self.methods
        ):
            raise EncodeError("methods must be a tuple of Method")
        # SC StatefulScript.validate
        if not self.methods:
            raise EncodeError("a script needs at least one method")
        if not self.methods[0].is_public:
            raise EncodeError("the first method of a script must be public")


def encode_script(script: TxScript) -> bytes:
    return encode_array(script.methods, encode_method)


def read_script(r: Reader, *, stateless: bool = False) -> TxScript:
    """Read a script; ``stateless`` applies the P2SH rule that no method uses preapproved assets
    (SC ``StatelessScript.validate``)."""
    methods = r.array(read_method, "methods")
    with _decoding():
        script = TxScript(methods)
    if stateless and any(m.use_preapproved_assets for m in methods):
        raise DecodeError("a stateless script cannot use preapproved assets")
    return script


def decode_script(data: bytes | str, *, stateless: bool = False) -> TxScript:
    """Decode script bytecode (bytes or hex); trailing bytes are an error."""
    raw = parse_hex(data, "script") if isinstance(data, str) else data
    return decode_all(raw, lambda r: read_script(r, stateless=stateless), "script")


# --------------------------------------------------------------------------------------------
# Val: typed values of P2SH params, contract fields and the node API


@dataclass(frozen=True, slots=True)
class ValBool:
    value: bool

    def __post_init__(self) -> None:
        if not isinstance(self.value, bool):
            raise EncodeError(f"Bool value must be a bool, got {self.value!r}")


@dataclass(frozen=True, slots=True)
class ValI256:
    value: int

    def __post_init__(self) -> None:
        if not _is_int(self.value) or not I256_MIN <= self.value <= I256_MAX:
            raise EncodeError(f"I256 value {self.value!r} out of range")


@dataclass(frozen=True, slots=True)
class ValU256:
    value: int

    def __post_init__(self) -> None:
        if not _is_int(self.value) or not 0 <= self.value <= U256_MAX:
            raise EncodeError(f"U256 value {self.value!r} out of range")


@dataclass(frozen=True, slots=True)
class ValByteVec:
    value: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.value, bytes):
            raise EncodeError("ByteVec value must be bytes")


@dataclass(frozen=True, slots=True)
class ValAddress:
    value: LockupScript

    def __post_init__(self) -> None:
        if not isinstance(self.value, LockupScript):
            raise EncodeError("Address value must be a lockup script")


Val: TypeAlias = ValBool | ValI256 | ValU256 | ValByteVec | ValAddress
#: A contract-call argument; every Val kind has a one-instruction encoding.
ScriptArg: TypeAlias = Val


def encode_val(val: Val) -> bytes:
    match val:
        case ValBool(v):
            return b"\x00" + encode_bool(v)
        case ValI256(v):
            return b"\x01" + encode_i256(v)
        case ValU256(v):
            return b"\x02" + encode_u256(v)
        case ValByteVec(v):
            return b"\x03" + encode_bytestring(v)
        case ValAddress(v):
            return b"\x04" + encode_lockup(v)
    raise EncodeError(f"not a Val: {val!r}")


def read_val(r: Reader) -> Val:
    tag = r.byte("Val tag")
    if tag == 0:
        return ValBool(r.bool("Bool value"))
    if tag == 1:
        return ValI256(r.i256("I256 value"))
    if tag == 2:
        return ValU256(r.u256("U256 value"))
    if tag == 3:
        return ValByteVec(r.bytestring("ByteVec value"))
    if tag == 4:
        return ValAddress(read_lockup(r))
    raise DecodeError(f"unknown Val tag {tag:#04x}")


def decode_val(data: bytes) -> Val:
    return decode_all(data, read_val, "Val")


def encode_vals(vals: Sequence[Val]) -> bytes:
    return encode_array(vals, encode_val)


def read_vals(r: Reader) -> tuple[Val, ...]:
    return r.array(read_val, "Vals")


def val_to_json(val: Val) -> dict[str, object]:
    """The node API's JSON form ``{type, value}``: numbers as decimal strings, ByteVec as hex,
    Address as base58 (groupless with ``:N``)."""
    match val:
        case ValBool(v):
            return {"type": "Bool", "value": v}
        case ValI256(v):
            return {"type": "I256", "value": str(v)}
        case ValU256(v):
            return {"type": "U256", "value": str(v)}
        case ValByteVec(v):
            return {"type": "ByteVec", "value": v.hex()}
        case ValAddress(v):
            return {"type": "Address", "value": format_address(v)}
    raise EncodeError(f"not a Val: {val!r}")


_DECIMAL: Final = re.compile(r"-?[0-9]{1,80}")


def _json_int(value: object, what: str) -> int:
    if isinstance(value, str):
        if not _DECIMAL.fullmatch(value):
            raise DecodeError(f"{what} value {value!r} is not a decimal integer")
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DecodeError(f"{what} value must be a decimal string, got {value!r}")


def val_from_json(obj: Mapping[str, object]) -> Val:
    """Parse the ``{type, value}`` JSON form; raises :class:`DecodeError` on anything else."""
    if not isinstance(obj, Mapping):
        raise DecodeError("a Val must be a JSON object")
    kind = obj.get("type")
    if "value" not in obj:
        raise DecodeError("a Val needs a 'value'")
    value = obj["value"]
    with _decoding():
        if kind == "Bool":
            if not isinstance(value, bool):
                raise DecodeError("Bool value must be true or false")
            return ValBool(value)
        if kind == "I256":
            return ValI256(_json_int(value, "I256"))
        if kind == "U256":
            return ValU256(_json_int(value, "U256"))
        if kind == "ByteVec":
            if not isinstance(value, str):
                raise DecodeError("ByteVec value must be a hex string")
            return ValByteVec(parse_hex(value, "ByteVec"))
        if kind == "Address":
            if not isinstance(value, str):
                raise DecodeError("Address value must be a string")
            try:
                return ValAddress(parse_address(value))
            except AlephiumError as e:
                raise DecodeError(str(e)) from None
    raise DecodeError(f"unsupported Val type {kind!r}")


# --------------------------------------------------------------------------------------------
# The contract-call pattern


@dataclass(frozen=True, slots=True)
class Approvals:
    """Assets the caller approves for the called method: ALPH and (token id, amount) pairs."""

    alph: int = 0
    tokens: tuple[tuple[bytes, int], ...] = ()

    def __post_init__(self) -> None:
        if not _is_int(self.alph) or not 0 <= self.alph <= U256_MAX:
            raise EncodeError(f"approved ALPH {self.alph!r} out of range")
        seen: set[bytes] = set()
        for token_id, amount in self.tokens:
            if not isinstance(token_id, bytes) or len(token_id) != 32:
                raise EncodeError("a token id must be 32 bytes")
            if not _is_int(amount) or not 0 < amount <= U256_MAX:
                raise EncodeError(f"approved token amount {amount!r} out of range")
            if token_id in seen:
                raise EncodeError(f"token {token_id.hex()} approved twice")
            seen.add(token_id)

    @property
    def count(self) -> int:
        """How many assets are approved (ALPH counts when its amount is not zero)."""
        return (1 if self.alph else 0) + len(self.tokens)


NO_APPROVALS: Final = Approvals()


@dataclass(frozen=True, slots=True)
class ContractCall:
    """What a recognised contract-call script does."""

    contract_id: bytes
    method_index: int
    args: tuple[Val, ...]
    approvals: Approvals
    returns: int


def _arg_instr(arg: Val) -> Instr:
    match arg:
        case ValBool(v):
            return ConstTrue if v else ConstFalse
        case ValI256(v):
            return i256_const(v)
        case ValU256(v):
            return u256_const(v)
        case ValByteVec(v):
            return BytesConst(v)
        case ValAddress(v):
            return AddressConst(v)
    raise EncodeError(f"unsupported contract-call argument {arg!r}")


def build_contract_call(
    contract_id: bytes,
    method_index: int,
    args: Sequence[ScriptArg],
    *,
    caller_approvals: Approvals | None = None,
    returns: int = 0,
) -> TxScript:
    """A TxScript calling ``method_index`` of ``contract_id``, as the Ralph compiler emits it.

    The caller approves ``caller_approvals`` (ALPH first, then tokens in order); results are
    popped. The entry method uses preapproved assets, as a compiled ``TxScript`` does.
    """
    if not isinstance(contract_id, bytes) or len(contract_id) != 32:
        raise EncodeError("contract id must be 32 bytes")
    if not _is_byte(method_index):
        raise EncodeError(f"method index {method_index!r} out of range 0..255")
    if not _is_int(returns) or returns < 0:
        raise EncodeError(f"return count {returns!r} must be a non-negative int")
    approvals = caller_approvals if caller_approvals is not None else NO_APPROVALS
    instrs: list[Instr] = []
    if approvals.count:
        # {callerAddress!() -> ...}: the address once, Dup'ed for each further asset.
        instrs.append(CallerAddress)
        instrs.extend([Dup] * (approvals.count - 1))
        if approvals.alph:
            instrs += [u256_const(approvals.alph), ApproveAlph]
        for token_id, amount in approvals.tokens:
            instrs += [BytesConst(token_id), u256_const(amount), ApproveToken]
    instrs.extend(_arg_instr(a) for a in args)
    instrs += [u256_const(len(args)), u256_const(returns)]
    instrs += [BytesConst(contract_id), CallExternal(method_index)]
    instrs.extend([Pop] * returns)
    method = Method(
        is_public=True,
        use_preapproved_assets=True,
        use_contract_assets=False,
        use_pay_to_contract_only=False,
        args_length=0,
        locals_length=0,
        return_length=0,
        instrs=tuple(instrs),
    )
    return TxScript((method,))


def _arg_of(instr: Instr) -> Val | None:
    op = instr.opcode
    if op == 0x03:
        return ValBool(True)
    if op == 0x04:
        return ValBool(False)
    if (u := _u256_of(instr)) is not None:
        return ValU256(u)
    if (i := _i256_of(instr)) is not None:
        return ValI256(i)
    if op == 0x14 and isinstance(instr.arg, bytes):
        return ValByteVec(instr.arg)
    if op == 0x15 and isinstance(instr.arg, LockupScript):
        return ValAddress(instr.arg)
    return None


def _parse_approvals(instrs: Sequence[Instr]) -> tuple[Approvals, int] | None:
    """Parse a leading ``CallerAddress Dup* (amount ApproveAlph | id amount ApproveToken)+``;
    returns the approvals and the index after them."""
    if not instrs or instrs[0] != CallerAddress:
        return NO_APPROVALS, 0
    i = 1
    while i < len(instrs) and instrs[i] == Dup:
        i += 1
    count = i  # one asset for the address plus one per Dup
    alph: int | None = None
    tokens: list[tuple[bytes, int]] = []
    for _ in range(count):
        if i + 1 < len(instrs) and instrs[i + 1] == ApproveAlph:
            amount = _u256_of(instrs[i])
            # A zero ALPH approval is never emitted by the builder; reject rather than drop it.
            if not amount or alph is not None:
                return None
            alph = amount
            i += 2
        elif i + 2 < len(instrs) and instrs[i + 2] == ApproveToken:
            token_id = instrs[i].arg
            amount = _u256_of(instrs[i + 1])
            if instrs[i].opcode != 0x14 or amount is None:
                return None
            if not isinstance(token_id, bytes) or len(token_id) != 32:
                return None
            tokens.append((token_id, amount))
            i += 3
        else:
            return None
    try:
        return Approvals(alph or 0, tuple(tokens)), i
    except EncodeError:
        return None


def parse_contract_call(script: TxScript) -> ContractCall | None:
    """Recognise the :func:`build_contract_call` pattern (the Ralph compiler's output for one
    external call whose results are dropped); anything else gives None."""
    if len(script.methods) != 1:
        return None
    method = script.methods[0]
    if method.args_length != 0 or method.return_length != 0:
        return None
    instrs = method.instrs
    parsed = _parse_approvals(instrs)
    if parsed is None:
        return None
    approvals, start = parsed
    if approvals.count and not method.use_preapproved_assets:
        return None
    # Tail: #args #returns BytesConst(id) CallExternal(i) Pop*returns
    end = len(instrs)
    pops = 0
    while end > start and instrs[end - 1] == Pop:
        end -= 1
        pops += 1
    if end - start < 4:
        return None
    n_args, n_returns = _u256_of(instrs[end - 4]), _u256_of(instrs[end - 3])
    id_instr, call = instrs[end - 2], instrs[end - 1]
    method_index = call.arg
    if call.opcode != 0x01 or id_instr.opcode != 0x14 or not isinstance(method_index, int):
        return None
    contract_id = id_instr.arg
    if not isinstance(contract_id, bytes) or len(contract_id) != 32:
        return None
    if n_returns != pops:
        return None
    arg_instrs = instrs[start : end - 4]
    if n_args != len(arg_instrs):
        return None
    args: list[Val] = []
    for instr in arg_instrs:
        arg = _arg_of(instr)
        if arg is None:
            return None
        args.append(arg)
    return ContractCall(
        contract_id=contract_id,
        method_index=method_index,
        args=tuple(args),
        approvals=approvals,
        returns=pops,
    )
