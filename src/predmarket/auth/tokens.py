"""Secrets handed to clients: session tokens, CSRF tokens, API keys, developer keys.

Every secret has the form ``<prefix><id>_<secret>``:

- ``prefix`` names the kind (``svc_sess_``, ``svc_csrf_``, ``svc_live_``, ``svc_dev_``), so a
  leaked value is recognisable and a secret scanner can match it;
- ``id`` is a public random identifier (16 bytes as 32 lowercase hex characters), the key of the
  row, so verification is one indexed lookup;
- ``secret`` is 43 characters drawn uniformly from ``[A-Za-z0-9]`` by the OS CSPRNG (over 256
  bits). No ``_`` or ``-`` in it: the secret is everything after the last ``_`` and the whole
  token is one word to double-click or to match in a secret scanner.

A row stores only ``SHA-256(secret)`` as hex. A presented secret is verified by comparing digests
with :func:`hmac.compare_digest` (constant time). A secret is shown once, when issued.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
from dataclasses import dataclass
from typing import Final

ID_BYTES: Final = 16
#: Length of the id (hex) and of the secret (base62: 43 characters carry 256 bits).
ID_LENGTH: Final = 2 * ID_BYTES
SECRET_LENGTH: Final = 43
_SECRET_ALPHABET: Final = string.ascii_letters + string.digits

_ID_RE: Final = re.compile(f"[0-9a-f]{{{ID_LENGTH}}}")
_SECRET_RE: Final = re.compile(f"[A-Za-z0-9]{{{SECRET_LENGTH}}}")
_PREFIX_RE: Final = re.compile(r"svc_[a-z]+_")


@dataclass(frozen=True, slots=True)
class IssuedSecret:
    """A freshly made secret: ``token`` goes to the client once; ``id`` and ``digest`` are kept."""

    token: str
    id: str
    digest: str

    def __repr__(self) -> str:
        # Never let a token reach a log line through a repr.
        return f"IssuedSecret(id={self.id!r})"


def new_id() -> str:
    """A fresh public identifier (32 lowercase hex characters)."""
    return secrets.token_hex(ID_BYTES)


def new_secret(prefix: str, *, id: str | None = None) -> IssuedSecret:
    """A new ``<prefix><id>_<secret>``; ``id`` is fresh unless given (a CSRF token may share its
    session's id)."""
    if not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(f"bad secret prefix {prefix!r}")
    ident = new_id() if id is None else id
    if not _ID_RE.fullmatch(ident):
        raise ValueError("a secret id is 32 lowercase hex characters")
    secret = "".join(secrets.choice(_SECRET_ALPHABET) for _ in range(SECRET_LENGTH))
    return IssuedSecret(token=f"{prefix}{ident}_{secret}", id=ident, digest=digest(secret))


def parse(token: str, prefix: str) -> tuple[str, str] | None:
    """``(id, secret)`` of a well-formed ``<prefix><id>_<secret>``, else None."""
    if not isinstance(token, str) or not token.startswith(prefix):
        return None
    rest = token[len(prefix) :]
    if len(rest) != ID_LENGTH + 1 + SECRET_LENGTH or rest[ID_LENGTH] != "_":
        return None
    ident, secret = rest[:ID_LENGTH], rest[ID_LENGTH + 1 :]
    if not _ID_RE.fullmatch(ident) or not _SECRET_RE.fullmatch(secret):
        return None
    return ident, secret


def digest(secret: str) -> str:
    """SHA-256 of a secret, as 64 lowercase hex characters (what a row stores)."""
    return hashlib.sha256(secret.encode("ascii", "replace")).hexdigest()


def verify(secret: str, stored_digest: str | None) -> bool:
    """Whether ``secret`` hashes to ``stored_digest``, compared in constant time."""
    if stored_digest is None:
        return False
    return hmac.compare_digest(digest(secret), stored_digest)
