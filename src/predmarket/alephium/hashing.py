"""Hash primitives: blake2b-256, djb2, xorByte and script hints (chain-formats.md §0)."""

from __future__ import annotations

import hashlib


def blake2b256(data: bytes) -> bytes:
    """The chain's ``Hash``: BLAKE2b with a 32-byte digest and no key."""
    return hashlib.blake2b(data, digest_size=32).digest()


def to_int32(n: int) -> int:
    """Read the low 32 bits of ``n`` as a signed two's-complement int32."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def djb2(data: bytes) -> int:
    """djb2 over bytes (h = h*33 + b mod 2**32), returned as a signed int32 like the node."""
    h = 5381
    for b in data:
        h = (h * 33 + b) & 0xFFFFFFFF
    return to_int32(h)


def xor_byte(value: int) -> int:
    """XOR of the four big-endian bytes of an int32, as 0..255."""
    v = value & 0xFFFFFFFF
    return ((v >> 24) ^ (v >> 16) ^ (v >> 8) ^ v) & 0xFF


def script_hint(data: bytes) -> int:
    """``djb2(data) | 1``: the hint of a P2PKH/P2MPKH/P2SH lockup script hash."""
    return djb2(data) | 1


def int32_bytes(value: int) -> bytes:
    """Fixed 4-byte big-endian two's complement, used for hints, checksums and output indexes."""
    return (value & 0xFFFFFFFF).to_bytes(4, "big")
