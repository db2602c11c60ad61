"""Transaction codec behaviour: unlock scripts, outputs, inputs, (un)signed txs, ids, rules."""

from __future__ import annotations

import hashlib

import pytest

from predmarket.alephium.address import parse_address
from predmarket.alephium.constants import DUST_AMOUNT, ONE_ALPH
from predmarket.alephium.errors import AlephiumError, DecodeError, EncodeError
from predmarket.alephium.lockup import P2C, P2PKH, KeyKind, PublicKeyLike, encode_lockup
from predmarket.alephium.script import (
    Method,
    Return,
    TxScript,
    ValAddress,
    ValBool,
    ValU256,
    encode_script,
)
from predmarket.alephium.tx import AssetOutput as Out
from predmarket.alephium.tx import ContractOutput as COut
from predmarket.alephium.tx import Input as In
from predmarket.alephium.tx import OutputRef as Ref
from predmarket.alephium.tx import (
    P2HMPKUnlock,
    P2MPKHUnlock,
    P2PKHUnlock,
    P2PKUnlock,
    P2SHUnlock,
    PoLWUnlock,
    SameAsPrevious,
    Token,
    Transaction,
    TxRuleError,
    UnlockScript,
    UnsignedTx,
    check_output_rules,
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
    from_group,
    output_ref_key,
    output_rule_violations,
    signed_transaction,
    to_group,
    tx_id,
    unsigned_tx_to_api_json,
)

PK = bytes.fromhex("0340bb27b45880aefc69d2766f8fcae749992bfd2edb7b745f090534035eac2720")
PK_HEX = PK.hex()
KEY = bytes(range(32))
OWN = parse_address("1qFU9uLcMEmPpfpoNx8Dm2iHnkHh2Fb35Y8TCFGb7BoR")  # group 1
GL = "3cUs1DFrH9ZJcx2uTJ8H5EbEKWcmRzNQ6phHszK4NQDqdzWniwTft"
TOKEN = Token(bytes([7]) * 32, 42)
SIG = bytes(range(64))


def _stateless_script() -> bytes:
    method = Method(True, False, False, False, 1, 1, 0, (Return,))
    return encode_script(TxScript((method,)))


def _tx(
    *,
    inputs: tuple[In, ...] | None = None,
    outputs: tuple[Out, ...] | None = None,
    script: TxScript | None = None,
) -> UnsignedTx:
    return UnsignedTx(
        version=0,
        network_id=0,
        script=script,
        gas_amount=20_000,
        gas_price=10**11,
        inputs=inputs if inputs is not None else (In(-1308003579, KEY, P2PKHUnlock(PK)),),
        fixed_outputs=outputs if outputs is not None else (Out(ONE_ALPH, OWN),),
    )


class TestUnlockScripts:
    @pytest.mark.parametrize(
        ("unlock", "hexed"),
        [
            (P2PKHUnlock(PK), "00" + PK_HEX),
            (P2MPKHUnlock(((PK, 0), (PK, 5000))), "0102" + PK_HEX + "00" + PK_HEX + "5388"),
            (P2SHUnlock(_stateless_script(), (ValU256(1), ValBool(True))), None),
            (SameAsPrevious(), "03"),
            (PoLWUnlock(PK), "04" + PK_HEX),
            (P2PKUnlock(), "05"),
            (
                P2HMPKUnlock(
                    (PublicKeyLike(KeyKind.SECP256K1, PK), PublicKeyLike(KeyKind.ED25519, PK[1:])),
                    (0, 70000),
                ),
                # SDK 3.0.5 unlockScriptCodec output for the same value
                "0602" + "00" + PK_HEX + "02" + PK_HEX[2:] + "02" + "00" + "80011170",
            ),
        ],
    )
    def test_codec(self, unlock: UnlockScript, hexed: str | None) -> None:
        raw = encode_unlock_script(unlock)
        if hexed is not None:
            assert raw.hex() == hexed
        assert decode_unlock_script(raw) == unlock
        assert decode_unlock_script(raw.hex()) == unlock

    def test_p2sh_layout(self) -> None:
        script = _stateless_script()
        unlock = P2SHUnlock(script, (ValU256(1),))
        assert encode_unlock_script(unlock) == b"\x02" + script + bytes.fromhex("010201")
        assert unlock.decoded_script.methods[0].args_length == 1

    def test_p2sh_keeps_exact_script_bytes(self) -> None:
        # A non-minimal (but valid) compact int in the script must survive decode/encode, since
        # the P2SH lockup is the hash of exactly these bytes.
        script = bytes.fromhex("01" + "01" + "00" + "4001" + "01" + "00" + "01" + "02")
        raw = b"\x02" + script + b"\x00"
        assert encode_unlock_script(decode_unlock_script(raw)) == raw

    @pytest.mark.parametrize("tag", [7, 8, 0x80, 0xFF])
    def test_unknown_tag(self, tag: int) -> None:
        with pytest.raises(DecodeError, match="unlock script tag"):
            decode_unlock_script(bytes([tag]))

    def test_p2sh_script_must_be_stateless(self) -> None:
        stateful = encode_script(TxScript((Method(True, True, False, False, 0, 0, 0, ()),)))
        with pytest.raises(DecodeError, match="preapproved"):
            decode_unlock_script(b"\x02" + stateful + b"\x00")
        with pytest.raises(EncodeError):
            P2SHUnlock(stateful, ())

    @pytest.mark.parametrize(
        "raw",
        [
            "",
            "00" + PK_HEX[:-2],
            "013f",  # negative key count
            "0101" + PK_HEX,  # key without its index
            "0600",  # missing index array
            "060109" + PK_HEX,  # unknown key kind
            "04",
            "0500",  # trailing byte after P2PK
        ],
    )
    def test_malformed(self, raw: str) -> None:
        with pytest.raises(DecodeError):
            decode_unlock_script(bytes.fromhex(raw))

    @pytest.mark.parametrize(
        "build",
        [
            lambda: P2PKHUnlock(PK[:-1]),
            lambda: PoLWUnlock(b""),
            lambda: P2MPKHUnlock(((PK, 2**31),)),
            lambda: P2MPKHUnlock([(PK, 0)]),  # type: ignore[arg-type]
            lambda: P2HMPKUnlock((), (True,)),
            lambda: P2SHUnlock(b"\x00", ()),
        ],
    )
    def test_constructor_rejects(self, build: object) -> None:
        with pytest.raises(EncodeError):
            build()  # type: ignore[operator]


