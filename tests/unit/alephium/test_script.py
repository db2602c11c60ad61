"""Instructions, methods, scripts, Val and the contract-call builder/recogniser."""

from __future__ import annotations

import pytest

from predmarket.alephium.address import parse_address
from predmarket.alephium.errors import AlephiumError, DecodeError, EncodeError
from predmarket.alephium.lockup import P2C, P2PKH, encode_lockup
from predmarket.alephium.script import (
    OPCODE_BY_NAME,
    OPCODES,
    AddressConst,
    Approvals,
    ApproveAlph,
    ApproveToken,
    BytesConst,
    CallerAddress,
    CallExternal,
    CallExternalBySelector,
    CallLocal,
    ConstFalse,
    ConstTrue,
    Dup,
    I256Const,
    I256ConstN1,
    Imm,
    Instr,
    LoadLocal,
    Method,
    MethodSelector,
    MinimalContractDeposit,
    Pop,
    Return,
    SelfAddress,
    StoreLocal,
    TxScript,
    U256Add,
    U256Const,
    U256Const0,
    U256Const4,
    U256Mul,
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
    i256_const,
    parse_contract_call,
    u256_const,
    val_from_json,
    val_to_json,
)

GL_ADDRESS = "3cUs1DFrH9ZJcx2uTJ8H5EbEKWcmRzNQ6phHszK4NQDqdzWniwTft"
P2PKH_ADDRESS = "17sXADgSLHoYucvFXNMpXfFBGPUU3f9nRtigZURAD9ovv"
CONTRACT_ID = bytes.fromhex("aa" * 31 + "00")
TOKEN_A = bytes(range(32))
TOKEN_B = bytes(range(32, 64))
LOCKUP = parse_address(P2PKH_ADDRESS)

#: One example immediate per kind, with its encoding.
IMMEDIATES = {
    Imm.NONE: (None, ""),
    Imm.BYTE: (200, "c8"),
    Imm.BYTE_PAIR: ((1, 2), "0102"),
    Imm.I256: (-33, "7fdf"),
    Imm.U256: (10**18, "c40de0b6b3a7640000"),
    Imm.BYTES: (b"\xde\xad", "02dead"),
    Imm.LOCKUP: (LOCKUP, encode_lockup(LOCKUP).hex()),
    Imm.I32: (-8193, "bfffdfff"),
    Imm.BYTESTRINGS: ((b"a", b""), "02016100"),
    Imm.INT32: (-2, "fffffffe"),
}


class TestInstructionTable:
    def test_sdk_range(self) -> None:
        assert sorted(OPCODES) == [*range(0x00, 0x92), *range(0xA0, 0xD7)]

    def test_immediate_opcodes(self) -> None:
        with_imm = {op: kind for op, (_, kind) in OPCODES.items() if kind is not Imm.NONE}
        assert with_imm == {
            0x00: Imm.BYTE,
            0x01: Imm.BYTE,
            0x12: Imm.I256,
            0x13: Imm.U256,
            0x14: Imm.BYTES,
            0x15: Imm.LOCKUP,
            0x16: Imm.BYTE,
            0x17: Imm.BYTE,
            0x4A: Imm.I32,
            0x4B: Imm.I32,
            0x4C: Imm.I32,
            0x7E: Imm.BYTESTRINGS,
            0x8F: Imm.BYTE,
            0xA0: Imm.BYTE,
            0xA1: Imm.BYTE,
            0xCE: Imm.BYTE,
            0xD2: Imm.BYTE_PAIR,
            0xD3: Imm.INT32,
            0xD4: Imm.INT32,
        }

    @pytest.mark.parametrize(
        ("name", "opcode"),
        [
            ("CallLocal", 0x00),
            ("Return", 0x02),
            ("I256ConstN1", 0x0B),
            ("U256Const5", 0x11),
            ("Pop", 0x18),
            ("U256Add", 0x2A),
            ("U256Mul", 0x2C),
            ("Dup", 0x7A),
            ("DEBUG", 0x7E),
            ("GetSegregatedWebAuthnSignature", 0x8E),
            ("U256RoundInfinityDiv", 0x91),
            ("ApproveAlph", 0xA2),
            ("ApproveToken", 0xA3),
            ("SelfAddress", 0xB2),
            ("CallerAddress", 0xB4),
            ("ALPHTokenId", 0xCD),
            ("MinimalContractDeposit", 0xD1),
            ("ExternalCallerAddress", 0xD6),
        ],
    )
    def test_names(self, name: str, opcode: int) -> None:
        assert OPCODE_BY_NAME[name] == opcode
        assert OPCODES[opcode][0] == name


