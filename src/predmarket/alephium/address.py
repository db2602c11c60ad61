"""Address strings of every lockup type (chain-formats.md §1).

An address is the base58 of its binary lockup script, except for the groupless types (P2PK,
P2HMPK): their string drops the trailing group byte and either shows it as a ``:N`` suffix or
leaves it out, in which case the default group applies. :mod:`predmarket.alephium.lockup` owns the
binary form; this module owns strings and the key → address derivations.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from predmarket.alephium.base58 import b58decode, b58encode
from predmarket.alephium.constants import TOTAL_NUMBER_OF_GROUPS
from predmarket.alephium.errors import AlephiumError, EncodeError, InvalidAddress, InvalidKey
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import (
    P2C,
    P2HMPK,
    P2PK,
    P2PKH,
    KeyKind,
    LockupScript,
    LockupTag,
    PublicKeyLike,
    decode_lockup,
    encode_groupless_body,
    encode_lockup,
    group_of,
)
from predmarket.alephium.signing import validate_public_key

#: Longer than any valid address (a 16-key P2MPKH is 515 bytes, about 704 base58 characters);
#: the cap keeps the quadratic base58 decoder away from hostile megabyte strings.
MAX_ADDRESS_LENGTH: Final = 1024

_GROUPLESS_TAGS: Final = frozenset({LockupTag.P2PK, LockupTag.P2HMPK})
_GROUP_DIGITS: Final = "".join(str(g) for g in range(TOTAL_NUMBER_OF_GROUPS))


class KeyType(StrEnum):
    """The SDK's key types this client supports (TS ``signer/types.ts``)."""

    #: secp256k1 key behind a P2PKH address (grouped).
    DEFAULT = "default"
    #: secp256k1 key behind a groupless P2PK address (Danube).
    GL_SECP256K1 = "gl-secp256k1"


def _to_key_type(key_type: KeyType | str) -> KeyType:
    try:
        return KeyType(key_type)
    except ValueError:
        raise InvalidKey(f"unsupported key type {key_type!r}") from None


def _has_group_suffix(text: str) -> bool:
    # Same test as the SDK's hasExplicitGroupIndex; ':' is not a base58 character.
    return len(text) > 2 and text[-2] == ":"


def _b58decode(text: str) -> bytes:
    try:
        return b58decode(text)
    except AlephiumError:
        raise InvalidAddress("address is not valid base58") from None


def _decode(raw: bytes) -> LockupScript:
    try:
        script = decode_lockup(raw)
    except AlephiumError as e:
        raise InvalidAddress(f"invalid address: {e}") from None
    # Reject encodings that decode but are not the one the chain produces (e.g. a P2MPKH count
    # written in a longer compact form); such strings would alias a canonical address.
    if encode_lockup(script) != raw:
        raise InvalidAddress("invalid address: non-canonical lockup script encoding")
    return script


def parse_address(text: str) -> LockupScript:
    """Decode an address string of any type into its lockup script.

    Groupless addresses take their group from a ``:N`` suffix (N in 0..3) or, without one, the
    default group. Raises :class:`InvalidAddress` for anything else.
    """
    if not isinstance(text, str):
        raise InvalidAddress("address must be a string")
    if not text:
        raise InvalidAddress("address is empty")
    if len(text) > MAX_ADDRESS_LENGTH:
        raise InvalidAddress(f"address longer than {MAX_ADDRESS_LENGTH} characters")
    if _has_group_suffix(text):
        suffix = text[-1]
        if suffix not in _GROUP_DIGITS:
            raise InvalidAddress(
                f"invalid group suffix ':{suffix}', expected 0..{TOTAL_NUMBER_OF_GROUPS - 1}"
            )
        body = _b58decode(text[:-2])
        if body[0] not in _GROUPLESS_TAGS:
            raise InvalidAddress("a ':N' group suffix is only valid on a groupless address")
        return _decode(body + bytes([int(suffix)]))
    # Non-empty base58 always decodes to at least one byte.
    raw = _b58decode(text)
    if raw[0] in _GROUPLESS_TAGS:
        # The string form has no group byte: decode with a placeholder, then apply the
        # default group (SC Groupless.defaultGroup, TS defaultGroupOfGrouplessAddress).
        script = _decode(raw + b"\x00")
        if isinstance(script, P2PK):
            return P2PK(script.public_key, script.default_group)
        if isinstance(script, P2HMPK):
            return P2HMPK(script.key_set_hash, script.default_group)
    return _decode(raw)