class TestOutputs:
    def test_asset_output_layout(self) -> None:
        out = Out(DUST_AMOUNT, OWN, lock_time=1, tokens=(TOKEN,), additional_data=b"hi")
        expected = (
            "c3038d7ea4c68000"
            + encode_lockup(OWN).hex()
            + "0000000000000001"
            + "01"
            + TOKEN.id.hex()
            + "2a"
            + "026869"
        )
        assert encode_asset_output(out).hex() == expected
        assert decode_asset_output(expected) == out

    def test_contract_lockup_is_not_an_asset_output(self) -> None:
        with pytest.raises(EncodeError):
            Out(ONE_ALPH, P2C(KEY))
        raw = encode_asset_output(Out(ONE_ALPH, OWN))
        forged = raw.replace(encode_lockup(OWN), encode_lockup(P2C(KEY)))
        with pytest.raises(DecodeError, match="P2C"):
            decode_asset_output(forged)

    @pytest.mark.parametrize(
        "build",
        [
            lambda: Out(-1, OWN),
            lambda: Out(ONE_ALPH, OWN, lock_time=2**64),
            lambda: Out(ONE_ALPH, OWN, tokens=[TOKEN]),  # type: ignore[arg-type]
            lambda: Out(ONE_ALPH, OWN, additional_data="x"),  # type: ignore[arg-type]
            lambda: Out(ONE_ALPH, "addr"),  # type: ignore[arg-type]
            lambda: Token(b"\x00", 1),
            lambda: Token(KEY, -1),
            lambda: COut(1, KEY[:31]),
            lambda: Ref(2**31, KEY),
            lambda: In(0, KEY, "unlock"),  # type: ignore[arg-type]
        ],
    )
    def test_constructor_rejects(self, build: object) -> None:
        with pytest.raises(EncodeError):
            build()  # type: ignore[operator]

    def test_trailing_bytes(self) -> None:
        raw = encode_asset_output(Out(ONE_ALPH, OWN))
        with pytest.raises(DecodeError, match="trailing"):
            decode_asset_output(raw + b"\x00")

    def test_negative_token_count(self) -> None:
        raw = encode_asset_output(Out(ONE_ALPH, OWN)).hex()
        with pytest.raises(DecodeError, match="negative"):
            decode_asset_output(raw[:-4] + "3f00")


class TestInput:
    def test_layout(self) -> None:
        inp = In(-2, KEY, SameAsPrevious())
        assert encode_input(inp).hex() == "fffffffe" + KEY.hex() + "03"
        assert decode_input(encode_input(inp)) == inp
        assert inp.ref == Ref(-2, KEY)

    def test_truncated_key(self) -> None:
        with pytest.raises(DecodeError, match="truncated"):
            decode_input(bytes(20))


