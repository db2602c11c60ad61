"""Wallet sign-in with the official SDK as the wallet: ``PrivateKeyWallet.signMessage`` with the
``alephium`` message hasher signs the challenge, for a default and a groupless key, and the
session it opens works (cookie and bearer), then logs out.

The SDK runs in the node oracle (``js/oracle.js``); the service is the real app in process on a
migrated database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from predmarket.alephium.signing import generate_private_key
from predmarket.app import create_app
from predmarket.settings import IndexerSettings, Settings

pytestmark = [pytest.mark.interop, pytest.mark.db]


@pytest.fixture
async def api(tmp_path: Path, migrated_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=migrated_url,
        node_url="http://127.0.0.1:9",
        demo=False,
        indexer=IndexerSettings(enabled=False),
        secret_key="test-secret-not-for-production-0123456789",
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


def sdk_sign(oracle: Any, private_key: str, key_type: str, message: str) -> dict[str, str]:
    return oracle.ok(
        "signMessage", message=message, hasher="alephium", privateKey=private_key, keyType=key_type
    )


@pytest.mark.parametrize("bearer", [True, False])
@pytest.mark.parametrize(
    ("key_type", "with_group"),
    [("default", False), ("gl-secp256k1", False), ("gl-secp256k1", True)],
)
async def test_sdk_signed_sign_in(
    oracle: Any, api: httpx.AsyncClient, key_type: str, bearer: bool, with_group: bool
) -> None:
    private_key = generate_private_key().hex()
    account = oracle.ok("address", privateKey=private_key, keyType=key_type)
    address = account["address"] + (":0" if with_group else "")
    assert address[0] == ("1" if key_type == "default" else "3")

    issued = await api.post("/v1/auth/challenge", json={"address": address})
    assert issued.status_code == 200
    text = issued.json()["challenge"]
    signed = sdk_sign(oracle, private_key, key_type, text)
    body = {
        "address": address,
        "publicKey": signed["publicKey"],
        "signature": signed["signature"],
        "keyType": key_type,
        "issueToken": bearer,
    }
    opened = await api.post("/v1/auth/session", json=body)
    assert opened.status_code == 200, opened.text
    session = opened.json()
    headers = (
        {"authorization": f"Bearer {session['token']}"}
        if bearer
        else {"x-csrf-token": session["csrfToken"]}
    )
    me = await api.get("/v1/users/me", headers=headers)
    assert me.status_code == 200, me.text
    assert me.json()["address"] == account["address"]
    # the same signature again: the challenge is spent
    replay = await api.post("/v1/auth/session", json=body)
    assert replay.status_code == 401 and replay.json()["code"] == "CHALLENGE_EXPIRED"
    out = await api.post("/v1/auth/logout", headers=headers)
    assert out.status_code == 204
    assert (await api.get("/v1/users/me", headers=headers)).status_code == 401


@pytest.mark.parametrize("key_type", ["default", "gl-secp256k1"])
async def test_sdk_signature_over_trimmed_text_is_refused(
    oracle: Any, api: httpx.AsyncClient, key_type: str
) -> None:
    private_key = generate_private_key().hex()
    account = oracle.ok("address", privateKey=private_key, keyType=key_type)
    issued = await api.post("/v1/auth/challenge", json={"address": account["address"]})
    text = issued.json()["challenge"]
    for message, hasher in ((text.strip().replace("\n", " "), "alephium"), (text, "blake2b")):
        signed = oracle.ok(
            "signMessage", message=message, hasher=hasher, privateKey=private_key, keyType=key_type
        )
        r = await api.post(
            "/v1/auth/session",
            json={
                "address": account["address"],
                "publicKey": signed["publicKey"],
                "signature": signed["signature"],
                "keyType": key_type,
                "challenge": text,
            },
        )
        assert r.status_code == 401 and r.json()["code"] == "INVALID_SIGNATURE"


async def test_sdk_verifies_what_our_helpers_sign(oracle: Any) -> None:
    """The reverse direction: the service's signer is what the SDK's verifier accepts."""
    from predmarket.alephium.signing import public_key_from_private, sign_message

    key = generate_private_key()
    text = "predmarket wants you to sign in with your wallet.\n\nNonce: 00\n"
    result = oracle.ok(
        "verifyMessage",
        message=text,
        hasher="alephium",
        publicKey=public_key_from_private(key).hex(),
        signature=sign_message(key, text),
        keyType="default",
    )
    assert result["valid"] is True
