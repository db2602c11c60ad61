"""The scope policy over every route of the app (spec 5.3, 5.4, 5.6; docs/keys.md).

The matrix: for each route and each scope, a key holding only that scope gets 403
INSUFFICIENT_SCOPE (naming the scope the route needs) unless it is the route's scope, and then
anything but 403. Every route must be classified by the policy table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import APIRouter, FastAPI

from helpers.auth import SignedIn, challenge, new_key, sign_in, wallet_of
from helpers.routes import app_routes, concrete
from predmarket.alephium.signing import sign_message
from predmarket.app import create_app
from predmarket.auth.deps import WalletDep
from predmarket.auth.principal import DEVELOPER_SCOPES
from predmarket.keys.policy import Access, is_classified, rule_for
from predmarket.settings import LimitSettings, Settings

pytestmark = pytest.mark.db

HEADER = "x-svc-developer-key"
HIGH_LIMITS = LimitSettings(
    anonymous_reads_per_minute=100_000,
    anonymous_writes_per_minute=100_000,
    session_reads_per_minute=100_000,
    session_writes_per_minute=100_000,
    developer_reads_per_minute=100_000,
    developer_writes_per_minute=100_000,
)


@pytest.fixture
def auth_settings(auth_settings: Settings) -> Settings:
    return auth_settings.model_copy(update={"limits": HIGH_LIMITS})


def is_stream(template: str) -> bool:
    # A granted stream would never end in an in-process client; its denial is checked.
    return template.startswith("/v1/realtime/")


async def developer_keys(client: httpx.AsyncClient, owner: SignedIn) -> dict[str, str]:
    """One key per developer scope, holding only that scope."""
    keys: dict[str, str] = {}
    for scope in DEVELOPER_SCOPES:
        response = await client.post(
            "/v1/developer/keys", json={"name": scope, "scopes": [scope]}, headers=owner.headers
        )
        assert response.status_code == 201, response.text
        keys[scope] = response.json()["key"]
    return keys


async def legacy_keys(client: httpx.AsyncClient) -> dict[str, str]:
    """A read-only and a write-only legacy key of one wallet."""
    key = new_key()
    address, public_key = wallet_of(key)
    out: dict[str, str] = {}
    for scope in ("read", "write:tx"):
        issued = await challenge(client, address)
        response = await client.post(
            "/v1/auth/keys",
            json={
                "address": address,
                "publicKey": public_key,
                "signature": sign_message(key, issued["challenge"]),
                "name": scope,
                "scopes": [scope],
            },
        )
        assert response.status_code == 201, response.text
        out[scope] = response.json()["key"]
    return out


async def call(
    client: httpx.AsyncClient, method: str, template: str, headers: dict[str, str]
) -> httpx.Response:
    body: dict[str, object] | None = {} if method in ("POST", "PUT", "PATCH") else None
    return await client.request(method, concrete(template), json=body, headers=headers)


def test_every_route_is_classified(auth_settings: Settings) -> None:
    app = create_app(auth_settings)
    routes = list(app_routes(app))
    assert ("GET", "/v1/markets") in routes and ("POST", "/v1/developer/keys") in routes
    unclassified = [f"{m} {p}" for m, p in routes if not is_classified(m, p)]
    assert unclassified == [], "add these routes to predmarket.keys.policy.RULES"


async def test_developer_scope_matrix(auth_app: FastAPI, auth_client: httpx.AsyncClient) -> None:
    owner = await sign_in(auth_client, new_key())
    keys = await developer_keys(auth_client, owner)
    checked = 0
    for method, template in app_routes(auth_app):
        need = rule_for(method, template).developer
        for scope, key in keys.items():
            granted = need is Access.IGNORED or need == scope
            if granted and is_stream(template):
                continue
            response = await call(auth_client, method, template, {HEADER: key})
            where = f"{method} {template} with {scope}: {response.text}"
            if granted:
                assert response.status_code != 403, where
            else:
                assert response.status_code == 403, where
                assert response.json()["code"] == "INSUFFICIENT_SCOPE", where
                assert response.json()["details"] == {
                    "credential": "developerKey",
                    "requiredScope": None if need is Access.DENIED else need,
                }, where
            checked += 1
    assert checked > 100


async def test_legacy_scope_matrix(auth_app: FastAPI, auth_client: httpx.AsyncClient) -> None:
    keys = await legacy_keys(auth_client)
    for method, template in app_routes(auth_app):
        need = rule_for(method, template).api_key
        for scope, key in keys.items():
            granted = need is Access.IGNORED or need == scope
            if granted and is_stream(template):
                continue
            response = await call(auth_client, method, template, {"authorization": f"Bearer {key}"})
            where = f"{method} {template} with {scope}: {response.text}"
            if granted:
                assert response.status_code != 403, where
                continue
            assert response.status_code == 403, where
            assert response.json()["code"] == "INSUFFICIENT_SCOPE", where
            details = response.json()["details"]
            if need is Access.DENIED:
                assert details == {"credential": "apiKey", "requiredCredential": "session"}
            else:
                assert details == {"credential": "apiKey", "requiredScope": need}, where


# -- default-deny and wallet-scoped paths, on test-only routes ----------------------------------


@pytest.fixture
async def probe_client(auth_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app with test-only routes: unclassified ones and a wallet-scoped read."""
    app = create_app(auth_settings)
    router = APIRouter()

    @router.get("/v1/unlisted")
    async def unlisted_read() -> dict[str, bool]:
        return {"ok": True}

    @router.post("/v1/unlisted")
    async def unlisted_write() -> dict[str, bool]:
        return {"ok": True}

    @router.get("/v1/users/{address}/probe")
    async def wallet_read(address: str, principal: WalletDep) -> dict[str, str | None]:
        return {"address": address, "wallet": principal.wallet}

    app.include_router(router)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


