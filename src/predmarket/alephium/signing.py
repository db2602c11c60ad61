"""secp256k1 ECDSA as the chain and the SDK use it (chain-formats.md §2, §3.2).

A signature is ``r || s`` (32 bytes each, big-endian) as 128 lowercase hex characters, over a
32-byte value that is signed as is (no extra hashing), with a deterministic RFC 6979 nonce and
``s`` normalized to the low half. The node rejects high-s signatures, so :func:`verify_hash` does
too: accepting one would let a third party produce a second valid signature for the same message.
"""

from __future__ import annotations

import hashlib
import secrets
from enum import StrEnum
from typing import Final

from coincurve import PrivateKey, PublicKey

from predmarket.alephium.constants import SECP256K1_N
from predmarket.alephium.errors import AlephiumError, InvalidKey, InvalidSignatureFormat
from predmarket.alephium.hashing import blake2b256

#: The exact prefix of the ``alephium`` message hasher: 25 ASCII characters, one trailing space.
ALEPHIUM_MESSAGE_PREFIX: Final = "Alephium Signed Message: "

_HALF_N: Final = SECP256K1_N // 2
_HEX_DIGITS: Final = frozenset("0123456789abcdef")
_ANY_CASE_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
SIGNATURE_HEX_LENGTH: Final = 128


class InvalidMessage(AlephiumError):
    """A message that the requested hasher cannot turn into a 32-byte digest."""


class MessageHasher(StrEnum):
    """How a text message becomes the 32 bytes that get signed (SDK ``messageHasher``)."""

    ALEPHIUM = "alephium"
    BLAKE2B = "blake2b"
    SHA256 = "sha256"
    #: The message is already the hex of a 32-byte digest ("raw hash" mode).
    IDENTITY = "identity"


def _to_hasher(hasher: MessageHasher | str) -> MessageHasher:
    try:
        return MessageHasher(hasher)
    except ValueError:
        raise InvalidMessage(f"unknown message hasher {hasher!r}") from None


def _utf8(text: str) -> bytes:
    """UTF-8 the way the SDK's ``TextEncoder`` produces it from a JavaScript string."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        # Surrogate code points (e.g. from JSON "\\ud800"): JavaScript strings are UTF-16, so a
        # high+low pair is one astral character and a lone surrogate becomes U+FFFD.
        utf16 = text.encode("utf-16-le", "surrogatepass")
        return utf16.decode("utf-16-le", "replace").encode()


def hash_message(message: str, hasher: MessageHasher | str = MessageHasher.ALEPHIUM) -> bytes:
    """The 32-byte value a wallet signs for ``message`` under ``hasher``."""
    if not isinstance(message, str):
        raise InvalidMessage("message must be a string")
    match _to_hasher(hasher):
        case MessageHasher.ALEPHIUM:
            return blake2b256(_utf8(ALEPHIUM_MESSAGE_PREFIX + message))
        case MessageHasher.BLAKE2B:
            return blake2b256(_utf8(message))
        case MessageHasher.SHA256:
            return hashlib.sha256(_utf8(message)).digest()
        case MessageHasher.IDENTITY:
            return _identity_digest(message)


def _identity_digest(message: str) -> bytes:
    # bytes.fromhex tolerates whitespace, so the length is checked on the text itself.
    if len(message) != 64 or not set(message) <= _ANY_CASE_HEX_DIGITS:
        raise InvalidMessage("identity hasher needs the hex of exactly 32 bytes (64 hex chars)")
    return bytes.fromhex(message)


def _private_key(private_key: bytes) -> PrivateKey:
    if not isinstance(private_key, bytes) or len(private_key) != 32:
        raise InvalidKey("private key must be 32 bytes")
    if not 0 < int.from_bytes(private_key, "big") < SECP256K1_N:
        raise InvalidKey("private key is not a valid secp256k1 scalar")
    return PrivateKey(private_key)


def validate_public_key(public_key: bytes) -> bytes:
    """Return ``public_key`` if it is a 33-byte compressed secp256k1 point, else raise."""
    if not isinstance(public_key, bytes) or len(public_key) != 33:
        raise InvalidKey("public key must be 33 bytes (compressed secp256k1)")
    if public_key[0] not in (2, 3):
        raise InvalidKey("public key must start with 02 or 03 (compressed form)")
    try:
        PublicKey(public_key)
    except ValueError:
        raise InvalidKey("public key is not a point on secp256k1") from None
    return public_key


def generate_private_key() -> bytes:
    """A fresh random private key from the OS CSPRNG."""
    while True:
        candidate = secrets.token_bytes(32)
        if 0 < int.from_bytes(candidate, "big") < SECP256K1_N:
            return candidate


def public_key_from_private(private_key: bytes) -> bytes:
    """The 33-byte compressed public key (the same for ``default`` and ``gl-secp256k1``)."""
    return _private_key(private_key).public_key.format(compressed=True)


def _check_digest(digest: bytes) -> None:
    if not isinstance(digest, bytes) or len(digest) != 32:
        raise InvalidMessage("the signed value must be exactly 32 bytes")


def sign_hash(private_key: bytes, digest: bytes) -> str:
    """Sign a 32-byte value as is: RFC 6979 nonce, low-s, ``r || s`` as lowercase hex."""
    _check_digest(digest)
    compact = _private_key(private_key).sign_recoverable(digest, hasher=None)[:64]
    r = int.from_bytes(compact[:32], "big")
    s = int.from_bytes(compact[32:], "big")
    # libsecp256k1 already emits low-s; normalizing again keeps the node's rule explicit.
    if s > _HALF_N:
        s = SECP256K1_N - s
    return (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()


def sign_message(
    private_key: bytes, message: str, hasher: MessageHasher | str = MessageHasher.ALEPHIUM
) -> str:
    """Sign a text message the way the SDK's ``signMessage`` does."""
    return sign_hash(private_key, hash_message(message, hasher))