class TestUnsignedTx:
    def test_round_trip_with_script(self) -> None:
        script = TxScript((Method(True, True, False, False, 0, 0, 0, (Return,)),))
        tx = _tx(script=script)
        raw = encode_unsigned_tx(tx)
        assert raw[2] == 1
        assert decode_unsigned_tx(raw) == tx

    def test_invalid_option_tag(self) -> None:
        raw = bytearray(encode_unsigned_tx(_tx()))
        raw[2] = 2
        with pytest.raises(DecodeError, match="option"):
            decode_unsigned_tx(bytes(raw))

    def test_negative_input_count(self) -> None:
        raw = encode_unsigned_tx(_tx(inputs=()))
        # version, network, no script, gas (4 B), gasPrice (6 B), then the input count
        assert raw[13] == 0
        with pytest.raises(DecodeError, match="negative"):
            decode_unsigned_tx(raw[:13] + b"\x3f" + raw[14:])

    def test_trailing_bytes(self) -> None:
        with pytest.raises(DecodeError, match="trailing"):
            decode_unsigned_tx(encode_unsigned_tx(_tx()) + b"\x00")

    @pytest.mark.parametrize("text", ["0", "zz", "00 00"])
    def test_bad_hex(self, text: str) -> None:
        with pytest.raises(DecodeError):
            decode_unsigned_tx(text)

    @pytest.mark.parametrize(
        "field",
        [
            {"version": 256},
            {"network_id": -1},
            {"gas_amount": 2**31},
            {"gas_price": -1},
            {"inputs": []},
            {"script": "00"},
        ],
    )
    def test_constructor_rejects(self, field: dict[str, object]) -> None:
        fields: dict[str, object] = {
            "version": 0,
            "network_id": 0,
            "script": None,
            "gas_amount": 1,
            "gas_price": 1,
            "inputs": (),
            "fixed_outputs": (),
        }
        fields.update(field)
        with pytest.raises(EncodeError):
            UnsignedTx(**fields)  # type: ignore[arg-type]


class TestTransaction:
    def _full(self) -> Transaction:
        return Transaction(
            _tx(),
            script_execution_ok=False,
            contract_inputs=(Ref(2, KEY),),
            generated_outputs=(Out(ONE_ALPH, OWN), COut(5, KEY, (TOKEN,))),
            input_signatures=(SIG,),
            script_signatures=(SIG, SIG),
        )

    def test_round_trip(self) -> None:
        full = self._full()
        raw = encode_transaction(full)
        assert decode_transaction(raw) == full
        tail = raw[len(encode_unsigned_tx(full.unsigned)) :]
        assert tail[:1] == b"\x00"  # scriptExecutionOk false
        assert tail[1:38] == b"\x01" + (2).to_bytes(4, "big") + KEY
        assert tail[38:40] == b"\x02\x00"  # two generated outputs, the first an asset output

    def test_signed_transaction(self) -> None:
        full = signed_transaction(_tx(), [SIG])
        assert full == Transaction(_tx(), True, (), (), (SIG,), ())

    @pytest.mark.parametrize("offset", [0, 39])
    def test_bad_tags(self, offset: int) -> None:
        # After the unsigned part: scriptExecutionOk (must be 0/1) at 0; the first generated
        # output's Either tag at 39 (after the 1 + 1 + 36 bytes of the contract inputs, and
        # the output count).
        full = self._full()
        raw = bytearray(encode_transaction(full))
        raw[len(encode_unsigned_tx(full.unsigned)) + offset] = 2
        with pytest.raises(DecodeError):
            decode_transaction(bytes(raw))

    def test_signature_length(self) -> None:
        with pytest.raises(EncodeError):
            signed_transaction(_tx(), [SIG[:-1]])
        raw = encode_transaction(signed_transaction(_tx(), [SIG]))
        with pytest.raises(DecodeError):
            decode_transaction(raw[:-2] + b"\x00")

    def test_script_execution_ok_must_be_bool(self) -> None:
        with pytest.raises(EncodeError):
            Transaction(_tx(), 1)  # type: ignore[arg-type]


