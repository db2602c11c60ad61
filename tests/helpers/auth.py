"""Signing in over HTTP with a real key: ``await sign_in(client, private_key)``.

The whole wallet flow, as a client does it: ask for a challenge, sign its exact text with the
``alephium`` message hasher, exchange it for a session. Bearer mode (the default) returns headers
carrying the token; cookie mode leaves ``svc_session`` in the client's cookie jar and returns
headers carrying the CSRF token (send them on mutating requests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
from fastapi import FastAPI

from predmarket.alephium.address import address_from_public_key
from predmarket.alephium.signing import (
    generate_private_key,
    public_key_from_private,
    sign_message,
)
from predmarket.settings import IndexerSettings, Settings

KeyType = Literal["default", "gl-secp256k1"]
TEST_SECRET = "test-secret-not-for-production-0123456789"
#: ``async with make_client() as client``: another client of one app, with its own cookie jar.
ClientFactory = Callable[[], AbstractAsyncContextManager[httpx.AsyncClient]]


def settings_for(url: str, data_dir: Path, **overrides: object) -> Settings:
    """Settings of an app on the database ``url`` with no reachable node and no indexer."""
    values: dict[str, object] = {
        "data_dir": data_dir,
        "database_url": url,
        "node_url": "http://127.0.0.1:9",  # nothing listens there
        "demo": False,
        "indexer": IndexerSettings(enabled=False),
        "secret_key": TEST_SECRET,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


def client_of(app: FastAPI, base_url: str = "http://testserver") -> httpx.AsyncClient:
    """An in-process client of ``app`` (run its lifespan around it)."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url=base_url)


@dataclass(frozen=True)
class SignedIn:
    address: str
    key_type: KeyType
    public_key: str
    session_id: str
    mode: Literal["cookie", "bearer"]
    token: str | None
    csrf_token: str | None
    cookie: str | None
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, object] = field(default_factory=dict)


def wallet_of(private_key: bytes, key_type: KeyType = "default") -> tuple[str, str]:
    """``(address, public key hex)`` of a key; groupless addresses without ``:N``."""
    public_key = public_key_from_private(private_key)
    return address_from_public_key(public_key, key_type), public_key.hex()


def new_key() -> bytes:
    return generate_private_key()


async def challenge(client: httpx.AsyncClient, address: str | None) -> dict[str, str]:
    body = {} if address is None else {"address": address}
    response = await client.post("/v1/auth/challenge", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, str] = response.json()
    return data


def _session_request(
    address: str, public_key: str, key_type: str, signature: str, bearer: bool
) -> dict[str, object]:
    return {
        "address": address,
        "publicKey": public_key,
        "signature": signature,
        "keyType": key_type,
        "issueToken": bearer,
    }


def _signed_in(response: httpx.Response, address: str, key_type: KeyType) -> SignedIn:
    assert response.status_code == 200, response.text
    body = response.json()
    bearer = body["mode"] == "bearer"
    if bearer:
        headers = {"authorization": f"Bearer {body['token']}"}
    else:
        headers = {"x-csrf-token": body["csrfToken"]}
    return SignedIn(
        address=address,
        key_type=key_type,
        public_key=str(body.get("publicKey", "")),
        session_id=body["sessionId"],
        mode=body["mode"],
        token=body["token"],
        csrf_token=body["csrfToken"],
        cookie=response.cookies.get("svc_session"),
        headers=headers,
        body=body,
    )


async def sign_in(
    client: httpx.AsyncClient,
    private_key: bytes,
    *,
    key_type: KeyType = "default",
    bearer: bool = True,
    address: str | None = None,
) -> SignedIn:
    """Sign in as the wallet of ``private_key``; ``address`` overrides the derived address (e.g.
    a ``3…:N`` form). Asserts that each step succeeds."""
    derived, public_key = wallet_of(private_key, key_type)
    address = address or derived
    issued = await challenge(client, address)
    signature = sign_message(private_key, issued["challenge"])
    response = await client.post(
        "/v1/auth/session",
        json=_session_request(address, public_key, key_type, signature, bearer),
    )
    signed = _signed_in(response, address, key_type)
    return SignedIn(**{**signed.__dict__, "public_key": public_key})


def sign_in_sync(
    client: httpx.Client,
    *,
    address: str,
    public_key: str,
    key_type: KeyType,
    sign: Callable[[str], str],
    bearer: bool = True,
) -> SignedIn:
    """The same flow over a synchronous client, with any signer (``sign(text) -> signature``,
    e.g. the official SDK's ``signMessage``)."""
    issued = client.post("/v1/auth/challenge", json={"address": address})
    assert issued.status_code == 200, issued.text
    signature = sign(issued.json()["challenge"])
    response = client.post(
        "/v1/auth/session",
        json=_session_request(address, public_key, key_type, signature, bearer),
    )
    signed = _signed_in(response, address, key_type)
    return SignedIn(**{**signed.__dict__, "public_key": public_key})


#: What a signer lookup returns: the private key, its key type and the address to sign in as.
SignerKey = tuple[bytes, KeyType, str]


def auto_sign_in(
    client: httpx.AsyncClient, lookup: Callable[[str], SignerKey | None]
) -> httpx.AsyncClient:
    """Make ``client`` sign in before each ``/v1/tx/*`` request that carries no Authorization
    header: as the wallet the body's ``signerAddress`` names when ``lookup`` knows its key, else as
    a wallet of its own (the request then tests something other than its signer). Sessions are
    real bearer sessions, opened once per wallet and reused."""
    tokens: dict[tuple[bytes, str], str] = {}
    fallback = new_key()

    async def hook(request: httpx.Request) -> None:
        if not request.url.path.startswith("/v1/tx/") or "authorization" in request.headers:
            return
        signer: object = None
        try:
            parsed = json.loads(request.content or b"null")
            signer = parsed.get("signerAddress") if isinstance(parsed, dict) else None
        except ValueError:
            pass
        found = lookup(signer) if isinstance(signer, str) else None
        key, key_type, address = found or (fallback, "default", wallet_of(fallback)[0])
        token = tokens.get((key, address))
        if token is None:
            signed = await sign_in(client, key, key_type=key_type, address=address)
            assert signed.token is not None
            token = tokens[(key, address)] = signed.token
        request.headers["authorization"] = f"Bearer {token}"

    client.event_hooks["request"].append(hook)
    return client