class TestInstr:
    @pytest.mark.parametrize("opcode", sorted(OPCODES))
    def test_every_opcode_round_trips(self, opcode: int) -> None:
        arg, arg_hex = IMMEDIATES[OPCODES[opcode][1]]
        instr = Instr(opcode, arg)
        raw = encode_instr(instr)
        assert raw.hex() == f"{opcode:02x}{arg_hex}"
        assert decode_instr(raw) == instr

    @pytest.mark.parametrize("opcode", [*range(0x92, 0xA0), *range(0xD7, 0x100)])
    def test_unknown_opcode(self, opcode: int) -> None:
        with pytest.raises(DecodeError, match="unknown opcode"):
            decode_instr(bytes([opcode]))
        with pytest.raises(EncodeError):
            Instr(opcode)

    def test_named_constructors(self) -> None:
        assert encode_instr(CallLocal(2)).hex() == "0002"
        assert encode_instr(CallExternal(3)).hex() == "0103"
        assert encode_instr(Return).hex() == "02"
        assert encode_instr(ConstTrue).hex() == "03"
        assert encode_instr(ConstFalse).hex() == "04"
        assert encode_instr(I256Const(-1)).hex() == "123f"
        assert encode_instr(U256Const(12345)).hex() == "137039"
        assert encode_instr(BytesConst(CONTRACT_ID)).hex() == "144020" + CONTRACT_ID.hex()
        assert encode_instr(AddressConst(LOCKUP)).hex() == "15" + encode_lockup(LOCKUP).hex()
        assert encode_instr(LoadLocal(1)).hex() == "1601"
        assert encode_instr(StoreLocal(1)).hex() == "1701"
        assert encode_instr(Pop).hex() == "18"
        assert encode_instr(U256Add).hex() == "2a"
        assert encode_instr(U256Mul).hex() == "2c"
        assert encode_instr(Dup).hex() == "7a"
        assert encode_instr(ApproveAlph).hex() == "a2"
        assert encode_instr(ApproveToken).hex() == "a3"
        assert encode_instr(SelfAddress).hex() == "b2"
        assert encode_instr(CallerAddress).hex() == "b4"
        assert encode_instr(MinimalContractDeposit).hex() == "d1"
        assert encode_instr(MethodSelector(0x12345678)).hex() == "d312345678"
        assert encode_instr(CallExternalBySelector(-1)).hex() == "d4ffffffff"
        assert Instr.named("U256Add") == U256Add

    @pytest.mark.parametrize(
        ("value", "hexed"),
        [(0, "0c"), (4, "10"), (5, "11"), (6, "1306"), (12345, "137039"), (2**256 - 1, None)],
    )
    def test_u256_const_like_the_compiler(self, value: int, hexed: str | None) -> None:
        raw = encode_instr(u256_const(value)).hex()
        if hexed is not None:
            assert raw == hexed
        assert decode_instr(bytes.fromhex(raw)) == u256_const(value)

    @pytest.mark.parametrize(
        ("value", "hexed"),
        [(0, "05"), (5, "0a"), (-1, "0b"), (6, "1206"), (-2, "123e"), (-(2**255), None)],
    )
    def test_i256_const_like_the_compiler(self, value: int, hexed: str | None) -> None:
        raw = encode_instr(i256_const(value)).hex()
        if hexed is not None:
            assert raw == hexed
        assert i256_const(-1) == I256ConstN1

    @pytest.mark.parametrize(
        "build",
        [
            lambda: CallExternal(256),
            lambda: CallLocal(-1),
            lambda: U256Const(-1),
            lambda: U256Const(2**256),
            lambda: I256Const(2**255),
            lambda: BytesConst("ab"),  # type: ignore[arg-type]
            lambda: AddressConst(b"\x00" * 33),  # type: ignore[arg-type]
            lambda: MethodSelector(2**31),
            lambda: Instr(0x02, 1),
            lambda: Instr(0x4A, None),
            lambda: Instr(0x7E, ("x",)),  # type: ignore[arg-type]
            lambda: Instr(0xD2, (1, 256)),
            lambda: Instr(True),
            lambda: Instr.named("NoSuchInstr"),
        ],
    )
    def test_invalid_immediates(self, build: object) -> None:
        with pytest.raises(EncodeError):
            build()  # type: ignore[operator]

    @pytest.mark.parametrize("raw", ["", "01", "13", "13c4", "1405ab", "1500", "d3123456", "7e01"])
    def test_truncated(self, raw: str) -> None:
        with pytest.raises(DecodeError):
            decode_instr(bytes.fromhex(raw))

    def test_trailing_bytes(self) -> None:
        with pytest.raises(DecodeError, match="trailing"):
            decode_instr(bytes.fromhex("0200"))

    def test_negative_bytestring_length(self) -> None:
        with pytest.raises(DecodeError):
            decode_instr(bytes.fromhex("143f"))


