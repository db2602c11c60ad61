"""Single-session revocation and revoke-all (204, enumeration-safe, idempotent), and revocation
that survives a restart and holds across app instances on one database."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest

from helpers.auth import ClientFactory, client_of, new_key, settings_for, sign_in
from predmarket.app import create_app

pytestmark = pytest.mark.db


async def status(client: httpx.AsyncClient, headers: dict[str, str]) -> int:
    return (await client.get("/v1/auth/sessions", headers=headers)).status_code


class TestRevokeOne:
    async def test_own_session(self, make_client: ClientFactory) -> None:
        key = new_key()
        async with make_client() as client:
            one, two = await sign_in(client, key), await sign_in(client, key)
            r = await client.delete(f"/v1/auth/sessions/{one.session_id}", headers=two.headers)
            assert r.status_code == 204
            assert await status(client, one.headers) == 401
            assert await status(client, two.headers) == 200
            again = await client.delete(f"/v1/auth/sessions/{one.session_id}", headers=two.headers)
            assert again.status_code == 204  # idempotent

    @pytest.mark.parametrize("target", ["foreign", "missing", "malformed"])
    async def test_nothing_to_revoke_looks_the_same(
        self, make_client: ClientFactory, target: str
    ) -> None:
        async with make_client() as client:
            mine = await sign_in(client, new_key())
            theirs = await sign_in(client, new_key())
            session_id = {
                "foreign": theirs.session_id,
                "missing": str(uuid.uuid4()),
                "malformed": "not-a-uuid",
            }[target]
            r = await client.delete(f"/v1/auth/sessions/{session_id}", headers=mine.headers)
            assert r.status_code == 204 and r.content == b""
            assert await status(client, theirs.headers) == 200  # untouched

    async def test_anonymous_is_401(self, auth_client: httpx.AsyncClient) -> None:
        r = await auth_client.delete(f"/v1/auth/sessions/{uuid.uuid4()}")
        assert r.status_code == 401

    async def test_current_cookie_session_clears_cookie(self, make_client: ClientFactory) -> None:
        async with make_client() as client:
            cookie = await sign_in(client, new_key(), bearer=False)
            refused = await client.delete(f"/v1/auth/sessions/{cookie.session_id}")
            assert refused.status_code == 403 and refused.json()["code"] == "CSRF_FAILED"
            r = await client.delete(
                f"/v1/auth/sessions/{cookie.session_id}", headers=cookie.headers
            )
            assert r.status_code == 204
            assert r.headers["set-cookie"].startswith("svc_session=")
            assert "svc_session" not in client.cookies
            client.cookies.set("svc_session", str(cookie.cookie))
            assert await status(client, {}) == 401


class TestRevokeAll:
    async def test_every_cookie_and_bearer_session(self, make_client: ClientFactory) -> None:
        key = new_key()
        async with make_client() as browser, make_client() as bot:
            cookie = await sign_in(browser, key, bearer=False)
            bearers = [await sign_in(bot, key) for _ in range(3)]
            bystander = await sign_in(bot, new_key())
            refused = await browser.post("/v1/auth/sessions/revoke-all")
            assert refused.status_code == 403 and refused.json()["code"] == "CSRF_FAILED"
            r = await bot.post("/v1/auth/sessions/revoke-all", headers=bearers[0].headers)
            assert r.status_code == 204
            for b in bearers:  # the presented one included
                assert await status(bot, b.headers) == 401
            assert await status(browser, cookie.headers) == 401
            assert await status(bot, bystander.headers) == 200


class TestDurable:
    async def test_revocation_survives_a_restart(self, tmp_path: Path, migrated_url: str) -> None:
        settings = settings_for(migrated_url, tmp_path / "data")
        key = new_key()
        first = create_app(settings)
        async with first.router.lifespan_context(first), client_of(first) as client:
            kept, revoked = await sign_in(client, key), await sign_in(client, key)
            r = await client.post("/v1/auth/logout", headers=revoked.headers)
            assert r.status_code == 204
        restarted = create_app(settings)
        async with restarted.router.lifespan_context(restarted), client_of(restarted) as client:
            assert await status(client, revoked.headers) == 401
            assert await status(client, kept.headers) == 200

    async def test_two_instances_share_revocation(self, tmp_path: Path, migrated_url: str) -> None:
        a = create_app(settings_for(migrated_url, tmp_path / "a"))
        b = create_app(settings_for(migrated_url, tmp_path / "b"))
        async with (
            a.router.lifespan_context(a),
            b.router.lifespan_context(b),
            client_of(a) as on_a,
            client_of(b) as on_b,
        ):
            signed = await sign_in(on_a, new_key())
            assert await status(on_b, signed.headers) == 200
            r = await on_a.post("/v1/auth/sessions/revoke-all", headers=signed.headers)
            assert r.status_code == 204
            assert await status(on_b, signed.headers) == 401
