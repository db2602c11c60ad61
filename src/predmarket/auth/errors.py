"""Errors of wallet sign-in and of the routes that need a wallet (spec 7.3; docs/auth.md)."""

from __future__ import annotations

from predmarket.kit.errors import AppError, InsufficientScope, Unauthorized


class InvalidSignature(Unauthorized):
    code = "INVALID_SIGNATURE"
    message = "the signature does not verify over the challenge text with this public key"


class ChallengeExpired(Unauthorized):
    """Expired, already used, or never issued: the client must ask for a new challenge."""

    code = "CHALLENGE_EXPIRED"
    message = "the challenge is expired, already used or unknown; request a new one"


class SessionRequired(Unauthorized):
    message = "a wallet session is required (cookie svc_session or Authorization: Bearer)"


class CsrfFailed(AppError):
    """A cookie-authenticated mutating request without the session's ``x-csrf-token``."""

    status = 403
    code = "CSRF_FAILED"
    message = "cookie-authenticated requests that change state need the x-csrf-token header"


class SignerMismatch(InsufficientScope):
    """The transaction's signer is not the authenticated wallet (no delegation, spec 5.2.7)."""

    code = "SIGNER_MISMATCH"
    message = "signerAddress must be the authenticated wallet"
