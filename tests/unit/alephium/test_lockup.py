"""Binary lockup scripts: layout of every type, groups, output hints, rejection paths."""

from __future__ import annotations

import pytest

from predmarket.alephium.errors import DecodeError, EncodeError
from predmarket.alephium.hashing import djb2, int32_bytes, script_hint, xor_byte
from predmarket.alephium.lockup import (
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
    encode_groupless_body,
    encode_lockup,
    group_of,
    output_hint,
    read_lockup,
)
from predmarket.alephium.serde import Reader, encode_i32

PUBLIC_KEY = bytes.fromhex("0340bb27b45880aefc69d2766f8fcae749992bfd2edb7b745f090534035eac2720")
PK_HASH = bytes.fromhex("0c5c3cf03659000c3d4747e27cb86013ebee2708d890bb30d5a1fbf04b97825c")
H1 = bytes(range(32))
H2 = bytes(range(32, 64))


class TestLayout:
    def test_p2pkh(self) -> None:
        assert encode_lockup(P2PKH(PK_HASH)) == b"\x00" + PK_HASH

    def test_p2mpkh(self) -> None:
        script = P2MPKH((H1, H2), 1)
        assert encode_lockup(script) == b"\x01\x02" + H1 + H2 + b"\x01"

    def test_p2sh(self) -> None:
        assert encode_lockup(P2SH(H1)) == b"\x02" + H1

    def test_p2c(self) -> None:
        assert encode_lockup(P2C(H1)) == b"\x03" + H1

    def test_p2pk(self) -> None:
        key = PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY)
        raw = b"\x00" + PUBLIC_KEY
        expected = b"\x04" + raw + int32_bytes(djb2(raw)) + b"\x02"
        assert encode_lockup(P2PK(key, 2)) == expected
        # chain-vectors.txt lockup.gl:2
        assert expected.hex().endswith("40628f5702")
        assert encode_groupless_body(P2PK(key, 2)) == expected[:-1]

    def test_p2pk_ed25519(self) -> None:
        key = PublicKeyLike(KeyKind.ED25519, H1)
        raw = b"\x02" + H1
        assert encode_lockup(P2PK(key, 1)) == b"\x04" + raw + int32_bytes(djb2(raw)) + b"\x01"

    def test_p2hmpk(self) -> None:
        # The checksum covers the 32-byte hash (SC Groupless.safeSerde over serdeImpl[Hash]).
        script = P2HMPK(H1, 3)
        assert encode_lockup(script) == b"\x05" + H1 + int32_bytes(djb2(H1)) + b"\x03"
        assert script.checksum == djb2(H1)
        assert encode_groupless_body(script) == encode_lockup(script)[:-1]


ALL: list[LockupScript] = [
    P2PKH(PK_HASH),
    P2MPKH((H1,), 1),
    P2MPKH((H1, H2), 2),
    P2SH(H2),
    P2C(H1),
    P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), 0),
    P2PK(PublicKeyLike(KeyKind.SECP256R1, PUBLIC_KEY), 1),
    P2PK(PublicKeyLike(KeyKind.ED25519, H1), 2),
    P2PK(PublicKeyLike(KeyKind.WEBAUTHN, PUBLIC_KEY), 3),
    P2HMPK(H2, 0),
]


@pytest.mark.parametrize("script", ALL, ids=lambda s: type(s).__name__)
def test_round_trip(script: LockupScript) -> None:
    encoded = encode_lockup(script)
    assert decode_lockup(encoded) == script
    # Inside a larger stream the reader stops exactly at the end of the script.
    r = Reader(encoded + b"\xaa")
    assert read_lockup(r) == script
    assert r.take(1) == b"\xaa"


@pytest.mark.parametrize("script", ALL, ids=lambda s: type(s).__name__)
def test_every_truncation_fails(script: LockupScript) -> None:
    encoded = encode_lockup(script)
    for cut in range(len(encoded)):
        with pytest.raises(DecodeError):
            decode_lockup(encoded[:cut])


@pytest.mark.parametrize("script", ALL, ids=lambda s: type(s).__name__)
def test_trailing_bytes_fail(script: LockupScript) -> None:
    with pytest.raises(DecodeError, match="trailing"):
        decode_lockup(encode_lockup(script) + b"\x00")


class TestDecodeRejections:
    @pytest.mark.parametrize("tag", [6, 7, 0x40, 0xFF])
    def test_unknown_tag(self, tag: int) -> None:
        with pytest.raises(DecodeError, match="unknown lockup script tag"):
            decode_lockup(bytes([tag]) + H1)

    def test_empty(self) -> None:
        with pytest.raises(DecodeError):
            decode_lockup(b"")

    @pytest.mark.parametrize("m", [0, -1, 3])
    def test_p2mpkh_bad_threshold(self, m: int) -> None:
        with pytest.raises(DecodeError, match="threshold"):
            decode_lockup(b"\x01" + encode_i32(2) + H1 + H2 + encode_i32(m))

    def test_p2mpkh_too_many_keys(self) -> None:
        with pytest.raises(DecodeError):
            decode_lockup(b"\x01" + encode_i32(17) + H1 * 17 + encode_i32(1))

    def test_p2mpkh_negative_count(self) -> None:
        with pytest.raises(DecodeError, match="negative"):
            decode_lockup(b"\x01" + encode_i32(-1) + encode_i32(1))

    @pytest.mark.parametrize("tag", [4, 5])
    def test_groupless_checksum_mismatch(self, tag: int) -> None:
        script = ALL[5] if tag == 4 else ALL[9]
        encoded = bytearray(encode_lockup(script))
        encoded[-2] ^= 0xFF  # last checksum byte
        with pytest.raises(DecodeError, match="checksum"):
            decode_lockup(bytes(encoded))

    @pytest.mark.parametrize("tag", [4, 5])
    def test_groupless_missing_group_byte(self, tag: int) -> None:
        script = ALL[5] if tag == 4 else ALL[9]
        assert isinstance(script, P2PK | P2HMPK)
        with pytest.raises(DecodeError, match="group byte"):
            decode_lockup(encode_groupless_body(script))

    @pytest.mark.parametrize("group_byte", [4, 5, 0x7F, 0x80, 0xFF])
    def test_groupless_group_byte_out_of_range(self, group_byte: int) -> None:
        encoded = encode_lockup(ALL[5])[:-1] + bytes([group_byte])
        with pytest.raises(DecodeError, match="out of range"):
            decode_lockup(encoded)

    @pytest.mark.parametrize("kind", [4, 0x80, 0xFF])
    def test_unknown_key_kind(self, kind: int) -> None:
        payload = bytes([kind]) + PUBLIC_KEY
        with pytest.raises(DecodeError, match="public key kind"):
            decode_lockup(b"\x04" + payload + int32_bytes(djb2(payload)) + b"\x00")

    def test_ed25519_key_length_is_32(self) -> None:
        # A 33-byte key under the ed25519 kind shifts the checksum by one byte: rejected.
        payload = b"\x02" + PUBLIC_KEY
        with pytest.raises(DecodeError):
            decode_lockup(b"\x04" + payload + int32_bytes(djb2(payload)) + b"\x00")