async def test_unclassified_routes_are_closed_to_developer_keys(
    probe_client: httpx.AsyncClient,
) -> None:
    owner = await sign_in(probe_client, new_key())
    created = await probe_client.post(
        "/v1/developer/keys",
        json={"name": "all", "scopes": list(DEVELOPER_SCOPES)},
        headers=owner.headers,
    )
    key = created.json()["key"]
    for method in ("GET", "POST"):
        response = await probe_client.request(method, "/v1/unlisted", headers={HEADER: key})
        assert response.status_code == 403, response.text
        assert response.json()["details"] == {"credential": "developerKey", "requiredScope": None}
    # without a developer key the route is open as any other
    assert (await probe_client.get("/v1/unlisted")).status_code == 200
    # a legacy key reads with `read` but writes nowhere unlisted
    keys = await legacy_keys(probe_client)
    bearer = {"authorization": f"Bearer {keys['read']}"}
    assert (await probe_client.get("/v1/unlisted", headers=bearer)).status_code == 200
    refused = await probe_client.post("/v1/unlisted", headers=bearer)
    assert refused.status_code == 403
    assert refused.json()["details"]["requiredCredential"] == "session"


async def test_account_paths_must_be_the_sessions_wallet(
    probe_client: httpx.AsyncClient,
) -> None:
    key = new_key()
    owner = await sign_in(probe_client, key, key_type="gl-secp256k1")
    created = await probe_client.post(
        "/v1/developer/keys",
        json={"name": "acct", "scopes": ["account:read"]},
        headers=owner.headers,
    )
    dev = {HEADER: created.json()["key"]}
    both = {**dev, **owner.headers}
    mine = await probe_client.get(f"/v1/users/{owner.address}/probe", headers=both)
    assert mine.status_code == 200, mine.text
    # the same groupless wallet with an explicit group
    grouped = await probe_client.get(f"/v1/users/{owner.address}:3/probe", headers=both)
    assert grouped.status_code == 200, grouped.text
    other = wallet_of(new_key())[0]
    theirs = await probe_client.get(f"/v1/users/{other}/probe", headers=both)
    assert (theirs.status_code, theirs.json()["code"]) == (404, "NOT_FOUND")
    alone = await probe_client.get(f"/v1/users/{owner.address}/probe", headers=dev)
    assert (alone.status_code, alone.json()["code"]) == (401, "UNAUTHORIZED")
    # without a developer key, the wallet check is the route's own business
    plain = await probe_client.get(f"/v1/users/{other}/probe", headers=owner.headers)
    assert plain.status_code == 200
    # a legacy API key of the same wallet is not the wallet's session
    issued = await challenge(probe_client, owner.address)
    minted = await probe_client.post(
        "/v1/auth/keys",
        json={
            "address": owner.address,
            "publicKey": owner.public_key,
            "signature": sign_message(key, issued["challenge"]),
            "name": "legacy",
        },
    )
    assert minted.status_code == 201, minted.text
    legacy = {**dev, "authorization": f"Bearer {minted.json()['key']}"}
    keyed = await probe_client.get(f"/v1/users/{owner.address}/probe", headers=legacy)
    assert (keyed.status_code, keyed.json()["code"]) == (401, "UNAUTHORIZED")
