"""Who may build: every ``/v1/tx/*`` route needs the signer's own wallet credential (spec 5.2.7).

The checks run before anything else, so the service points at a dead node: a request that
passes them goes on to the build (a 502 for the place: no node; a 404 for the cancel: no such
order), one that fails them is a 401 / 403.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tx_harness import ClientFactory, CreatedMarket, Wallet

from helpers.auth import sign_in
from predmarket.alephium.address import KeyType

pytestmark = pytest.mark.db


def passed(response: httpx.Response) -> bool:
    """The auth checks passed: the build went on and met the dead node or the missing order."""
    return response.status_code in (404, 502)


def place_path(created: CreatedMarket) -> str:
    return f"/v1/tx/markets/{created.address}/orders"


def cancel_path(created: CreatedMarket) -> str:
    return f"/v1/tx/markets/{created.address}/orders/1"


def code(response: httpx.Response) -> str:
    value: str = response.json()["code"]
    return value


async def both_routes(
    client: httpx.AsyncClient, created: CreatedMarket, wallet: Wallet, headers: dict[str, str]
) -> list[httpx.Response]:
    place = await client.post(
        place_path(created), json=wallet.order("buy", "yes", 500, 10**18), headers=headers
    )
    cancel = await client.request(
        "DELETE", cancel_path(created), json=wallet.signer(), headers=headers
    )
    return [place, cancel]


class TestAnonymous:
    async def test_401_before_anything_else(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        async with service(dead_node, sign_in=False) as client:
            for r in await both_routes(client, created, Wallet.generate(), {}):
                assert r.status_code == 401 and code(r) == "UNAUTHORIZED", r.text
            # even a malformed body: the credential is checked first
            r = await client.post(place_path(created), json={"side": "up"})
            assert r.status_code == 401

    async def test_invalid_token(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        bogus = {"authorization": "Bearer svc_sess_" + "0" * 32 + "_" + "A" * 43}
        async with service(dead_node, sign_in=False) as client:
            for r in await both_routes(client, created, Wallet.generate(), bogus):
                assert r.status_code == 401, r.text


class TestSigner:
    async def test_another_wallets_signer_is_403(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        me, other = Wallet.generate(), Wallet.generate()
        async with service(dead_node, sign_in=False) as client:
            session = await sign_in(client, me.private_key)
            for r in await both_routes(client, created, other, session.headers):
                assert r.status_code == 403 and code(r) == "SIGNER_MISMATCH", r.text
                assert r.json()["details"]["field"] == "body.signerAddress"
            for r in await both_routes(client, created, me, session.headers):
                assert passed(r), r.text

    @pytest.mark.parametrize("signed_in_with_group", [True, False])
    @pytest.mark.parametrize("builds_with_group", [True, False])
    async def test_groupless_with_and_without_group_suffix_is_one_wallet(
        self,
        service: ClientFactory,
        dead_node: str,
        listed: tuple[CreatedMarket, int],
        signed_in_with_group: bool,
        builds_with_group: bool,
    ) -> None:
        created, _ = listed
        key = Wallet.generate(KeyType.GL_SECP256K1).private_key
        signer = Wallet(key, KeyType.GL_SECP256K1, 0, builds_with_group)
        session_address = Wallet(key, KeyType.GL_SECP256K1, 0, signed_in_with_group)
        async with service(dead_node, sign_in=False) as client:
            session = await sign_in(
                client,
                key,
                key_type="gl-secp256k1",
                address=session_address.signer_address,
            )
            for r in await both_routes(client, created, signer, session.headers):
                assert passed(r), r.text


class TestCookieSession:
    async def test_csrf_is_required_and_bearer_is_exempt(
        self, service: ClientFactory, dead_node: str, listed: tuple[CreatedMarket, int]
    ) -> None:
        created, _ = listed
        wallet = Wallet.generate()
        async with service(dead_node, sign_in=False) as client:
            cookie = await sign_in(client, wallet.private_key, bearer=False)
            assert client.cookies.get("svc_session")
            wrong: dict[str, Any] = {"x-csrf-token": "svc_csrf_" + "0" * 32 + "_" + "B" * 43}
            for headers in ({}, wrong):
                for r in await both_routes(client, created, wallet, headers):
                    assert r.status_code == 403 and code(r) == "CSRF_FAILED", r.text
            for r in await both_routes(client, created, wallet, cookie.headers):
                assert passed(r), r.text
            # a bearer session of the same wallet needs no CSRF token, even beside the cookie
            bearer = await sign_in(client, wallet.private_key, bearer=True)
            for r in await both_routes(client, created, wallet, bearer.headers):
                assert passed(r), r.text