class TestConstruction:
    @pytest.mark.parametrize("length", [0, 31, 33])
    def test_hash_lengths(self, length: int) -> None:
        for cls in (P2PKH, P2SH, P2C):
            with pytest.raises(EncodeError):
                cls(bytes(length))
        with pytest.raises(EncodeError):
            P2HMPK(bytes(length), 0)

    def test_p2mpkh_bounds(self) -> None:
        with pytest.raises(EncodeError):
            P2MPKH((), 0)
        with pytest.raises(EncodeError):
            P2MPKH((H1,), 2)
        with pytest.raises(EncodeError):
            P2MPKH((H1,), 0)
        with pytest.raises(EncodeError):
            P2MPKH((H1,) * 17, 1)
        with pytest.raises(EncodeError):
            P2MPKH((H1[:31],), 1)

    @pytest.mark.parametrize(
        ("kind", "length"),
        [(KeyKind.SECP256K1, 32), (KeyKind.SECP256R1, 34), (KeyKind.ED25519, 33)],
    )
    def test_public_key_like_lengths(self, kind: KeyKind, length: int) -> None:
        with pytest.raises(EncodeError):
            PublicKeyLike(kind, bytes(length))

    @pytest.mark.parametrize("group", [-1, 4, 255])
    def test_group_range(self, group: int) -> None:
        with pytest.raises(EncodeError):
            P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), group)
        with pytest.raises(EncodeError):
            P2HMPK(H1, group)


class TestGroups:
    def test_p2pkh_group_uses_hash(self) -> None:
        # chain-vectors.txt group.default = 1
        assert group_of(P2PKH(PK_HASH)) == xor_byte(djb2(PK_HASH) | 1) % 4 == 1

    def test_p2sh_same_rule(self) -> None:
        assert group_of(P2SH(H1)) == group_of(P2PKH(H1))

    def test_p2mpkh_uses_first_hash(self) -> None:
        assert group_of(P2MPKH((H1, H2), 1)) == group_of(P2PKH(H1))
        assert group_of(P2MPKH((H2, H1), 1)) == group_of(P2PKH(H2))

    @pytest.mark.parametrize("last", range(8))
    def test_p2c_uses_last_byte(self, last: int) -> None:
        assert group_of(P2C(bytes(31) + bytes([last]))) == last

    @pytest.mark.parametrize("group", range(4))
    def test_groupless_uses_group_byte(self, group: int) -> None:
        assert group_of(P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), group)) == group
        assert group_of(P2HMPK(H1, group)) == group

    def test_default_groups(self) -> None:
        assert P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), 3).default_group == 0x20 % 4
        assert P2HMPK(bytes(31) + b"\x07", 0).default_group == 3


class TestHints:
    def test_asset_hints(self) -> None:
        # chain-vectors.txt tx1.inputHint(int32)
        assert output_hint(P2PKH(PK_HASH)) == -1308003579
        assert output_hint(P2SH(H1)) == script_hint(H1)
        assert output_hint(P2MPKH((H1, H2), 2)) == script_hint(H1)
        assert output_hint(P2PKH(H1)) & 1 == 1

    def test_contract_hint_flips_low_bit(self) -> None:
        assert output_hint(P2C(H1)) == script_hint(H1) ^ 1
        assert output_hint(P2C(H1)) & 1 == 0

    def test_p2pk_vector(self) -> None:
        # chain-vectors.txt tx3.apiJson fixedOutputs[0].hint
        script = P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), 2)
        assert output_hint(script) == -1906222409

    @pytest.mark.parametrize("group", range(4))
    def test_groupless_hint_encodes_group(self, group: int) -> None:
        for script in (
            P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), group),
            P2PK(PublicKeyLike(KeyKind.ED25519, H2), group),
            P2HMPK(H1, group),
        ):
            hint = output_hint(script)
            assert -(2**31) <= hint < 2**31
            assert hint & 1 == 1
            # The group is recoverable from the hint alone, as for grouped outputs.
            assert xor_byte(hint) % 4 == group

    def test_p2pk_hint_seeds_on_raw_key(self) -> None:
        # Only the top byte is adjusted: the low 24 bits come from djb2(raw key) | 1.
        script = P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), 1)
        assert output_hint(script) & 0xFFFFFF == (djb2(PUBLIC_KEY) | 1) & 0xFFFFFF
