"""CSRF: every mutating cookie-authenticated request needs ``x-csrf-token``; bearer is exempt;
cookie sessions refresh on use."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI

from helpers.auth import ClientFactory, SignedIn, challenge, client_of, new_key, sign_in, wallet_of
from helpers.routes import MUTATING, app_routes, concrete
from predmarket.alephium.signing import sign_message
from predmarket.auth.principal import DEVELOPER_SCOPES

pytestmark = pytest.mark.db

Mutation = Callable[[httpx.AsyncClient, SignedIn, dict[str, str]], Awaitable[httpx.Response]]


async def logout(c: httpx.AsyncClient, s: SignedIn, h: dict[str, str]) -> httpx.Response:
    return await c.post("/v1/auth/logout", headers=h)


async def revoke_one(c: httpx.AsyncClient, s: SignedIn, h: dict[str, str]) -> httpx.Response:
    return await c.delete(f"/v1/auth/sessions/{uuid.uuid4()}", headers=h)


async def revoke_all(c: httpx.AsyncClient, s: SignedIn, h: dict[str, str]) -> httpx.Response:
    return await c.post("/v1/auth/sessions/revoke-all", headers=h)


#: Every mutating route a cookie session can call in this package (the tx builders have theirs
#: in tests/integration/tx/test_tx_auth.py).
MUTATIONS: dict[str, Mutation] = {
    "logout": logout,
    "revoke-one": revoke_one,
    "revoke-all": revoke_all,
}


def other_csrf(signed: SignedIn) -> str:
    """A well-formed CSRF token with this session's id and a wrong secret."""
    assert signed.csrf_token is not None
    prefix, _, secret = signed.csrf_token.rpartition("_")
    return f"{prefix}_{'A' if secret[0] != 'A' else 'B'}{secret[1:]}"


class TestCookieMutations:
    @pytest.mark.parametrize("name", list(MUTATIONS))
    @pytest.mark.parametrize("csrf", ["missing", "wrong", "another session's"])
    async def test_refused_without_the_right_token(
        self, make_client: ClientFactory, name: str, csrf: str
    ) -> None:
        key = new_key()
        async with make_client() as client, make_client() as elsewhere:
            signed = await sign_in(client, key, bearer=False)
            sibling = await sign_in(elsewhere, key, bearer=False)
            headers = {
                "missing": {},
                "wrong": {"x-csrf-token": other_csrf(signed)},
                "another session's": sibling.headers,
            }[csrf]
            r = await MUTATIONS[name](client, signed, headers)
            assert r.status_code == 403, r.text
            assert r.json()["code"] == "CSRF_FAILED"
            # nothing happened: the session still works
            assert (await client.get("/v1/auth/sessions")).status_code == 200
            ok = await MUTATIONS[name](client, signed, signed.headers)
            assert ok.status_code == 204

    @pytest.mark.parametrize("name", list(MUTATIONS))
    async def test_bearer_is_exempt(self, make_client: ClientFactory, name: str) -> None:
        async with make_client() as client:
            signed = await sign_in(client, new_key())
            r = await MUTATIONS[name](client, signed, signed.headers)
            assert r.status_code == 204

    async def test_reads_need_no_csrf(self, make_client: ClientFactory) -> None:
        async with make_client() as client:
            await sign_in(client, new_key(), bearer=False)
            assert (await client.get("/v1/auth/sessions")).status_code == 200


#: Mutations a cookie session does not authorize, so CSRF does not apply: signing in, and
#: minting a legacy key (authorized by a challenge signature); operator routes (their own token).
NOT_SESSION_AUTHORIZED = frozenset(
    {("POST", "/v1/auth/challenge"), ("POST", "/v1/auth/session"), ("POST", "/v1/auth/keys")}
)


