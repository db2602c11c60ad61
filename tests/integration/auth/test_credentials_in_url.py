"""A credential in a query string is refused before anything else (it would end up in logs)."""

from __future__ import annotations

import httpx
import pytest

from helpers.auth import new_key, sign_in

pytestmark = pytest.mark.db


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("token=svc_sess_abc", "query.token"),
        ("limit=5&api_key=svc_live_x", "query.api_key"),
        ("key=SVC_DEV_X", "query.key"),
        ("a=1&csrf=svc_csrf_1", "query.csrf"),
        ("svc_session=1", "query.svc_session"),
    ],
)
async def test_credential_in_url_is_400(
    auth_client: httpx.AsyncClient, query: str, field: str
) -> None:
    for path in ("/v1/markets", "/v1/auth/sessions", "/v1/no-such-route"):
        r = await auth_client.get(f"{path}?{query}")
        assert r.status_code == 400, r.text
        body = r.json()
        assert body["code"] == "INVALID_REQUEST"
        assert body["details"]["fields"][0] == {
            "field": field,
            "message": body["details"]["fields"][0]["message"],
            "type": "credential_in_url",
        }
        assert "svc_sess_abc" not in r.text  # never echoed


async def test_a_real_token_in_the_url_does_not_authenticate(
    auth_client: httpx.AsyncClient,
) -> None:
    signed = await sign_in(auth_client, new_key())
    r = await auth_client.get("/v1/users/me", params={"token": signed.token})
    assert r.status_code == 400


async def test_ordinary_queries_pass(auth_client: httpx.AsyncClient) -> None:
    r = await auth_client.get("/v1/health", params={"q": "svc", "x": "a_svc_b"})
    assert r.status_code == 200
