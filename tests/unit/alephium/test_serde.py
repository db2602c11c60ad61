"""Wire primitives: compact integers at each mode boundary, fixed ints, the checked reader."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from predmarket.alephium.constants import I32_MAX, I32_MIN, I256_MAX, I256_MIN, U32_MAX, U256_MAX
from predmarket.alephium.errors import DecodeError, EncodeError
from predmarket.alephium.serde import (
    MAX_DECODE_COUNT,
    Reader,
    decode_all,
    encode_array,
    encode_bool,
    encode_bytestring,
    encode_compact_signed,
    encode_compact_unsigned,
    encode_i32,
    encode_i256,
    encode_int32_fixed,
    encode_u32,
    encode_u64_fixed,
    encode_u256,
    parse_hex,
)


@pytest.mark.parametrize(
    ("value", "length"),
    [
        (0, 1),
        (0x3F, 1),
        (0x40, 2),
        (0x3FFF, 2),
        (0x4000, 4),
        (0x3FFF_FFFF, 4),
        (0x4000_0000, 5),
        (0xFFFF_FFFF, 5),
        (0x1_0000_0000, 6),
        (U256_MAX, 33),
    ],
)
def test_unsigned_mode_boundaries(value: int, length: int) -> None:
    encoded = encode_u256(value)
    assert len(encoded) == length
    assert decode_all(encoded, Reader.u256, "u256") == value


@pytest.mark.parametrize(
    ("value", "length"),
    [
        (0, 1),
        (0x1F, 1),
        (-0x20, 1),
        (0x20, 2),
        (-0x21, 2),
        (0x1FFF, 2),
        (-0x2000, 2),
        (0x2000, 4),
        (-0x2001, 4),
        (0x1FFF_FFFF, 4),
        (-0x2000_0000, 4),
        (0x2000_0000, 5),
        (-0x2000_0001, 5),
        (I32_MAX, 5),
        (I32_MIN, 5),
        (2**31, 6),  # needs a sign byte in two's complement
        (-(2**31) - 1, 6),
        (I256_MAX, 33),
        (I256_MIN, 33),
    ],
)
def test_signed_mode_boundaries(value: int, length: int) -> None:
    encoded = encode_i256(value)
    assert len(encoded) == length
    assert decode_all(encoded, Reader.i256, "i256") == value


def test_signed_minus_two_pow_31_uses_four_body_bytes() -> None:
    # The pitfall in chain-formats.md §0.1: bit_length of -2**31 would pick the wrong size.
    assert encode_i32(-(2**31)).hex() == "c080000000"


@pytest.mark.parametrize(
    ("encode", "value"),
    [
        (encode_u256, -1),
        (encode_u256, U256_MAX + 1),
        (encode_u32, U32_MAX + 1),
        (encode_i32, I32_MAX + 1),
        (encode_i32, I32_MIN - 1),
        (encode_i256, I256_MAX + 1),
        (encode_i256, I256_MIN - 1),
        (encode_int32_fixed, 2**31),
        (encode_int32_fixed, -(2**31) - 1),
        (encode_u64_fixed, -1),
        (encode_u64_fixed, 2**64),
    ],
)
def test_encode_out_of_range(encode: Callable[[int], bytes], value: int) -> None:
    with pytest.raises(EncodeError):
        encode(value)


def test_custom_ranges() -> None:
    assert encode_compact_unsigned(5, maximum=5) == b"\x05"
    with pytest.raises(EncodeError):
        encode_compact_unsigned(6, maximum=5)
    with pytest.raises(EncodeError):
        encode_compact_signed(-6, minimum=-5, maximum=5)


class TestReaderRanges:
    def test_u32_rejects_larger(self) -> None:
        with pytest.raises(DecodeError):
            Reader(encode_u256(U32_MAX + 1)).u32()

    def test_i32_rejects_larger(self) -> None:
        with pytest.raises(DecodeError):
            Reader(encode_i256(I32_MAX + 1)).i32()
        with pytest.raises(DecodeError):
            Reader(encode_i256(I32_MIN - 1)).i32()

    @pytest.mark.parametrize(
        "data", ["c10000000005", "c1ffffffffff", "c2000000000000", "c4" + "00" * 8]
    )
    def test_i32_and_u32_need_a_4_byte_multi_body(self, data: str) -> None:
        # The node's decodeInt/decodeU32 reject these even though the value fits in 32 bits.
        for read in (Reader.i32, Reader.u32):
            with pytest.raises(DecodeError, match="4-byte int body"):
                read(Reader(bytes.fromhex(data)))

    def test_wide_bodies_still_fine_for_256_bit_values(self) -> None:
        assert Reader(bytes.fromhex("c10000000005")).u256() == 5
        assert Reader(bytes.fromhex("c1ffffffffff")).i256() == -1

    def test_u256_rejects_33_byte_body(self) -> None:
        # Header 0xdd = multi-byte with a 33-byte body, all 0xff: above U256_MAX.
        with pytest.raises(DecodeError):
            Reader(b"\xdd" + b"\xff" * 33).u256()

    def test_i256_rejects_oversized(self) -> None:
        with pytest.raises(DecodeError):
            Reader(b"\xdd\x01" + bytes(32)).i256()


class TestReaderTruncation:
    @pytest.mark.parametrize("data", ["", "40", "80", "8000", "800000", "c0", "c0000000", "dc00"])
    def test_truncated_compact(self, data: str) -> None:
        with pytest.raises(DecodeError, match="truncated"):
            Reader(bytes.fromhex(data)).u256()
        with pytest.raises(DecodeError, match="truncated"):
            Reader(bytes.fromhex(data)).i256()

    def test_take(self) -> None:
        r = Reader(b"abc")
        assert r.take(2) == b"ab"
        assert r.remaining == 1
        with pytest.raises(DecodeError, match="truncated"):
            r.take(2)
        with pytest.raises(DecodeError, match="negative"):
            r.take(-1)

    def test_fixed(self) -> None:
        r = Reader(bytes.fromhex("ffffffff") + (2**40).to_bytes(8, "big"))
        assert r.int32_fixed() == -1
        assert r.u64_fixed() == 2**40
        r.finish()
        with pytest.raises(DecodeError):
            Reader(b"\x00\x00\x00").int32_fixed()
        with pytest.raises(DecodeError):
            Reader(bytes(7)).u64_fixed()


class TestReaderStructures:
    def test_bool(self) -> None:
        assert Reader(b"\x00").bool() is False
        assert Reader(b"\x01").bool() is True
        with pytest.raises(DecodeError, match="invalid"):
            Reader(b"\x02").bool()
        assert encode_bool(True) == b"\x01"
        assert encode_bool(False) == b"\x00"

    def test_bytestring(self) -> None:
        data = bytes(range(100))
        assert decode_all(encode_bytestring(data), Reader.bytestring, "bytes") == data
        assert encode_bytestring(b"") == b"\x00"

    def test_bytestring_negative_length(self) -> None:
        with pytest.raises(DecodeError, match="negative"):
            Reader(b"\x3f").bytestring()  # -1

    def test_bytestring_length_beyond_data(self) -> None:
        with pytest.raises(DecodeError, match="truncated"):
            Reader(encode_i32(10) + b"abc").bytestring()

    def test_array(self) -> None:
        encoded = encode_array([b"ab", b"cd"], lambda x: x)
        assert encoded == b"\x02abcd"
        r = Reader(encoded)
        assert r.array(lambda rr: rr.take(2)) == (b"ab", b"cd")
        r.finish()

    def test_array_count_limits(self) -> None:
        with pytest.raises(DecodeError, match="negative"):
            Reader(encode_i32(-1)).count()
        with pytest.raises(DecodeError, match="exceeds"):
            Reader(encode_i32(MAX_DECODE_COUNT + 1)).count()
        assert Reader(encode_i32(MAX_DECODE_COUNT)).count() == MAX_DECODE_COUNT

    def test_huge_count_fails_fast(self) -> None:
        # A forged count must fail on the missing elements, not allocate them.
        with pytest.raises(DecodeError):
            Reader(encode_i32(MAX_DECODE_COUNT)).array(lambda rr: rr.take(32))

    def test_finish_and_decode_all(self) -> None:
        with pytest.raises(DecodeError, match="1 trailing"):
            decode_all(b"\x01\x02", Reader.u256, "u256")
        assert decode_all(b"\x01", Reader.u256, "u256") == 1


class TestParseHex:
    def test_valid(self) -> None:
        assert parse_hex("00ff") == b"\x00\xff"
        assert parse_hex("00FF") == b"\x00\xff"
        assert parse_hex("") == b""
        assert parse_hex("aa" * 32, length=32) == b"\xaa" * 32

    @pytest.mark.parametrize("text", ["0", "zz", "00 ff", " 00f", "0x00", "00\n"])
    def test_invalid(self, text: str) -> None:
        with pytest.raises(DecodeError):
            parse_hex(text)

    def test_length(self) -> None:
        with pytest.raises(DecodeError, match="expected 32 bytes"):
            parse_hex("aa" * 31, length=32)
