"""Wire primitives: compact integers, fixed-width ints, byte strings and a bounds-checked reader.

Compact integers follow the node's ``CompactInteger`` (chain-formats.md §0.1): the top two bits
of the first byte select a 1-, 2- or 4-byte form, or a multi-byte form whose header carries the
body length minus 4.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, TypeVar

from predmarket.alephium.constants import (
    I32_MAX,
    I32_MIN,
    I256_MAX,
    I256_MIN,
    U32_MAX,
    U256_MAX,
)
from predmarket.alephium.errors import DecodeError, EncodeError

T = TypeVar("T")

_SINGLE: Final = 0x00
_TWO: Final = 0x40
_FOUR: Final = 0x80
_MULTI: Final = 0xC0

#: Upper bound on array counts accepted while decoding, so a forged count cannot make the
#: decoder allocate; real transactions stay far below it (256 inputs/outputs).
MAX_DECODE_COUNT: Final = 1 << 16


def encode_compact_unsigned(n: int, *, maximum: int = U256_MAX) -> bytes:
    """Compact unsigned encoding (U256 and U32)."""
    if n < 0 or n > maximum:
        raise EncodeError(f"unsigned value {n} out of range 0..{maximum}")
    if n < 0x40:
        return bytes([n])
    if n < 0x4000:
        return bytes([_TWO | (n >> 8), n & 0xFF])
    if n < 0x4000_0000:
        return bytes([_FOUR | (n >> 24)]) + (n & 0xFFFFFF).to_bytes(3, "big")
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([_MULTI | (len(body) - 4)]) + body


def encode_compact_signed(n: int, *, minimum: int = I256_MIN, maximum: int = I256_MAX) -> bytes:
    """Compact signed encoding (I32 and I256)."""
    if n < minimum or n > maximum:
        raise EncodeError(f"signed value {n} out of range {minimum}..{maximum}")
    if -0x20 <= n < 0x20:
        return bytes([n & 0x3F])
    if -0x2000 <= n < 0x2000:
        return bytes([_TWO | ((n >> 8) & 0x3F), n & 0xFF])
    if -0x2000_0000 <= n < 0x2000_0000:
        return bytes([_FOUR | ((n >> 24) & 0x3F)]) + (n & 0xFFFFFF).to_bytes(3, "big")
    # Minimal two's complement, as Java's BigInteger.toByteArray; bit_length of n alone gets
    # -2**31 wrong, hence the complement for negatives.
    length = ((n if n >= 0 else ~n).bit_length() + 8) // 8
    body = n.to_bytes(length, "big", signed=True)
    return bytes([_MULTI | (length - 4)]) + body


def encode_u256(n: int) -> bytes:
    return encode_compact_unsigned(n, maximum=U256_MAX)


def encode_u32(n: int) -> bytes:
    return encode_compact_unsigned(n, maximum=U32_MAX)


def encode_i256(n: int) -> bytes:
    return encode_compact_signed(n, minimum=I256_MIN, maximum=I256_MAX)


def encode_i32(n: int) -> bytes:
    return encode_compact_signed(n, minimum=I32_MIN, maximum=I32_MAX)


def encode_int32_fixed(n: int) -> bytes:
    """4-byte big-endian two's complement (hints, checksums)."""
    if n < I32_MIN or n > I32_MAX:
        raise EncodeError(f"int32 value {n} out of range")
    return n.to_bytes(4, "big", signed=True)


def encode_u64_fixed(n: int) -> bytes:
    """8-byte big-endian unsigned (timestamps such as ``lockTime``)."""
    if n < 0 or n >= 1 << 64:
        raise EncodeError(f"timestamp {n} out of range")
    return n.to_bytes(8, "big")


def encode_bytestring(data: bytes) -> bytes:
    """ByteString: compact signed length, then the bytes."""
    return encode_i32(len(data)) + data


def encode_array(items: Iterable[T], encode: Callable[[T], bytes]) -> bytes:
    """AVector: compact signed count, then the elements."""
    parts = [encode(item) for item in items]
    return encode_i32(len(parts)) + b"".join(parts)


def encode_bool(value: bool) -> bytes:
    return b"\x01" if value else b"\x00"


