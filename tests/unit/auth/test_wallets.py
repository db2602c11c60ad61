"""Wallet identity: canonical addresses, key types, key control, and the challenge text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from predmarket.alephium.address import address_from_public_key
from predmarket.alephium.signing import generate_private_key, public_key_from_private
from predmarket.auth import wallets
from predmarket.auth.challenges import challenge_text

KEY = public_key_from_private(generate_private_key())
DEFAULT = address_from_public_key(KEY, "default")
GROUPLESS = address_from_public_key(KEY, "gl-secp256k1")


def test_key_types() -> None:
    assert wallets.key_type_of(DEFAULT) == "default"
    assert wallets.key_type_of(GROUPLESS) == "gl-secp256k1"
    assert wallets.key_type_of(f"{GROUPLESS}:3") == "gl-secp256k1"
    assert wallets.key_type_of("vqD1HoSAqk6VD9s2k7JpVqv6zX5iVCDpAngTDpYVLaeb") is None  # contract
    assert wallets.key_type_of("nonsense") is None


def test_groupless_with_any_group_is_one_wallet() -> None:
    for group in range(4):
        assert wallets.canonical_wallet(f"{GROUPLESS}:{group}") == GROUPLESS
        assert wallets.same_wallet(f"{GROUPLESS}:{group}", GROUPLESS)
    assert not wallets.same_wallet(DEFAULT, GROUPLESS)
    assert not wallets.same_wallet("nonsense", "nonsense")


def test_key_controls() -> None:
    assert wallets.key_controls(DEFAULT, KEY, "default")
    assert wallets.key_controls(f"{GROUPLESS}:2", KEY, "gl-secp256k1")
    assert not wallets.key_controls(DEFAULT, KEY, "gl-secp256k1")
    other = public_key_from_private(generate_private_key())
    assert not wallets.key_controls(DEFAULT, other, "default")


def test_challenge_text() -> None:
    now = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
    text = challenge_text(DEFAULT, "ab" * 16, now, now + timedelta(minutes=5))
    lines = text.split("\n")
    assert lines[0].startswith("predmarket ")
    assert f"Wallet: {DEFAULT}" in lines and f"Nonce: {'ab' * 16}" in lines
    assert "Issued at: 2026-11-22T10:00:00.000Z" in lines
    assert lines[-1] == "Expires at: 2026-11-22T10:05:00.000Z"
    anyone = challenge_text(None, "cd" * 16, now, now)
    assert "Wallet: any" in anyone and DEFAULT not in anyone
