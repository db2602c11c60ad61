"""The policy table of predmarket.keys.policy, without an app."""

from __future__ import annotations

import pytest

from predmarket.auth.principal import API_KEY_SCOPES, DEVELOPER_SCOPES
from predmarket.keys.policy import (
    DEFAULT_READ,
    DEFAULT_WRITE,
    RULES,
    SIGN_IN_ROUTES,
    Access,
    is_classified,
    rule_for,
)


@pytest.mark.parametrize(
    ("method", "template", "developer", "api_key"),
    [
        ("GET", "/v1/health", "public:read", "read"),
        ("GET", "/v1/health/ready", "public:read", "read"),
        ("GET", "/openapi.json", "public:read", "read"),
        ("GET", "/v1/protocol/config", "public:read", "read"),
        ("GET", "/v1/categories", "public:read", "read"),
        ("GET", "/v1/tags", "public:read", "read"),
        ("GET", "/v1/search", "public:read", "read"),
        ("GET", "/v1/trending", "public:read", "read"),
        ("GET", "/v1/markets", "market:read", "read"),
        ("GET", "/v1/markets/{market}", "market:read", "read"),
        ("GET", "/v1/markets/{marketAddress}/orderbook", "market:read", "read"),
        ("GET", "/v1/markets/{market}/fills", "market:read", "read"),
        ("GET", "/v1/events/{slug}", "market:read", "read"),
        ("GET", "/v1/transactions/{txId}", "transactions:read", "read"),
        ("GET", "/v1/users/me", "account:read", "read"),
        ("GET", "/v1/referrals/me/summary", "account:read", "read"),
        ("GET", "/v1/auth/keys", "account:read", "read"),
        ("GET", "/v1/realtime/stream", "realtime:public", "read"),
        ("POST", "/v1/webhooks", "webhooks:manage", Access.DENIED),
        ("DELETE", "/v1/webhooks/{id}", "webhooks:manage", Access.DENIED),
        ("POST", "/v1/tx/markets/{address}/orders", "trade:place", "write:tx"),
        ("DELETE", "/v1/tx/markets/{address}/orders/{id}", "trade:cancel", "write:tx"),
        ("POST", "/v1/tx/vault/deposit", Access.IGNORED, "write:tx"),
        ("POST", "/v1/trading/orders", "trade:place", Access.DENIED),
        ("POST", "/v1/trading/orders/{id}/cancel", "trade:cancel", Access.DENIED),
        ("DELETE", "/v1/trading/orders/{id}", "trade:cancel", Access.DENIED),
        ("POST", "/v1/auth/challenge", Access.IGNORED, Access.IGNORED),
        ("POST", "/v1/auth/keys", Access.IGNORED, Access.IGNORED),
        ("DELETE", "/v1/auth/keys/{key_id}", Access.IGNORED, Access.IGNORED),
        ("GET", "/v1/auth/sessions", "account:read", Access.DENIED),
        ("POST", "/v1/auth/sessions/revoke-all", Access.IGNORED, Access.DENIED),
        ("POST", "/v1/developer/keys", Access.IGNORED, Access.DENIED),
        ("GET", "/v1/developer/keys/{key_id}/events", Access.IGNORED, Access.DENIED),
        ("PUT", "/v1/admin/banner", Access.DENIED, Access.DENIED),
    ],
)
def test_table(method: str, template: str, developer: object, api_key: object) -> None:
    rule = rule_for(method, template)
    assert is_classified(method, template)
    assert (rule.developer, rule.api_key) == (developer, api_key)


def test_head_is_a_read() -> None:
    assert rule_for("HEAD", "/v1/markets") == rule_for("GET", "/v1/markets")


def test_account_rules() -> None:
    assert rule_for("GET", "/v1/users/{address}").account
    assert rule_for("GET", "/v1/auth/keys").account
    assert not rule_for("GET", "/v1/markets").account


def test_unlisted_routes_default_deny() -> None:
    assert not is_classified("GET", "/v1/brand-new")
    assert rule_for("GET", "/v1/brand-new") is DEFAULT_READ
    assert rule_for("POST", "/v1/brand-new") is DEFAULT_WRITE
    assert DEFAULT_READ.developer is Access.DENIED and DEFAULT_READ.api_key == "read"
    assert DEFAULT_WRITE.developer is Access.DENIED and DEFAULT_WRITE.api_key is Access.DENIED
    # a pattern spans segments only where the table says so
    assert not is_classified("GET", "/v1/marketsx")
    assert not is_classified("POST", "/v1/markets")


def test_every_named_scope_exists() -> None:
    known = set(API_KEY_SCOPES) | set(DEVELOPER_SCOPES)
    named = {n for r in RULES for n in (r.api_key, r.developer) if isinstance(n, str)}
    assert named <= known
    # each developer scope guards at least one route
    assert set(DEVELOPER_SCOPES) <= named


def test_sign_in_routes_are_post() -> None:
    assert {m for m, _ in SIGN_IN_ROUTES} == {"POST"}
