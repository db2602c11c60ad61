"""Which wallet an address names, and whether a key controls it.

A wallet is identified by its *canonical address*: the address itself for a default (P2PKH)
wallet; for a groupless ``gl-secp256k1`` wallet (``3…``) the address without a ``:N`` suffix,
because the same key controls the wallet in every group (``3…`` and ``3…:N`` are one wallet).
Sessions, keys and rate limits use the canonical address; comparisons go through the lockup
script, never the raw text.
"""

from __future__ import annotations

from typing import Final, Literal

from predmarket.alephium.address import format_address, lockup_from_public_key, parse_address
from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.lockup import P2PK, P2PKH, KeyKind, LockupScript

KeyTypeName = Literal["default", "gl-secp256k1"]
KEY_TYPES: Final[tuple[KeyTypeName, ...]] = ("default", "gl-secp256k1")


def wallet_script(address: str) -> LockupScript | None:
    """The lockup script of a wallet address a signer can hold (P2PKH or secp256k1 P2PK)."""
    try:
        script = parse_address(address)
    except AlephiumError:
        return None
    if isinstance(script, P2PKH):
        return script
    if isinstance(script, P2PK) and script.public_key.kind == KeyKind.SECP256K1:
        return script
    return None


def key_type_of(address: str) -> KeyTypeName | None:
    """``default`` for a P2PKH address, ``gl-secp256k1`` for a secp256k1 groupless one."""
    script = wallet_script(address)
    if isinstance(script, P2PKH):
        return "default"
    if isinstance(script, P2PK):
        return "gl-secp256k1"
    return None


def canonical_wallet(address: str) -> str | None:
    """The canonical address of the wallet ``address`` names, or None if it is not a wallet."""
    script = wallet_script(address)
    if script is None:
        return None
    return format_address(script, explicit_group=False)


def same_wallet(a: str, b: str) -> bool:
    """Whether two addresses name the same wallet (``3…`` with and without ``:N`` do)."""
    ca = canonical_wallet(a)
    return ca is not None and ca == canonical_wallet(b)


def key_controls(address: str, public_key: bytes, key_type: KeyTypeName) -> bool:
    """Whether ``public_key`` of ``key_type`` derives the wallet ``address`` names."""
    wallet = canonical_wallet(address)
    if wallet is None:
        return False
    try:
        derived = lockup_from_public_key(public_key, key_type)
    except AlephiumError:
        return False
    return format_address(derived, explicit_group=False) == wallet