def format_address(script: LockupScript, *, explicit_group: bool = True) -> str:
    """The address string of a lockup script.

    Groupless scripts render as base58 of the binary form without its group byte, followed by
    ``:N`` when ``explicit_group`` (the node's JSON form) and bare otherwise (the SDK wallet's
    ``.address``, which means the default group).
    """
    if isinstance(script, P2PK | P2HMPK):
        text = b58encode(encode_groupless_body(script))
        return f"{text}:{script.group}" if explicit_group else text
    return b58encode(encode_lockup(script))


def is_valid_address(text: str) -> bool:
    try:
        parse_address(text)
    except InvalidAddress:
        return False
    return True


def group_of_address(text: str) -> int:
    """The group (0..3) of an address; groupless ones use the suffix or the default group."""
    return group_of(parse_address(text))


def address_to_bytes(text: str) -> bytes:
    """Binary lockup script of an address, group byte included (the SDK's ``addressToBytes``)."""
    return encode_lockup(parse_address(text))


def lockup_from_public_key(
    public_key: bytes, key_type: KeyType | str = KeyType.DEFAULT, group: int | None = None
) -> LockupScript:
    """The lockup script a key controls.

    ``default`` gives P2PKH, whose group follows from the key hash: ``group``, if given, must be
    that group. ``gl-secp256k1`` gives P2PK in ``group`` (default: the key's default group).
    """
    validate_public_key(public_key)
    match _to_key_type(key_type):
        case KeyType.DEFAULT:
            script: LockupScript = P2PKH(blake2b256(public_key))
            if group is not None and group != group_of(script):
                raise EncodeError(
                    f"a default-key address is in group {group_of(script)}, not {group}"
                )
            return script
        case KeyType.GL_SECP256K1:
            key = PublicKeyLike(KeyKind.SECP256K1, public_key)
            return P2PK(key, key.key[-1] % TOTAL_NUMBER_OF_GROUPS if group is None else group)


def address_from_public_key(public_key: bytes, key_type: KeyType | str = KeyType.DEFAULT) -> str:
    """The SDK's ``addressFromPublicKey``: groupless addresses come without a ``:N`` suffix."""
    return format_address(lockup_from_public_key(public_key, key_type), explicit_group=False)


def contract_address(contract_id: bytes) -> str:
    """Address of a contract: base58 of ``03 || contractId``."""
    return format_address(P2C(contract_id))


def contract_id_from_address(text: str) -> bytes:
    script = parse_address(text)
    if not isinstance(script, P2C):
        raise InvalidAddress("not a contract address")
    return script.contract_id


def address_matches_key_type(address: str, key_type: KeyType | str) -> bool:
    """Whether ``address`` has the shape ``key_type`` produces (P2PKH / secp256k1 P2PK)."""
    try:
        script = parse_address(address)
        kind = _to_key_type(key_type)
    except AlephiumError:
        return False
    if kind is KeyType.DEFAULT:
        return isinstance(script, P2PKH)
    return isinstance(script, P2PK) and script.public_key.kind == KeyKind.SECP256K1


def address_belongs_to_key(address: str, public_key: bytes, key_type: KeyType | str) -> bool:
    """Whether ``public_key`` (of ``key_type``) controls ``address``; a P2PK key in any group."""
    try:
        script = parse_address(address)
        derived = lockup_from_public_key(public_key, key_type)
    except AlephiumError:
        return False
    if isinstance(script, P2PK) and isinstance(derived, P2PK):
        return script.public_key == derived.public_key
    return script == derived
