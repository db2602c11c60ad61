"""POST /v1/auth/logout: 204 always; revokes exactly the presented session; clears the cookie."""

from __future__ import annotations

import httpx
import pytest

from helpers.auth import ClientFactory, new_key, sign_in

pytestmark = pytest.mark.db


def clears_cookie(response: httpx.Response) -> bool:
    header = response.headers.get("set-cookie", "")
    return (
        header.startswith('svc_session=""')
        or header.startswith("svc_session=;")
        or (header.startswith("svc_session=") and "max-age=0" in header.lower())
    )


class TestLogout:
    async def test_anonymous_is_204(self, auth_client: httpx.AsyncClient) -> None:
        response = await auth_client.post("/v1/auth/logout")
        assert response.status_code == 204 and response.content == b""
        assert clears_cookie(response)

    async def test_invalid_bearer_is_still_204(self, auth_client: httpx.AsyncClient) -> None:
        response = await auth_client.post(
            "/v1/auth/logout", headers={"authorization": "Bearer svc_sess_nonsense"}
        )
        assert response.status_code == 204

    async def test_bearer_revokes_exactly_that_token(self, make_client: ClientFactory) -> None:
        key = new_key()
        async with make_client() as client:
            one = await sign_in(client, key)
            two = await sign_in(client, key)
            response = await client.post("/v1/auth/logout", headers=one.headers)
            assert response.status_code == 204
            assert (await client.get("/v1/auth/sessions", headers=one.headers)).status_code == 401
            listed = await client.get("/v1/auth/sessions", headers=two.headers)
            assert listed.status_code == 200
            rows = {r["id"]: r for r in listed.json()["sessions"]}
            assert rows[one.session_id]["revokedAt"] is not None
            assert rows[two.session_id]["revokedAt"] is None
            # logging out again with the revoked token changes nothing and is still 204
            again = await client.post("/v1/auth/logout", headers=one.headers)
            assert again.status_code == 204

    async def test_cookie_needs_csrf(self, make_client: ClientFactory) -> None:
        key = new_key()
        async with make_client() as client:
            cookie = await sign_in(client, key, bearer=False)
            for headers in ({}, {"x-csrf-token": "svc_csrf_wrong"}):
                refused = await client.post("/v1/auth/logout", headers=headers)
                assert refused.status_code == 403 and refused.json()["code"] == "CSRF_FAILED"
                # nothing was revoked
                assert (await client.get("/v1/auth/sessions")).status_code == 200
            done = await client.post("/v1/auth/logout", headers=cookie.headers)
            assert done.status_code == 204 and clears_cookie(done)
            assert "svc_session" not in client.cookies
            # the old cookie value no longer works even when sent by hand
            client.cookies.set("svc_session", str(cookie.cookie))
            assert (await client.get("/v1/auth/sessions")).status_code == 401
