"""Bitcoin-alphabet base58 without checksum."""

from __future__ import annotations

import pytest

from predmarket.alephium.base58 import ALPHABET, b58decode, b58encode
from predmarket.alephium.errors import AlephiumError, DecodeError


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"", ""),
        (b"\x00", "1"),
        (b"\x00\x00\x00", "111"),
        (b"\x01", "2"),
        (b"\x39", "z"),
        (b"\x3a", "21"),
        (b"\x00\x3a", "121"),
        (b"\xff", "5Q"),
        (b"hello world", "StV1DL6CwTryKyV"),
        (bytes.fromhex("00000000000000000000"), "1111111111"),
        (bytes.fromhex("0000287fb4cd"), "11233QC4"),
    ],
)
def test_known_answers(data: bytes, text: str) -> None:
    assert b58encode(data) == text
    assert b58decode(text) == data


def test_alphabet_excludes_ambiguous_characters() -> None:
    assert len(ALPHABET) == 58
    assert len(set(ALPHABET)) == 58
    for c in "0OIl":
        assert c not in ALPHABET


@pytest.mark.parametrize("text", ["0", "O", "I", "l", "1O", "abc!", " 2", "2 ", "+", "é", "\x00"])
def test_invalid_characters(text: str) -> None:
    with pytest.raises(DecodeError, match="invalid base58 character"):
        b58decode(text)


def test_decode_error_is_alephium_error() -> None:
    with pytest.raises(AlephiumError):
        b58decode("0")


def test_leading_zero_bytes_are_preserved() -> None:
    for zeros in range(5):
        data = bytes(zeros) + b"\x01\x02"
        text = b58encode(data)
        assert text.startswith("1" * zeros)
        assert not text[zeros:].startswith("1")
        assert b58decode(text) == data


def test_every_digit_round_trips() -> None:
    for i, c in enumerate(ALPHABET):
        assert b58decode(c) == (bytes([i]) if i else b"\x00")
