"""Lockup scripts: the binary form behind every address (chain-formats.md §1, §3.1).

An address string is the base58 of a serialized lockup script; the groupless types (P2PK,
P2HMPK) carry a trailing group byte in binary form that the string form drops or shows as
``:N``. This module only knows the binary form; :mod:`predmarket.alephium.address` owns strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from predmarket.alephium.constants import MAX_MULTISIG_KEYS, TOTAL_NUMBER_OF_GROUPS
from predmarket.alephium.errors import DecodeError, EncodeError
from predmarket.alephium.hashing import djb2, script_hint, to_int32, xor_byte
from predmarket.alephium.serde import Reader, decode_all, encode_array, encode_i32


class LockupTag(IntEnum):
    P2PKH = 0
    P2MPKH = 1
    P2SH = 2
    P2C = 3
    P2PK = 4
    P2HMPK = 5


class KeyKind(IntEnum):
    """Kind byte of a ``PublicKeyLike``."""

    SECP256K1 = 0
    SECP256R1 = 1
    ED25519 = 2
    WEBAUTHN = 3


KEY_LENGTHS: Final = {
    KeyKind.SECP256K1: 33,
    KeyKind.SECP256R1: 33,
    KeyKind.ED25519: 32,
    KeyKind.WEBAUTHN: 33,
}


def _check_len(value: bytes, n: int, what: str) -> None:
    if len(value) != n:
        raise EncodeError(f"{what} must be {n} bytes, got {len(value)}")


def _check_group(group: int) -> None:
    if not 0 <= group < TOTAL_NUMBER_OF_GROUPS:
        raise EncodeError(f"group {group} out of range 0..{TOTAL_NUMBER_OF_GROUPS - 1}")


@dataclass(frozen=True, slots=True)
class PublicKeyLike:
    kind: KeyKind
    key: bytes

    def __post_init__(self) -> None:
        _check_len(self.key, KEY_LENGTHS[self.kind], f"{self.kind.name} public key")

    def to_bytes(self) -> bytes:
        return bytes([self.kind]) + self.key


@dataclass(frozen=True, slots=True)
class P2PKH:
    pubkey_hash: bytes

    def __post_init__(self) -> None:
        _check_len(self.pubkey_hash, 32, "public key hash")


@dataclass(frozen=True, slots=True)
class P2MPKH:
    pubkey_hashes: tuple[bytes, ...]
    m: int

    def __post_init__(self) -> None:
        if not 0 < len(self.pubkey_hashes) <= MAX_MULTISIG_KEYS:
            raise EncodeError(f"P2MPKH needs 1..{MAX_MULTISIG_KEYS} keys")
        for h in self.pubkey_hashes:
            _check_len(h, 32, "public key hash")
        if not 0 < self.m <= len(self.pubkey_hashes):
            n = len(self.pubkey_hashes)
            raise EncodeError(f"P2MPKH threshold m={self.m} must be in 1..{n}")


@dataclass(frozen=True, slots=True)
class P2SH:
    script_hash: bytes

    def __post_init__(self) -> None:
        _check_len(self.script_hash, 32, "script hash")


@dataclass(frozen=True, slots=True)
class P2C:
    contract_id: bytes

    def __post_init__(self) -> None:
        _check_len(self.contract_id, 32, "contract id")


@dataclass(frozen=True, slots=True)
class P2PK:
    """Groupless single key (Danube); ``group`` is the explicit or default group byte."""

    public_key: PublicKeyLike
    group: int

    def __post_init__(self) -> None:
        _check_group(self.group)

    @property
    def checksum(self) -> int:
        return djb2(self.public_key.to_bytes())

    @property
    def default_group(self) -> int:
        return self.public_key.key[-1] % TOTAL_NUMBER_OF_GROUPS


@dataclass(frozen=True, slots=True)
class P2HMPK:
    """Groupless multisig, identified by the hash of its key set."""

    key_set_hash: bytes
    group: int

    def __post_init__(self) -> None:
        _check_len(self.key_set_hash, 32, "P2HMPK hash")
        _check_group(self.group)

    @property
    def checksum(self) -> int:
        return djb2(self.key_set_hash)

    @property
    def default_group(self) -> int:
        return self.key_set_hash[-1] % TOTAL_NUMBER_OF_GROUPS


LockupScript = P2PKH | P2MPKH | P2SH | P2C | P2PK | P2HMPK
GrouplessLockup = P2PK | P2HMPK


def encode_lockup(script: LockupScript) -> bytes:
    """Binary form: tag byte then payload; groupless types end with their group byte."""
    match script:
        case P2PKH(h):
            return bytes([LockupTag.P2PKH]) + h
        case P2MPKH(hashes, m):
            return bytes([LockupTag.P2MPKH]) + encode_array(hashes, lambda h: h) + encode_i32(m)
        case P2SH(h):
            return bytes([LockupTag.P2SH]) + h
        case P2C(cid):
            return bytes([LockupTag.P2C]) + cid
        case P2PK():
            return encode_groupless_body(script) + bytes([script.group])
        case P2HMPK():
            return encode_groupless_body(script) + bytes([script.group])
    raise EncodeError(f"not a lockup script: {script!r}")  # pragma: no cover


def encode_groupless_body(script: GrouplessLockup) -> bytes:
    """Tag, payload and checksum of a groupless script: the string form without the group."""
    if isinstance(script, P2PK):
        payload = script.public_key.to_bytes()
        tag = LockupTag.P2PK
    else:
        payload = script.key_set_hash
        tag = LockupTag.P2HMPK
    return bytes([tag]) + payload + (djb2(payload) & 0xFFFFFFFF).to_bytes(4, "big")


def read_public_key_like(r: Reader) -> PublicKeyLike:
    kind_byte = r.byte("public key kind")
    try:
        kind = KeyKind(kind_byte)
    except ValueError:
        raise DecodeError(f"unknown public key kind {kind_byte:#04x}") from None
    return PublicKeyLike(kind, r.take(KEY_LENGTHS[kind], f"{kind.name} public key"))


def read_groupless_body(r: Reader, tag: int) -> P2PK | P2HMPK:
    """Read payload + checksum of a groupless script (tag already consumed); group taken after."""
    if tag == LockupTag.P2PK:
        pk = read_public_key_like(r)
        payload = pk.to_bytes()
    else:
        payload = r.take(32, "P2HMPK hash")
    checksum = r.int32_fixed("checksum")
    if checksum != djb2(payload):
        raise DecodeError("groupless lockup script checksum mismatch")
    group_byte = r.byte("group byte") if r.remaining else None
    if group_byte is None:
        raise DecodeError("truncated input: groupless lockup script lacks its group byte")
    if group_byte >= TOTAL_NUMBER_OF_GROUPS:
        raise DecodeError(f"group byte {group_byte} out of range 0..{TOTAL_NUMBER_OF_GROUPS - 1}")
    if tag == LockupTag.P2PK:
        return P2PK(pk, group_byte)
    return P2HMPK(payload, group_byte)


def read_lockup(r: Reader) -> LockupScript:
    tag = r.byte("lockup script tag")
    if tag == LockupTag.P2PKH:
        return P2PKH(r.take(32, "public key hash"))
    if tag == LockupTag.P2MPKH:
        hashes = r.array(lambda rr: rr.take(32, "public key hash"), "P2MPKH keys")
        m = r.i32("P2MPKH threshold")
        try:
            return P2MPKH(hashes, m)
        except EncodeError as e:
            raise DecodeError(str(e)) from None
    if tag == LockupTag.P2SH:
        return P2SH(r.take(32, "script hash"))
    if tag == LockupTag.P2C:
        return P2C(r.take(32, "contract id"))
    if tag in (LockupTag.P2PK, LockupTag.P2HMPK):
        return read_groupless_body(r, tag)
    raise DecodeError(f"unknown lockup script tag {tag:#04x}")


def decode_lockup(data: bytes) -> LockupScript:
    return decode_all(data, read_lockup, "lockup script")


def group_of(script: LockupScript, groups: int = TOTAL_NUMBER_OF_GROUPS) -> int:
    """The shard group of a lockup script (chain-formats.md §1.1-1.3)."""
    match script:
        case P2PKH(h) | P2SH(h):
            return xor_byte(script_hint(h)) % groups
        case P2MPKH(hashes, _):
            return xor_byte(script_hint(hashes[0])) % groups
        case P2C(cid):
            # The node's ContractId.groupIndex reads the last byte as is (no modulo); real ids
            # always end in their group byte, so it is < groups for every contract on chain.
            return cid[-1]
        case P2PK() | P2HMPK():
            return script.group % groups
    raise EncodeError(f"not a lockup script: {script!r}")  # pragma: no cover


def _groupless_hint(seed: bytes, group: int) -> int:
    h0 = djb2(seed) | 1
    x = xor_byte(h0)
    byte0 = (((h0 & 0xFFFFFFFF) >> 24) ^ x ^ group) & 0xFF
    return to_int32(((byte0 << 24) | (h0 & 0xFFFFFF)) | 1)


def output_hint(script: LockupScript) -> int:
    """The ``hint`` of an output locked by this script (its UTXO reference hint)."""
    match script:
        case P2PKH(h) | P2SH(h):
            return script_hint(h)
        case P2MPKH(hashes, _):
            return script_hint(hashes[0])
        case P2C(cid):
            # Contract outputs flip the low bit so asset and contract hints never collide.
            return script_hint(cid) ^ 1
        case P2PK(pk, group):
            return _groupless_hint(pk.key, group)
        case P2HMPK(h, group):
            return _groupless_hint(h, group)
    raise EncodeError(f"not a lockup script: {script!r}")  # pragma: no cover