def _method(**overrides: object) -> Method:
    fields: dict[str, object] = {
        "is_public": True,
        "use_preapproved_assets": True,
        "use_contract_assets": False,
        "use_pay_to_contract_only": False,
        "args_length": 0,
        "locals_length": 0,
        "return_length": 0,
        "instrs": (Return,),
    }
    fields.update(overrides)
    return Method(**fields)  # type: ignore[arg-type]


class TestMethod:
    @pytest.mark.parametrize(
        ("preapproved", "contract", "pay_only", "byte"),
        [
            (False, False, False, 0),
            (True, True, False, 1),
            (False, True, False, 2),
            (True, False, False, 3),
            (False, False, True, 4),
            (True, True, True, 5),
            (False, True, True, 6),
            (True, False, True, 7),
        ],
    )
    def test_asset_modifier(
        self, preapproved: bool, contract: bool, pay_only: bool, byte: int
    ) -> None:
        method = _method(
            use_preapproved_assets=preapproved,
            use_contract_assets=contract,
            use_pay_to_contract_only=pay_only,
        )
        assert method.asset_modifier == byte
        raw = encode_method(method)
        assert raw[:2] == bytes([1, byte])
        assert decode_method(raw) == method

    def test_header_layout(self) -> None:
        method = _method(args_length=2, locals_length=40, return_length=1, instrs=())
        assert encode_method(method).hex() == "01" + "03" + "02" + "4028" + "01" + "00"

    @pytest.mark.parametrize("modifier", [0x08, 0x10, 0x80, 0xFF])
    def test_invalid_asset_modifier(self, modifier: int) -> None:
        with pytest.raises(DecodeError, match="asset modifier"):
            decode_method(bytes([1, modifier, 0, 0, 0, 0]))

    def test_is_public_must_be_a_bool_byte(self) -> None:
        with pytest.raises(DecodeError):
            decode_method(bytes([2, 3, 0, 0, 0, 0]))

    @pytest.mark.parametrize(
        "header",
        ["01033f0000", "0103003f00", "010300003f", "0103020100"],  # -1 args/locals/returns; 2 > 1
    )
    def test_invalid_lengths(self, header: str) -> None:
        with pytest.raises(DecodeError):
            decode_method(bytes.fromhex(header + "00"))

    def test_negative_instruction_count(self) -> None:
        with pytest.raises(DecodeError, match="negative"):
            decode_method(bytes.fromhex("01030000003f"))

    @pytest.mark.parametrize(
        "overrides",
        [
            {"args_length": -1, "locals_length": 0},
            {"args_length": 2, "locals_length": 1},
            {"return_length": -1},
            {"locals_length": 2**31},
            {"instrs": [Return]},
        ],
    )
    def test_constructor_rejects(self, overrides: dict[str, object]) -> None:
        with pytest.raises(EncodeError):
            _method(**overrides)


