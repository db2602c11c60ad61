"""The scope policy of every route: one table, one app-level dependency (spec 5.3, 5.4, 5.6).

:func:`enforce` runs before every route's own dependencies, on the
:class:`~predmarket.auth.principal.Principal` the auth middleware resolved:

1. A presented credential that did not verify (``principal.credential_error``) is a 401 with the
   middleware's code, except on the sign-in routes (challenge, session, logout), which must work
   for a client whose old token went stale.
2. A legacy API key (``svc_live_``) needs ``read`` on reads and ``write:tx`` on ``/v1/tx/*``.
   Routes that only a wallet session may use (session and developer-key management, webhooks,
   any other write) refuse it with 403 INSUFFICIENT_SCOPE. Routes authorized by something else
   (sign-in, minting a key with a challenge signature, revoking a key) ignore it.
3. A developer key (``x-svc-developer-key``) needs the developer scope :data:`RULES` gives the
   route. A route without a rule is closed to developer keys (default-deny, 403). Private
   account reads (``account:read``) also need the wallet's own session: a developer key is never
   a wallet credential, and a path address must be the session's wallet (else 404).

Whether a wallet is needed at all is the route's business (``predmarket.auth.deps``): with no
credentials this policy lets every request through, so public reads stay public (spec 5.1).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Final

from starlette.requests import Request

from predmarket.auth.principal import API_KEY_SCOPES, DEVELOPER_SCOPES, Principal, principal_of
from predmarket.auth.wallets import same_wallet
from predmarket.keys.errors import (
    CredentialRejected,
    DeveloperKeyNeedsWallet,
    NotYourWallet,
    ScopeRequired,
    SessionOnly,
)


class Access(Enum):
    """What a route asks of a credential besides a scope."""

    #: The credential grants nothing here and is not refused: the route is authorized by
    #: something else (a challenge signature, the wallet session) or is sign-in itself.
    IGNORED = "ignored"
    #: Refused with 403: legacy keys on session-only routes; developer keys on unlisted routes.
    DENIED = "denied"


Requirement = str | Access


@dataclass(frozen=True, slots=True)
class Rule:
    """``methods`` (None: any) and a path pattern (``fnmatch`` over the route template, ``*``
    spans segments) → what a legacy key and a developer key need there."""

    methods: frozenset[str] | None
    patterns: tuple[str, ...]
    api_key: Requirement
    developer: Requirement
    #: A developer key here also needs the wallet's own session (private account data).
    account: bool = False

    def matches(self, method: str, template: str) -> bool:
        if self.methods is not None and method not in self.methods:
            return False
        return any(fnmatch.fnmatchcase(template, p) for p in self.patterns)


READ: Final = frozenset({"GET", "HEAD"})
POST: Final = frozenset({"POST"})
DELETE: Final = frozenset({"DELETE"})
ANY: Final = None

IGNORED: Final = Access.IGNORED
DENIED: Final = Access.DENIED

#: Routes where a credential that failed to verify is not an error: signing in again is how a
#: client recovers from a stale token, and logout must always answer 204.
SIGN_IN_ROUTES: Final = frozenset(
    {("POST", "/v1/auth/challenge"), ("POST", "/v1/auth/session"), ("POST", "/v1/auth/logout")}
)


def _rule(
    methods: frozenset[str] | None,
    *patterns: str,
    api_key: Requirement,
    developer: Requirement,
    account: bool = False,
) -> Rule:
    return Rule(methods, patterns, api_key, developer, account)


#: The table, first match wins. Patterns name route templates (``/v1/markets/{market}``), so a
#: rule covers a route whatever its path parameters hold.
RULES: Final[tuple[Rule, ...]] = (
    # Sign-in and minting: authorized by a challenge signature, not by a credential.
    _rule(
        POST,
        "/v1/auth/challenge",
        "/v1/auth/session",
        "/v1/auth/logout",
        "/v1/auth/keys",
        api_key=IGNORED,
        developer=IGNORED,
    ),
    # Legacy keys of the wallet: listed with `read`; any key of the wallet may revoke one
    # (revoking only takes authority away, and is the remedy for a leaked key).
    _rule(READ, "/v1/auth/keys", api_key="read", developer="account:read", account=True),
    _rule(DELETE, "/v1/auth/keys/*", api_key=IGNORED, developer=IGNORED),
    # Sessions of the wallet: a wallet session only.
    _rule(
        READ, "/v1/auth/sessions", "/v1/auth/sessions/*", api_key=DENIED, developer="account:read"
    ),
    _rule(ANY, "/v1/auth/sessions", "/v1/auth/sessions/*", api_key=DENIED, developer=IGNORED),
    # Developer-key management: the owner's wallet session; a developer key grants nothing.
    _rule(ANY, "/v1/developer/*", api_key=DENIED, developer=IGNORED),
    # Transaction builders: the wallet session (or a `write:tx` key) authorizes them; an
    # integration's developer key needs the trading scope of orders.
    _rule(POST, "/v1/tx/markets/*/orders", api_key="write:tx", developer="trade:place"),
    _rule(DELETE, "/v1/tx/markets/*/orders/*", api_key="write:tx", developer="trade:cancel"),
    _rule(ANY, "/v1/tx/*", api_key="write:tx", developer=IGNORED),
    # Public reads.
    _rule(
        READ,
        "/openapi.json",
        "/v1/health",
        "/v1/health/*",
        "/v1/protocol/*",
        "/v1/categories",
        "/v1/tags",
        "/v1/search",
        "/v1/trending",
        "/v1/creators/*",
        "/v1/platform/*",
        api_key="read",
        developer="public:read",
    ),
    _rule(
        READ,
        "/v1/markets",
        "/v1/markets/*",
        "/v1/events",
        "/v1/events/*",
        api_key="read",
        developer="market:read",
    ),
    _rule(READ, "/v1/transactions/*", api_key="read", developer="transactions:read"),
    _rule(READ, "/v1/realtime/*", api_key="read", developer="realtime:public"),
    _rule(READ, "/v1/platform/*", api_key="read", developer="public:read"),
    # Private account reads: the `me` routes and any wallet named in the path.
    _rule(
        READ,
        "/v1/users/*",
        "/v1/referrals/*",
        api_key="read",
        developer="account:read",
        account=True,
    ),
    # Webhook management: the owner's session with a developer key holding the scope.
    _rule(ANY, "/v1/webhooks", "/v1/webhooks/*", api_key=DENIED, developer="webhooks:manage"),
    # Builder trading facade (spec 5.5).
    _rule(READ, "/v1/trading/*", api_key=DENIED, developer="trade:place"),
    _rule(DELETE, "/v1/trading/*", api_key=DENIED, developer="trade:cancel"),
    _rule(POST, "/v1/trading/*cancel*", api_key=DENIED, developer="trade:cancel"),
    _rule(ANY, "/v1/trading/*", api_key=DENIED, developer="trade:place"),
    # Private operator routes (their own operator credential): no key of a user or builder.
    _rule(ANY, "/v1/admin/*", api_key=DENIED, developer=DENIED),
)

#: What a route without a rule asks: legacy keys read with `read` and write nowhere; developer
#: keys are refused (default-deny), so a new route is closed until someone classifies it.
DEFAULT_READ: Final = Rule(READ, ("*",), "read", DENIED)
DEFAULT_WRITE: Final = Rule(ANY, ("*",), DENIED, DENIED)

#: Path parameters that name a wallet; on ``account`` routes they must be the session's wallet.
WALLET_PATH_PARAMS: Final = ("address", "wallet")
#: The wallet-session modes that count as the wallet's own session on ``account`` routes.
SESSION_AUTHS: Final = frozenset({"cookie", "bearer"})


def _check_table(rules: tuple[Rule, ...]) -> None:
    """A typo in the table must fail at import, not leave a route needing a scope nobody has."""
    known = frozenset(API_KEY_SCOPES) | frozenset(DEVELOPER_SCOPES)
    for rule in rules:
        for need in (rule.api_key, rule.developer):
            if isinstance(need, str) and need not in known:
                raise ValueError(f"unknown scope {need!r} in the policy table")


_check_table(RULES)


def _method(method: str) -> str:
    return "GET" if method == "HEAD" else method


@lru_cache(maxsize=1024)
def rule_for(method: str, template: str) -> Rule:
    """The rule of a route (its method and path template)."""
    method = _method(method.upper())
    for rule in RULES:
        if rule.matches(method, template):
            return rule
    return DEFAULT_READ if method in READ else DEFAULT_WRITE


def is_classified(method: str, template: str) -> bool:
    """Whether an explicit rule of :data:`RULES` covers the route."""
    method = _method(method.upper())
    return any(rule.matches(method, template) for rule in RULES)


def route_template(request: Request) -> str:
    """The matched route's path template (``/v1/markets/{market}``); the path when none."""
    route = request.scope.get("route")
    template = getattr(route, "path", None)
    return template if isinstance(template, str) else request.url.path