def sign_tx_id(private_key: bytes, tx_id: bytes) -> str:
    """Sign a transaction: the signature covers the 32-byte txId with no prefix."""
    return sign_hash(private_key, tx_id)


def parse_signature(text: str) -> bytes:
    """Strictly parse ``r || s``: exactly 128 lowercase hex characters."""
    if not isinstance(text, str) or len(text) != SIGNATURE_HEX_LENGTH:
        raise InvalidSignatureFormat("signature must be 128 hex characters (64-byte r || s)")
    if not set(text) <= _HEX_DIGITS:
        raise InvalidSignatureFormat("signature must be lowercase hex")
    return bytes.fromhex(text)


def _der_integer(value: int) -> bytes:
    # Minimal big-endian with a leading zero when the top bit is set (DER INTEGER is signed).
    body = value.to_bytes((value.bit_length() + 8) // 8, "big")
    return bytes([0x02, len(body)]) + body


def _compact_to_der(r: int, s: int) -> bytes:
    body = _der_integer(r) + _der_integer(s)
    return bytes([0x30, len(body)]) + body


def verify_hash(digest: bytes, signature: str, public_key: bytes) -> bool:
    """True iff ``signature`` is a valid low-s signature of ``digest`` by ``public_key``.

    Never raises: malformed input of any kind is simply not a valid signature.
    """
    if not isinstance(digest, bytes) or len(digest) != 32:
        return False
    try:
        raw = parse_signature(signature)
        validate_public_key(public_key)
    except AlephiumError:
        return False
    r = int.from_bytes(raw[:32], "big")
    s = int.from_bytes(raw[32:], "big")
    if not (0 < r < SECP256K1_N and 0 < s <= _HALF_N):
        return False
    try:
        return PublicKey(public_key).verify(_compact_to_der(r, s), digest, hasher=None)
    except ValueError:
        return False


def verify_message(
    message: str, hasher: MessageHasher | str, public_key: bytes, signature: str
) -> bool:
    """The SDK's ``verifySignedMessage``: re-hash ``message`` and verify; never raises."""
    try:
        digest = hash_message(message, hasher)
    except AlephiumError:
        return False
    return verify_hash(digest, signature, public_key)
