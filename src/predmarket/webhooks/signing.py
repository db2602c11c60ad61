"""Webhook secrets and signatures (Standard Webhooks; docs/webhooks.md, "Verifying").

- A secret is ``whsec_`` + base64 of 32 random bytes; the HMAC key is those 32 bytes.
- A delivery carries ``webhook-id`` (the delivery id, the same on every retry),
  ``webhook-timestamp`` (Unix seconds of this attempt) and ``webhook-signature``:
  ``v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>``; while a rotated-out secret is in
  its grace period the header lists both signatures, space-separated, the new one first.
- The service must sign, so it keeps each secret recoverable but never in plain text: AES-256-GCM
  under a key derived from the server secret (HMAC-SHA256 of a fixed label), with the webhook id
  as associated data so a ciphertext cannot be moved to another row. Rotating the server secret
  therefore invalidates stored webhook secrets (rotate each webhook's secret afterwards).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SECRET_PREFIX: Final = "whsec_"
SECRET_BYTES: Final = 32
SIGNATURE_VERSION: Final = "v1"
_NONCE_BYTES: Final = 12
_CIPHERTEXT_VERSION: Final = "g1:"
_KEY_LABEL: Final = b"predmarket/webhook-secret/v1"
#: Receivers should refuse a timestamp further than this from their clock (replay protection).
TOLERANCE_SECONDS: Final = 300


class SecretUnreadable(Exception):
    """A stored secret that does not decrypt (a changed server secret or a damaged row)."""


def new_secret() -> str:
    """A fresh ``whsec_…`` secret (shown to the caller once)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key a ``whsec_`` secret stands for."""
    body = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not a whsec_ secret") from None


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 signature>`` of one delivery attempt."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    mac = hmac.new(secret_key(secret), content, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(mac).decode('ascii')}"


def signature_header(secrets_: Iterable[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: one ``v1,…`` per live secret, space-separated."""
    return " ".join(sign(s, msg_id, timestamp, body) for s in secrets_)


def verify(
    secret: str, msg_id: str, timestamp: str, body: bytes, header: str, *, now: float
) -> bool:
    """What a receiver does (the documented recipe): the timestamp is within
    :data:`TOLERANCE_SECONDS` of ``now`` and one listed signature matches, compared in constant
    time."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs(now - sent) > TOLERANCE_SECONDS:
        return False
    expected = sign(secret, msg_id, sent, body)
    return any(hmac.compare_digest(expected, part) for part in header.split(" ") if part)


class SecretBox:
    """Encrypts webhook secrets for storage with a key derived from the server secret."""

    def __init__(self, server_secret: str) -> None:
        key = hmac.new(server_secret.encode(), _KEY_LABEL, hashlib.sha256).digest()
        self._aead = AESGCM(key)

    def seal(self, secret: str, webhook_id: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, secret.encode("ascii"), webhook_id.encode())
        return _CIPHERTEXT_VERSION + base64.b64encode(nonce + sealed).decode("ascii")

    def open(self, ciphertext: str, webhook_id: str) -> str:
        if not ciphertext.startswith(_CIPHERTEXT_VERSION):
            raise SecretUnreadable("unknown ciphertext format")
        try:
            raw = base64.b64decode(ciphertext[len(_CIPHERTEXT_VERSION) :], validate=True)
            nonce, sealed = raw[:_NONCE_BYTES], raw[_NONCE_BYTES:]
            return self._aead.decrypt(nonce, sealed, webhook_id.encode()).decode("ascii")
        except (binascii.Error, ValueError, InvalidTag, UnicodeDecodeError):
            raise SecretUnreadable("the webhook secret does not decrypt") from None

    def __repr__(self) -> str:
        return "SecretBox(…)"