def _check_api_key(principal: Principal, need: Requirement) -> None:
    if need is Access.IGNORED:
        return
    if need is Access.DENIED:
        raise SessionOnly(details={"credential": "apiKey", "requiredCredential": "session"})
    if need not in principal.api_key_scopes:
        raise ScopeRequired(
            f"this API key lacks the scope {need!r}",
            details={"credential": "apiKey", "requiredScope": need},
        )


def _check_developer(request: Request, principal: Principal, rule: Rule) -> None:
    developer = principal.developer
    assert developer is not None
    need = rule.developer
    if need is Access.IGNORED:
        return
    if need is Access.DENIED:
        raise ScopeRequired(
            "developer keys are not accepted on this route",
            details={"credential": "developerKey", "requiredScope": None},
        )
    if need not in developer.scopes:
        raise ScopeRequired(
            f"this developer key lacks the scope {need!r}",
            details={"credential": "developerKey", "requiredScope": need},
        )
    if rule.account:
        # The wallet's own session: a legacy API key is a credential of its own, not the
        # wallet's consent, so a developer key with one is refused like a developer key alone.
        wallet = principal.wallet if principal.auth in SESSION_AUTHS else None
        if wallet is None:
            raise DeveloperKeyNeedsWallet()
        for name in WALLET_PATH_PARAMS:
            value = request.path_params.get(name)
            if isinstance(value, str) and value != "me" and not same_wallet(value, wallet):
                raise NotYourWallet()


async def enforce(request: Request) -> None:
    """The app-level dependency: 401 for a credential that failed, 403 for a missing scope."""
    principal = principal_of(request)
    if (
        principal.credential_error is None
        and principal.auth != "api_key"
        and principal.developer is None
    ):
        return  # anonymous or a wallet session: the route decides
    method = _method(request.method)
    template = route_template(request)
    if principal.credential_error is not None and (method, template) not in SIGN_IN_ROUTES:
        code, message = principal.credential_error
        raise CredentialRejected(message, code=code)
    rule = rule_for(method, template)
    if principal.auth == "api_key":
        _check_api_key(principal, rule.api_key)
    if principal.developer is not None:
        _check_developer(request, principal, rule)