class TestIdsAndGroups:
    def test_tx_id_is_blake2b_of_unsigned_bytes(self) -> None:
        tx = _tx()
        expected = hashlib.blake2b(encode_unsigned_tx(tx), digest_size=32).digest()
        assert tx_id(tx) == expected

    def test_output_ref_key(self) -> None:
        txid = bytes(range(32))
        expected = hashlib.blake2b(txid + b"\x00\x00\x01\x00", digest_size=32).digest()
        assert output_ref_key(txid, 256) == expected
        with pytest.raises(EncodeError):
            output_ref_key(txid, -1)
        with pytest.raises(EncodeError):
            output_ref_key(txid[:31], 0)

    def test_groups(self) -> None:
        gl = {g: parse_address(f"{GL}:{g}") for g in range(4)}
        tx = _tx(outputs=(Out(ONE_ALPH, OWN), Out(ONE_ALPH, gl[3]), Out(ONE_ALPH, gl[0])))
        assert from_group(tx) == 1
        assert to_group(tx) == 3
        assert to_group(_tx(outputs=(Out(ONE_ALPH, gl[1]),))) == 1
        assert to_group(_tx(outputs=())) == 1
        assert from_group(tx, groups=2) == 1
        with pytest.raises(EncodeError):
            from_group(_tx(inputs=()))

    def test_api_json_tokens_and_message(self) -> None:
        out = Out(DUST_AMOUNT, OWN, lock_time=5, tokens=(TOKEN,), additional_data=b"\x01\x02")
        api = unsigned_tx_to_api_json(_tx(outputs=(out,)))
        assert "scriptOpt" not in api
        outputs = api["fixedOutputs"]
        assert isinstance(outputs, list) and len(outputs) == 1
        fixed = outputs[0]
        assert fixed["tokens"] == [{"id": TOKEN.id.hex(), "amount": "42"}]
        assert fixed["message"] == "0102"
        assert fixed["lockTime"] == 5

    def test_api_json_group_beyond_groups(self) -> None:
        tx = _tx(outputs=(Out(ONE_ALPH, parse_address(f"{GL}:3")),))
        assert unsigned_tx_to_api_json(tx)["fixedOutputs"]
        with pytest.raises(EncodeError):
            unsigned_tx_to_api_json(tx, groups=2)


class TestOutputRules:
    def test_valid(self) -> None:
        tx = _tx(outputs=(Out(ONE_ALPH, OWN), Out(DUST_AMOUNT, OWN, tokens=(TOKEN,))))
        assert output_rule_violations(tx) == []
        check_output_rules(tx)
        check_output_rules(signed_transaction(tx, [SIG]))

    @pytest.mark.parametrize(
        ("outputs", "needle"),
        [
            ((Out(DUST_AMOUNT - 1, OWN),), "below dust"),
            ((Out(DUST_AMOUNT, OWN, tokens=(TOKEN, TOKEN)),), "at most 1"),
            ((Out(ONE_ALPH, OWN, tokens=(TOKEN,)),), "exactly"),
            ((Out(DUST_AMOUNT, OWN, tokens=(Token(TOKEN.id, 0),)),), "zero token"),
            ((Out(ONE_ALPH, OWN, additional_data=bytes(257)),), "additional data"),
            (tuple(Out(ONE_ALPH, OWN) for _ in range(257)), "257 outputs"),
        ],
    )
    def test_violations(self, outputs: tuple[Out, ...], needle: str) -> None:
        tx = _tx(outputs=outputs)
        with pytest.raises(TxRuleError, match=needle) as info:
            check_output_rules(tx)
        assert isinstance(info.value, AlephiumError)

    def test_boundaries_pass(self) -> None:
        outputs = tuple(Out(DUST_AMOUNT, OWN, additional_data=bytes(256)) for _ in range(256))
        inputs = tuple(In(1, KEY, SameAsPrevious()) for _ in range(256))
        assert output_rule_violations(_tx(inputs=inputs, outputs=outputs)) == []

    def test_input_count(self) -> None:
        inputs = tuple(In(1, KEY, SameAsPrevious()) for _ in range(257))
        with pytest.raises(TxRuleError, match="257 inputs"):
            check_output_rules(_tx(inputs=inputs))
        with pytest.raises(TxRuleError, match="no inputs"):
            check_output_rules(_tx(inputs=()))

    def test_generated_outputs_count(self) -> None:
        many = tuple(COut(1, KEY) for _ in range(250))
        full = Transaction(_tx(outputs=tuple(Out(ONE_ALPH, OWN) for _ in range(7))), True, (), many)
        with pytest.raises(TxRuleError, match="257 outputs"):
            check_output_rules(full)
        crowded = Transaction(_tx(), True, (), (COut(1, KEY, tuple([TOKEN] * 9)),))
        with pytest.raises(TxRuleError, match="contract output"):
            check_output_rules(crowded)

    def test_every_problem_is_listed(self) -> None:
        tx = _tx(outputs=(Out(1, OWN), Out(ONE_ALPH, OWN, tokens=(TOKEN, TOKEN))))
        assert len(output_rule_violations(tx)) == 3


def test_vals_in_p2sh_params_round_trip() -> None:
    unlock = P2SHUnlock(_stateless_script(), (ValAddress(P2PKH(KEY)),))
    assert decode_unlock_script(encode_unlock_script(unlock)) == unlock