class Reader:
    """A cursor over bytes; every read is bounds-checked and fails with :class:`DecodeError`."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str = "bytes") -> bytes:
        if n < 0:
            raise DecodeError(f"negative length {n} for {what}")
        end = self.pos + n
        if end > len(self.data):
            raise DecodeError(
                f"truncated input: {what} needs {n} bytes at offset {self.pos}, "
                f"{self.remaining} left"
            )
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def byte(self, what: str = "byte") -> int:
        return self.take(1, what)[0]

    def bool(self, what: str = "bool") -> bool:
        b = self.byte(what)
        if b > 1:
            raise DecodeError(f"invalid {what} byte {b:#04x}, expected 00 or 01")
        return b == 1

    def _compact_body(self, what: str) -> tuple[int, bytes]:
        b0 = self.byte(what)
        mode = b0 & 0xC0
        if mode == _SINGLE:
            return mode, bytes([b0])
        if mode == _TWO:
            return mode, bytes([b0]) + self.take(1, what)
        if mode == _FOUR:
            return mode, bytes([b0]) + self.take(3, what)
        return mode, self.take((b0 & 0x3F) + 4, what)

    @staticmethod
    def _check_multi_len(mode: int, body: bytes, what: str, multi_len: int | None) -> None:
        # The node decodes I32/U32 with a multi-byte body of exactly 4 bytes and rejects any
        # other length (SC CompactInteger.decodeInt/decodeU32), even when the value would fit.
        if multi_len is not None and mode == _MULTI and len(body) != multi_len:
            raise DecodeError(
                f"{what}: expected a {multi_len}-byte int body, got {len(body)} bytes"
            )

    def compact_unsigned(
        self,
        what: str = "compact unsigned int",
        maximum: int = U256_MAX,
        *,
        multi_len: int | None = None,
    ) -> int:
        mode, body = self._compact_body(what)
        self._check_multi_len(mode, body, what, multi_len)
        if mode == _MULTI:
            value = int.from_bytes(body, "big")
        else:
            value = int.from_bytes(body, "big") & ~(0xC0 << (8 * (len(body) - 1)))
        if value > maximum:
            raise DecodeError(f"{what} {value} exceeds {maximum}")
        return value

    def compact_signed(
        self,
        what: str = "compact signed int",
        minimum: int = I256_MIN,
        maximum: int = I256_MAX,
        *,
        multi_len: int | None = None,
    ) -> int:
        mode, body = self._compact_body(what)
        self._check_multi_len(mode, body, what, multi_len)
        if mode == _MULTI:
            value = int.from_bytes(body, "big", signed=True)
        else:
            bits = 8 * len(body) - 2
            raw = int.from_bytes(body, "big") & ((1 << bits) - 1)
            value = raw - (1 << bits) if raw & (1 << (bits - 1)) else raw
        if value < minimum or value > maximum:
            raise DecodeError(f"{what} {value} out of range {minimum}..{maximum}")
        return value

    def u256(self, what: str = "U256") -> int:
        return self.compact_unsigned(what, U256_MAX)

    def u32(self, what: str = "U32") -> int:
        return self.compact_unsigned(what, U32_MAX, multi_len=4)

    def i256(self, what: str = "I256") -> int:
        return self.compact_signed(what, I256_MIN, I256_MAX)

    def i32(self, what: str = "I32") -> int:
        return self.compact_signed(what, I32_MIN, I32_MAX, multi_len=4)

    def int32_fixed(self, what: str = "int32") -> int:
        return int.from_bytes(self.take(4, what), "big", signed=True)

    def u64_fixed(self, what: str = "timestamp") -> int:
        return int.from_bytes(self.take(8, what), "big")

    def bytestring(self, what: str = "byte string") -> bytes:
        n = self.i32(f"{what} length")
        if n < 0:
            raise DecodeError(f"negative {what} length {n}")
        return self.take(n, what)

    def count(self, what: str = "array") -> int:
        n = self.i32(f"{what} count")
        if n < 0:
            raise DecodeError(f"negative {what} count {n}")
        if n > MAX_DECODE_COUNT:
            raise DecodeError(f"{what} count {n} exceeds {MAX_DECODE_COUNT}")
        return n

    def array(self, decode: Callable[[Reader], T], what: str = "array") -> tuple[T, ...]:
        return tuple(decode(self) for _ in range(self.count(what)))

    def finish(self, what: str = "input") -> None:
        if self.remaining:
            raise DecodeError(f"{self.remaining} trailing bytes after {what}")


def decode_all(data: bytes, decode: Callable[[Reader], T], what: str) -> T:
    """Decode exactly one value from ``data``; trailing bytes are an error."""
    reader = Reader(data)
    value = decode(reader)
    reader.finish(what)
    return value


def parse_hex(text: str, what: str = "hex", *, length: int | None = None) -> bytes:
    """Strict lowercase/uppercase hex of an even length; raises :class:`DecodeError`."""
    if len(text) % 2:
        raise DecodeError(f"{what}: odd-length hex")
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise DecodeError(f"{what}: not hex") from None
    if len(data) * 2 != len(text):  # bytes.fromhex skips whitespace
        raise DecodeError(f"{what}: not hex")
    if length is not None and len(data) != length:
        raise DecodeError(f"{what}: expected {length} bytes, got {len(data)}")
    return data