async def test_every_cookie_mutation_of_the_app_needs_the_token(
    auth_app: FastAPI, make_client: ClientFactory
) -> None:
    """A sweep over every mutating route the app serves, so a new one cannot forget CSRF."""
    routes = [
        (method, template)
        for method, template in app_routes(auth_app)
        if method in MUTATING
        and (method, template) not in NOT_SESSION_AUTHORIZED
        and not template.startswith("/v1/admin/")
    ]
    assert len(routes) >= 10, routes  # the sweep really sees the app's routes
    async with make_client() as client:
        signed = await sign_in(client, new_key(), bearer=False)
        created = await client.post(
            "/v1/developer/keys",
            json={"name": "all", "scopes": list(DEVELOPER_SCOPES)},
            headers=signed.headers,
        )
        assert created.status_code == 201, created.text
        developer = {"x-svc-developer-key": created.json()["key"]}
        for method, template in routes:
            body = {} if method in ("POST", "PUT", "PATCH") else None
            path = concrete(template)
            # Without the developer key, routes that need one answer 401 first; never a success.
            r = await client.request(method, path, json=body)
            assert (r.status_code, r.json()["code"]) in {
                (403, "CSRF_FAILED"),
                (401, "UNAUTHORIZED"),
            }, (method, template, r.text)
            for headers in (developer, {**developer, "x-csrf-token": other_csrf(signed)}):
                r = await client.request(method, path, json=body, headers=headers)
                assert (r.status_code, r.json()["code"]) == (403, "CSRF_FAILED"), (
                    method,
                    template,
                    r.text,
                )
        # nothing was done: the session and the key still work
        assert (await client.get("/v1/auth/sessions")).status_code == 200
        listed = await client.get("/v1/developer/keys")
        assert listed.status_code == 200 and listed.json()["keys"][0]["revokedAt"] is None


class TestCookieRefresh:
    async def test_use_slides_the_expiry_and_the_cookie(
        self, auth_app: FastAPI, make_client: ClientFactory
    ) -> None:
        async with make_client() as client:
            signed = await sign_in(client, new_key(), bearer=False)
            first = (await client.get("/v1/auth/sessions")).json()["sessions"][0]
            later = datetime.now(UTC) + timedelta(days=3)
            auth_app.state.clock = lambda: later
            response = await client.get("/v1/auth/sessions")
            row = response.json()["sessions"][0]
            assert row["id"] == signed.session_id
            assert row["expiresAt"] > first["expiresAt"] and row["lastSeenAt"] > first["lastSeenAt"]
            cookie = response.headers["set-cookie"]
            assert cookie.startswith(f"svc_session={signed.cookie};")
            assert "max-age=604800" in cookie.lower() and "httponly" in cookie.lower()
            # within the minute: no write, no new cookie
            again = await client.get("/v1/auth/sessions")
            assert "set-cookie" not in again.headers
            # unused for longer than the idle lifetime: gone
            auth_app.state.clock = lambda: later + timedelta(days=7, seconds=1)
            assert (await client.get("/v1/auth/sessions")).status_code == 401

    async def test_bearer_never_slides(self, auth_app: FastAPI, make_client: ClientFactory) -> None:
        async with make_client() as client:
            signed = await sign_in(client, new_key())
            expires = signed.body["expiresAt"]
            auth_app.state.clock = lambda: datetime.now(UTC) + timedelta(days=10)
            row = (await client.get("/v1/auth/sessions", headers=signed.headers)).json()
            assert row["sessions"][0]["expiresAt"] == expires
            auth_app.state.clock = lambda: datetime.now(UTC) + timedelta(days=30, seconds=1)
            r = await client.get("/v1/auth/sessions", headers=signed.headers)
            assert r.status_code == 401

    async def test_secure_flag_over_https(self, auth_app: FastAPI) -> None:
        async with client_of(auth_app, "https://testserver") as client:
            key = new_key()
            address, public_key = wallet_of(key)
            issued = await challenge(client, address)
            response = await client.post(
                "/v1/auth/session",
                json={
                    "address": address,
                    "publicKey": public_key,
                    "signature": sign_message(key, issued["challenge"]),
                    "keyType": "default",
                },
            )
            assert response.status_code == 200, response.text
            set_cookie = response.headers["set-cookie"].lower()
            assert set_cookie.startswith("svc_session=")
            assert {"secure", "httponly", "samesite=lax"} <= {
                part.strip() for part in set_cookie.split(";")
            }
            headers = {"x-csrf-token": response.json()["csrfToken"]}
            r = await client.post("/v1/auth/logout", headers=headers)
            assert "secure" in r.headers["set-cookie"].lower()