class TestTxScript:
    def test_round_trip(self) -> None:
        script = TxScript((_method(), _method(is_public=False, instrs=(Pop, Return))))
        raw = encode_script(script)
        assert decode_script(raw) == script
        assert decode_script(raw.hex()) == script

    def test_first_method_must_be_public(self) -> None:
        private = encode_method(_method(is_public=False))
        with pytest.raises(DecodeError, match="public"):
            decode_script(b"\x01" + private)
        with pytest.raises(EncodeError, match="public"):
            TxScript((_method(is_public=False),))

    def test_no_methods(self) -> None:
        with pytest.raises(DecodeError):
            decode_script(b"\x00")
        with pytest.raises(EncodeError):
            TxScript(())

    def test_negative_method_count(self) -> None:
        with pytest.raises(DecodeError, match="negative"):
            decode_script(b"\x3f")

    def test_trailing_bytes(self) -> None:
        raw = encode_script(TxScript((_method(),)))
        with pytest.raises(DecodeError, match="trailing"):
            decode_script(raw + b"\x00")

    def test_stateless_rejects_preapproved_assets(self) -> None:
        raw = encode_script(TxScript((_method(),)))
        assert decode_script(raw)
        with pytest.raises(DecodeError, match="preapproved"):
            decode_script(raw, stateless=True)
        ok = encode_script(TxScript((_method(use_preapproved_assets=False),)))
        assert decode_script(ok, stateless=True)

    def test_bad_hex(self) -> None:
        with pytest.raises(DecodeError):
            decode_script("0g")


class TestVal:
    @pytest.mark.parametrize(
        ("val", "hexed"),
        [
            (ValBool(True), "0001"),
            (ValBool(False), "0000"),
            (ValI256(-1), "013f"),
            (ValI256(10**18), "01c40de0b6b3a7640000"),
            (ValU256(2**256 - 1), "02dc" + "ff" * 32),
            (ValByteVec(b"\xab"), "0301ab"),
            (ValAddress(LOCKUP), "04" + encode_lockup(LOCKUP).hex()),
        ],
    )
    def test_codec(self, val: ValBool, hexed: str) -> None:
        assert encode_val(val).hex() == hexed
        assert decode_val(bytes.fromhex(hexed)) == val

    @pytest.mark.parametrize("raw", ["05", "ff", "0002", "02", "0302ab", "0409", "", "0001ff"])
    def test_rejects(self, raw: str) -> None:
        with pytest.raises(DecodeError):
            decode_val(bytes.fromhex(raw))

    @pytest.mark.parametrize(
        "build",
        [
            lambda: ValBool(1),  # type: ignore[arg-type]
            lambda: ValU256(-1),
            lambda: ValU256(True),
            lambda: ValI256(2**255),
            lambda: ValByteVec("ab"),  # type: ignore[arg-type]
            lambda: ValAddress("1abc"),  # type: ignore[arg-type]
        ],
    )
    def test_constructor_rejects(self, build: object) -> None:
        with pytest.raises(EncodeError):
            build()  # type: ignore[operator]

    @pytest.mark.parametrize(
        ("val", "obj"),
        [
            (ValBool(True), {"type": "Bool", "value": True}),
            (ValI256(-5), {"type": "I256", "value": "-5"}),
            (ValU256(10**30), {"type": "U256", "value": str(10**30)}),
            (ValByteVec(b"\x01\xff"), {"type": "ByteVec", "value": "01ff"}),
            (ValAddress(LOCKUP), {"type": "Address", "value": P2PKH_ADDRESS}),
            (
                ValAddress(parse_address(GL_ADDRESS + ":2")),
                {"type": "Address", "value": GL_ADDRESS + ":2"},
            ),
            (ValAddress(P2C(CONTRACT_ID)), {"type": "Address", "value": None}),
        ],
    )
    def test_json(self, val: ValBool, obj: dict[str, object]) -> None:
        got = val_to_json(val)
        if obj["value"] is not None:
            assert got == obj
        assert val_from_json(got) == val

    def test_json_accepts_int_numbers(self) -> None:
        assert val_from_json({"type": "U256", "value": 7}) == ValU256(7)

    @pytest.mark.parametrize(
        "obj",
        [
            {"type": "U256", "value": "-1"},
            {"type": "U256", "value": "1.5"},
            {"type": "U256", "value": " 1"},
            {"type": "U256", "value": "--1"},
            {"type": "U256", "value": ""},
            {"type": "U256", "value": True},
            {"type": "I256", "value": str(2**255)},
            {"type": "Bool", "value": "true"},
            {"type": "ByteVec", "value": "abc"},
            {"type": "ByteVec", "value": 12},
            {"type": "Address", "value": "not-an-address"},
            {"type": "Address", "value": GL_ADDRESS + ":4"},
            {"type": "Array", "value": []},
            {"type": "U256"},
            {"value": "1"},
        ],
    )
    def test_json_rejects(self, obj: dict[str, object]) -> None:
        with pytest.raises(DecodeError):
            val_from_json(obj)


