"""Bitcoin-alphabet base58, no checksum (chain-formats.md §0)."""

from __future__ import annotations

from typing import Final

from predmarket.alephium.errors import DecodeError

ALPHABET: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX: Final = {c: i for i, c in enumerate(ALPHABET)}


def b58encode(data: bytes) -> str:
    """Encode bytes; every leading zero byte becomes a leading ``1``."""
    zeros = len(data) - len(data.lstrip(b"\0"))
    n = int.from_bytes(data, "big")
    digits: list[str] = []
    while n:
        n, r = divmod(n, 58)
        digits.append(ALPHABET[r])
    return "1" * zeros + "".join(reversed(digits))


def b58decode(text: str) -> bytes:
    """Decode a base58 string; raises :class:`DecodeError` on a character outside the alphabet."""
    n = 0
    for c in text:
        digit = _INDEX.get(c)
        if digit is None:
            raise DecodeError(f"invalid base58 character {c!r}")
        n = n * 58 + digit
    zeros = len(text) - len(text.lstrip("1"))
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return b"\0" * zeros + body
