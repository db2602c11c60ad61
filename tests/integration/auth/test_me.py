"""``me`` routes resolve to the signed-in wallet; another wallet's scoped data is a 404."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import ClientFactory, new_key, sign_in, wallet_of
from helpers.markets import make_market, make_order

pytestmark = pytest.mark.db

ME_ROUTES = ["/v1/users/me", "/v1/users/me/pending-reveals", "/v1/referrals/me/summary"]


class TestMe:
    @pytest.mark.parametrize("path", ME_ROUTES)
    async def test_anonymous_is_401(self, auth_client: httpx.AsyncClient, path: str) -> None:
        r = await auth_client.get(path)
        assert r.status_code == 401 and r.json()["code"] == "UNAUTHORIZED"

    async def test_profile_of_the_session_wallet(
        self, auth_client: httpx.AsyncClient, migrated_engine: AsyncEngine
    ) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        async with migrated_engine.begin() as conn:
            m = await make_market(conn)
            await make_order(conn, m["id"], owner=address)
        signed = await sign_in(auth_client, key)
        r = await auth_client.get("/v1/users/me", headers=signed.headers)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["address"] == address and body["authenticatedBy"] == "bearer"
        assert body["orderCount"] == 1 and body["firstActivityAt"] is not None
        public = await auth_client.get(f"/v1/users/{address}")
        assert public.status_code == 200 and public.json()["orderCount"] == 1

    async def test_minimal_contents(self, auth_client: httpx.AsyncClient) -> None:
        signed = await sign_in(auth_client, new_key())
        reveals = await auth_client.get("/v1/users/me/pending-reveals", headers=signed.headers)
        assert reveals.json() == {"reveals": [], "pagination": {"limit": 50, "nextCursor": None}}
        summary = await auth_client.get("/v1/referrals/me/summary", headers=signed.headers)
        assert summary.json() == {
            "address": signed.address,
            "code": None,
            "referredCount": 0,
            "activeReferredCount": 0,
        }


class TestAddressScoped:
    @pytest.mark.parametrize(
        "template", ["/v1/users/{a}/pending-reveals", "/v1/referrals/{a}/summary"]
    )
    async def test_own_works_other_is_404(self, make_client: ClientFactory, template: str) -> None:
        async with make_client() as client:
            mine = await sign_in(client, new_key())
            other, _ = wallet_of(new_key())
            own = await client.get(template.format(a=mine.address), headers=mine.headers)
            assert own.status_code == 200
            foreign = await client.get(template.format(a=other), headers=mine.headers)
            assert foreign.status_code == 404 and foreign.json()["code"] == "NOT_FOUND"

    async def test_groupless_with_suffix_is_own(self, make_client: ClientFactory) -> None:
        async with make_client() as client:
            key = new_key()
            signed = await sign_in(client, key, key_type="gl-secp256k1")
            r = await client.get(
                f"/v1/users/{signed.address}:1/pending-reveals", headers=signed.headers
            )
            assert r.status_code == 200

    async def test_public_profile_of_unknown_wallet(self, auth_client: httpx.AsyncClient) -> None:
        address, _ = wallet_of(new_key())
        r = await auth_client.get(f"/v1/users/{address}")
        assert r.status_code == 200
        assert r.json()["orderCount"] == 0 and r.json()["lastActivityAt"] is None
        bad = await auth_client.get("/v1/users/" + "1" * 40)
        assert bad.status_code == 400
