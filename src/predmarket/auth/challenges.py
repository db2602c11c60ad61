"""Sign-in challenges: issue one, and consume it with a wallet's signature (spec 3.1, 5.2).

A challenge is a human-readable text naming the service, the purpose, the wallet (or saying any
wallet may sign), a random nonce and its validity. It is single-use and expires after
``settings.auth.challenge_ttl_seconds`` (five minutes). The wallet signs the exact text, newlines
included and untrimmed, with the chain's ``alephium`` message hasher; the signature is a 64-byte
``r || s`` as 128 lowercase hex characters.

:func:`consume_signed_challenge` is the one place a challenge signature is checked: the session
exchange and legacy key minting both call it. Consumption is atomic
(``UPDATE … WHERE used_at IS NULL``): of two requests presenting the same challenge, exactly one
wins; the other gets ``CHALLENGE_EXPIRED``.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.signing import (
    MessageHasher,
    parse_signature,
    validate_public_key,
    verify_message,
)
from predmarket.auth import wallets
from predmarket.auth.errors import ChallengeExpired, InvalidSignature
from predmarket.kit.errors import InvalidRequest
from predmarket.kit.schemas import format_utc
from predmarket.store.tables.auth import auth_challenge

SERVICE_NAME: Final = "predmarket"
#: Longest challenge text accepted back (ours are about 400 characters).
MAX_CHALLENGE_LENGTH: Final = 2048
#: Used and expired challenges are deleted this long after they expire.
PURGE_AFTER: Final = timedelta(hours=1)
_HEX: Final = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class IssuedChallenge:
    text: str
    nonce: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class VerifiedWallet:
    """A wallet that proved control of its key by signing a challenge.

    ``address`` is the address as the client gave it; ``wallet`` its canonical form
    (:func:`predmarket.auth.wallets.canonical_wallet`); ``public_key`` lowercase hex.
    """

    address: str
    wallet: str
    key_type: wallets.KeyTypeName
    public_key: str


def challenge_text(
    address: str | None, nonce: str, issued_at: datetime, expires_at: datetime
) -> str:
    """The text a wallet signs. Lines are joined with ``\\n``; there is no trailing newline."""
    who = f"Wallet: {address}" if address else "Wallet: any (whichever wallet signs this message)"
    return "\n".join(
        (
            f"{SERVICE_NAME} wants you to sign in with your wallet.",
            "",
            "Signing this message proves you control the wallet and opens an API session.",
            "It does not authorize any transaction or move any funds.",
            "",
            who,
            f"Nonce: {nonce}",
            f"Issued at: {format_utc(issued_at)}",
            f"Expires at: {format_utc(expires_at)}",
        )
    )


def _text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def issue_challenge(
    conn: AsyncConnection, *, address: str | None, now: datetime, ttl_seconds: int
) -> IssuedChallenge:
    """Store and return a new challenge, for ``address`` or (None) for any wallet.

    Raises 400 naming ``body.address`` when ``address`` is not a wallet address.
    """
    wallet: str | None = None
    if address is not None:
        wallet = wallets.canonical_wallet(address)
        if wallet is None:
            raise _bad_address()
    nonce = secrets.token_hex(16)
    expires_at = now + timedelta(seconds=ttl_seconds)
    text = challenge_text(address, nonce, now, expires_at)
    # Keep the table small: whatever expired a while ago can never be used again.
    await conn.execute(
        delete(auth_challenge).where(auth_challenge.c.expires_at < now - PURGE_AFTER)
    )
    await conn.execute(
        insert(auth_challenge).values(
            nonce=nonce,
            address=wallet,
            text=text,
            text_digest=_text_digest(text),
            issued_at=now,
            expires_at=expires_at,
        )
    )
    return IssuedChallenge(text=text, nonce=nonce, expires_at=expires_at)


def _bad_address() -> InvalidRequest:
    return InvalidRequest.for_field(
        "body.address",
        "not a wallet address: a default (P2PKH, 1…) or gl-secp256k1 (groupless, 3…) address",
        type="address_invalid",
    )


def check_key_type(address: str, key_type: str | None) -> wallets.KeyTypeName:
    """The key type of a signer, given or inferred from the address; 400 on a mismatch."""
    expected = wallets.key_type_of(address)
    if expected is None:
        raise _bad_address()
    if key_type is None:
        return expected
    if key_type not in wallets.KEY_TYPES:
        raise InvalidRequest.for_field(
            "body.keyType",
            "keyType must be 'default' or 'gl-secp256k1' ('gl-webauthn' is no longer accepted)",
            type="key_type_invalid",
        )
    if key_type != expected:
        raise InvalidRequest.for_field(
            "body.keyType",
            f"keyType {key_type!r} does not match the address: {expected!r} addresses start with "
            + ("'1'" if expected == "default" else "'3'"),
            type="key_type_mismatch",
        )
    return expected


def check_public_key(address: str, public_key: str, key_type: wallets.KeyTypeName) -> bytes:
    """The 33-byte key, if it is valid and derives ``address``; else 400 naming body.publicKey."""
    if not isinstance(public_key, str) or len(public_key) != 66 or not set(public_key) <= _HEX:
        raise InvalidRequest.for_field(
            "body.publicKey",
            "publicKey must be a compressed secp256k1 public key: 66 hex characters",
            type="public_key_invalid",
        )
    raw = bytes.fromhex(public_key)
    try:
        validate_public_key(raw)
    except AlephiumError:
        raise InvalidRequest.for_field(
            "body.publicKey",
            "publicKey is not a compressed secp256k1 point",
            type="public_key_invalid",
        ) from None
    if not wallets.key_controls(address, raw, key_type):
        raise InvalidRequest.for_field(
            "body.publicKey",
            "publicKey does not derive the address with this keyType",
            type="public_key_mismatch",
        )
    return raw


def check_signature_format(signature: str) -> None:
    try:
        parse_signature(signature)
    except AlephiumError:
        raise InvalidRequest.for_field(
            "body.signature",
            "signature must be a 64-byte r || s as 128 lowercase hex characters "
            "(not DER, no recovery byte)",
            type="signature_format",
        ) from None


async def consume_signed_challenge(
    conn: AsyncConnection,
    *,
    address: str,
    public_key: str,
    signature: str,
    key_type: str | None,
    challenge: str | None,
    now: datetime,
) -> VerifiedWallet:
    """Verify a wallet's signature over a challenge and mark the challenge used.

    ``challenge`` is the exact text of the challenge (required for an address-less one); when
    None, the newest unused challenge issued for ``address`` is meant. ``key_type`` None means
    "the type the address has". Raises 400 ``INVALID_REQUEST`` naming the field for malformed
    input, 401 ``CHALLENGE_EXPIRED`` (expired, used or unknown challenge) and 401
    ``INVALID_SIGNATURE`` (the signature does not verify, or the challenge names another wallet).
    """
    if not isinstance(address, str) or wallets.canonical_wallet(address) is None:
        raise _bad_address()
    wallet = wallets.canonical_wallet(address)
    assert wallet is not None
    kind = check_key_type(address, key_type)
    raw_key = check_public_key(address, public_key, kind)
    check_signature_format(signature)
    if challenge is not None and (
        not isinstance(challenge, str) or not 0 < len(challenge) <= MAX_CHALLENGE_LENGTH
    ):
        raise InvalidRequest.for_field(
            "body.challenge",
            f"challenge must be the exact challenge text (1..{MAX_CHALLENGE_LENGTH} characters)",
            type="challenge_invalid",
        )

    c = auth_challenge.c
    query = select(c.id, c.address, c.text, c.expires_at, c.used_at)
    if challenge is not None:
        query = query.where(c.text_digest == _text_digest(challenge))
    else:
        query = query.where(c.address == wallet, c.used_at.is_(None)).order_by(c.id.desc()).limit(1)
    row = (await conn.execute(query)).one_or_none()
    if row is None or row.used_at is not None or now >= row.expires_at:
        raise ChallengeExpired()
    if row.address is not None and row.address != wallet:
        raise InvalidSignature("the challenge was issued for another wallet")
    if not verify_message(row.text, MessageHasher.ALEPHIUM, raw_key, signature):
        raise InvalidSignature()
    used = await conn.execute(
        update(auth_challenge).where(c.id == row.id, c.used_at.is_(None)).values(used_at=now)
    )
    if used.rowcount != 1:
        raise ChallengeExpired()
    return VerifiedWallet(address=address, wallet=wallet, key_type=kind, public_key=raw_key.hex())