class TestContractCall:
    def test_alph_and_tokens(self) -> None:
        script = build_contract_call(
            CONTRACT_ID,
            7,
            [ValU256(1), ValI256(-1)],
            caller_approvals=Approvals(alph=10**17, tokens=((TOKEN_A, 5), (TOKEN_B, 10**18))),
            returns=2,
        )
        (method,) = script.methods
        assert method.is_public and method.use_preapproved_assets
        assert not method.use_contract_assets and method.args_length == 0
        assert method.instrs == (
            CallerAddress,
            Dup,
            Dup,
            U256Const(10**17),
            ApproveAlph,
            BytesConst(TOKEN_A),
            u256_const(5),
            ApproveToken,
            BytesConst(TOKEN_B),
            U256Const(10**18),
            ApproveToken,
            u256_const(1),
            I256ConstN1,
            u256_const(2),
            u256_const(2),
            BytesConst(CONTRACT_ID),
            CallExternal(7),
            Pop,
            Pop,
        )
        call = parse_contract_call(script)
        assert call is not None
        assert call.approvals == Approvals(alph=10**17, tokens=((TOKEN_A, 5), (TOKEN_B, 10**18)))
        assert call.args == (ValU256(1), ValI256(-1))
        assert (call.contract_id, call.method_index, call.returns) == (CONTRACT_ID, 7, 2)

    def test_tokens_only(self) -> None:
        script = build_contract_call(
            CONTRACT_ID, 0, [], caller_approvals=Approvals(tokens=((TOKEN_A, 1),))
        )
        assert script.methods[0].instrs[:4] == (
            CallerAddress,
            BytesConst(TOKEN_A),
            u256_const(1),
            ApproveToken,
        )
        call = parse_contract_call(script)
        assert call is not None and call.approvals == Approvals(tokens=((TOKEN_A, 1),))

    def test_no_approvals(self) -> None:
        script = build_contract_call(CONTRACT_ID, 1, [ValBool(False)])
        assert script.methods[0].instrs == (
            ConstFalse,
            u256_const(1),
            U256Const0,
            BytesConst(CONTRACT_ID),
            CallExternal(1),
        )
        call = parse_contract_call(script)
        assert call is not None and call.approvals == Approvals() and call.args == (ValBool(False),)

    def test_all_argument_kinds(self) -> None:
        args: list[Val] = [
            ValU256(0),
            ValU256(2**200),
            ValI256(-(2**100)),
            ValBool(True),
            ValByteVec(b""),
            ValAddress(parse_address(GL_ADDRESS + ":3")),
        ]
        script = build_contract_call(CONTRACT_ID, 255, args, caller_approvals=Approvals(alph=1))
        assert decode_script(encode_script(script)) == script
        call = parse_contract_call(script)
        assert call is not None and list(call.args) == args and call.method_index == 255

    @pytest.mark.parametrize(
        ("contract_id", "index", "returns"),
        [(b"\x00" * 31, 0, 0), (CONTRACT_ID, 256, 0), (CONTRACT_ID, -1, 0), (CONTRACT_ID, 0, -1)],
    )
    def test_builder_rejects(self, contract_id: bytes, index: int, returns: int) -> None:
        with pytest.raises(EncodeError):
            build_contract_call(contract_id, index, [], returns=returns)

    @pytest.mark.parametrize(
        "approvals",
        [
            lambda: Approvals(alph=-1),
            lambda: Approvals(tokens=((b"\x00" * 31, 1),)),
            lambda: Approvals(tokens=((TOKEN_A, 0),)),
            lambda: Approvals(tokens=((TOKEN_A, 1), (TOKEN_A, 2))),
        ],
    )
    def test_approvals_rejects(self, approvals: object) -> None:
        with pytest.raises(EncodeError):
            approvals()  # type: ignore[operator]

    def _tweak(self, instrs: list[Instr]) -> TxScript:
        return TxScript((_method(instrs=tuple(instrs)),))

    def _base(self) -> list[Instr]:
        script = build_contract_call(
            CONTRACT_ID, 2, [ValU256(9)], caller_approvals=Approvals(alph=10), returns=1
        )
        return list(script.methods[0].instrs)

    def test_base_is_recognised(self) -> None:
        assert parse_contract_call(self._tweak(self._base())) is not None

    @pytest.mark.parametrize(
        "mutate",
        [
            lambda i: i.insert(0, Return),  # something before the approvals
            lambda i: i.insert(-3, LoadLocal(0)),  # a non-constant argument
            lambda i: i.__setitem__(-4, U256Const4),  # wrong #args
            lambda i: i.__setitem__(-3, U256Const0),  # #returns does not match the Pops
            lambda i: i.pop(),  # results not popped
            lambda i: i.__setitem__(-2, CallLocal(2)),  # not an external call
            lambda i: i.__setitem__(-3, BytesConst(b"\x01" * 31)),  # not a 32-byte id
            lambda i: i.__setitem__(2, ApproveToken),  # malformed approval
            lambda i: i.insert(1, Dup),  # Dup without a second asset
            lambda i: i.__setitem__(1, U256Const0),  # zero ALPH approval
            lambda i: i.append(Return),  # trailing code
            lambda i: i.clear(),
        ],
    )
    def test_other_code_is_not_a_call(self, mutate: object) -> None:
        instrs = self._base()
        mutate(instrs)  # type: ignore[operator]
        assert parse_contract_call(self._tweak(instrs)) is None

    def test_two_alph_approvals_are_not_a_call(self) -> None:
        instrs = [CallerAddress, Dup, u256_const(1), ApproveAlph, u256_const(2), ApproveAlph]
        tail = [U256Const0, U256Const0, BytesConst(CONTRACT_ID), CallExternal(0)]
        assert parse_contract_call(self._tweak(instrs + tail)) is None
        assert parse_contract_call(self._tweak(instrs[:1] + instrs[2:4] + tail)) is not None

    def test_approvals_need_preapproved_assets(self) -> None:
        instrs = tuple(self._base())
        script = TxScript((_method(instrs=instrs, use_preapproved_assets=False),))
        assert parse_contract_call(script) is None

    def test_header_and_method_count(self) -> None:
        instrs = tuple(self._base())
        assert parse_contract_call(TxScript((_method(instrs=instrs, return_length=1),))) is None
        two = TxScript((_method(instrs=instrs), _method()))
        assert parse_contract_call(two) is None

    def test_address_arg_kinds(self) -> None:
        p2pkh = parse_address(P2PKH_ADDRESS)
        assert isinstance(p2pkh, P2PKH)
        script = build_contract_call(CONTRACT_ID, 0, [ValAddress(P2C(CONTRACT_ID))])
        call = parse_contract_call(script)
        assert call is not None and call.args == (ValAddress(P2C(CONTRACT_ID)),)


def test_errors_are_alephium_errors() -> None:
    assert issubclass(DecodeError, AlephiumError) and issubclass(EncodeError, AlephiumError)
