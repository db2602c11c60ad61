"""Errors of API keys, developer keys and the scope policy (spec 5.3, 5.4, 5.6, 7.3)."""

from __future__ import annotations

from predmarket.kit.errors import Conflict, InsufficientScope, NotFound, Unauthorized


class ApiKeyNotFound(NotFound):
    """Unknown, revoked, or another wallet's: the same answer, so ids cannot be probed."""

    message = "API key not found"


class DeveloperKeyNotFound(NotFound):
    """Unknown or another wallet's: the same answer, so ids cannot be probed."""

    message = "developer key not found"


class DeveloperKeyRevoked(Conflict):
    code = "KEY_REVOKED"
    message = "the developer key is revoked; create a new one"


class KeyLimitReached(Conflict):
    code = "KEY_LIMIT_REACHED"
    message = "the wallet holds the maximum number of live keys; revoke one first"


class CredentialRejected(Unauthorized):
    """A presented credential did not verify; ``code`` is the one the auth middleware found."""


class ScopeRequired(InsufficientScope):
    """A valid credential lacking what the route needs; ``details`` names it."""


class SessionOnly(InsufficientScope):
    """A legacy API key on a route that only a wallet session may use."""

    message = "this route needs a wallet session; API keys are not accepted here"


class DeveloperKeyNeedsWallet(Unauthorized):
    """A developer key identifies an integration, never a wallet."""

    message = (
        "a developer key is not a wallet credential: this route also needs the wallet's "
        "session (cookie svc_session or Authorization: Bearer)"
    )


class NotYourWallet(NotFound):
    """The path names another wallet than the session's (wallet-scoped reads answer 404)."""

    message = "resource not found"
