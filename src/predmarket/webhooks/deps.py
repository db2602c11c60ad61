"""Route dependencies of webhook management: who may manage, and the management context."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Depends
from starlette.requests import Request

from predmarket.auth.deps import check_csrf
from predmarket.auth.principal import Principal, principal_of
from predmarket.keys.errors import ScopeRequired
from predmarket.kit.deps import get_settings
from predmarket.webhooks import signing
from predmarket.webhooks.errors import DeveloperKeyRequired
from predmarket.webhooks.service import Context

SCOPE: Final = "webhooks:manage"


def require_manager(request: Request) -> Principal:
    """A developer key with ``webhooks:manage`` (401 without one, 403 without the scope). A
    wallet session sent beside it authorizes that wallet's ``user:`` topics; a cookie session
    must then carry its CSRF token on mutating requests."""
    principal = principal_of(request)
    developer = principal.developer
    if developer is None:
        raise DeveloperKeyRequired()
    if SCOPE not in developer.scopes:
        raise ScopeRequired(
            f"this developer key lacks the scope {SCOPE!r}",
            details={"credential": "developerKey", "requiredScope": SCOPE},
        )
    check_csrf(request, principal)
    return principal


def get_context(request: Request) -> Context:
    state = request.app.state
    context = getattr(state, "webhook_context", None)
    if isinstance(context, Context):
        return context
    settings = get_settings(request)
    context = Context(
        settings=settings.webhooks,
        box=signing.SecretBox(settings.resolve_secret_key()),
        allow_private=settings.webhooks.private_targets_allowed(settings.profile),
    )
    state.webhook_context = context
    return context


ManagerDep = Annotated[Principal, Depends(require_manager)]
ContextDep = Annotated[Context, Depends(get_context)]
