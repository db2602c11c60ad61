"""Legacy API keys: ``POST/GET /v1/auth/keys``, ``DELETE /v1/auth/keys/{keyId}`` (spec 2.7, 5.3).

Real signatures, the real app on a migrated database (SQLite, or PostgreSQL with
``PREDMARKET_TEST_DATABASE_URL``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import KeyType, challenge, new_key, sign_in, wallet_of
from predmarket.alephium.signing import sign_message
from predmarket.app import create_app
from predmarket.settings import DbSettings, LimitSettings, Settings
from predmarket.store.tables.keys import api_key

pytestmark = pytest.mark.db

#: Budgets no test here reaches: these tests are about keys, not rate limits.
HIGH_LIMITS = LimitSettings(
    anonymous_reads_per_minute=100_000,
    anonymous_writes_per_minute=100_000,
    session_reads_per_minute=100_000,
    session_writes_per_minute=100_000,
    developer_reads_per_minute=100_000,
    developer_writes_per_minute=100_000,
)
MARKET = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"


@pytest.fixture
def auth_settings(auth_settings: Settings) -> Settings:
    return auth_settings.model_copy(update={"limits": HIGH_LIMITS})


def client_of(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def mint_body(
    client: httpx.AsyncClient,
    private_key: bytes,
    *,
    key_type: KeyType = "default",
    address_less: bool = False,
    **extra: object,
) -> dict[str, object]:
    """A signed ``POST /v1/auth/keys`` body over a fresh challenge."""
    address, public_key = wallet_of(private_key, key_type)
    issued = await challenge(client, None if address_less else address)
    body: dict[str, object] = {
        "address": address,
        "publicKey": public_key,
        "signature": sign_message(private_key, issued["challenge"]),
        "keyType": key_type,
        "name": "bot",
    }
    if address_less:
        body["challenge"] = issued["challenge"]
    body.update(extra)
    return body


async def mint(client: httpx.AsyncClient, private_key: bytes, **extra: Any) -> dict[str, object]:
    response = await client.post(
        "/v1/auth/keys", json=await mint_body(client, private_key, **extra)
    )
    assert response.status_code == 201, response.text
    data: dict[str, object] = response.json()
    return data


def bearer(key: object) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


def _field(response: httpx.Response) -> str:
    field: str = response.json()["details"]["fields"][0]["field"]
    return field


class TestMint:
    @pytest.mark.parametrize("key_type", ["default", "gl-secp256k1"])
    async def test_mint_with_default_scopes(
        self, auth_client: httpx.AsyncClient, key_type: KeyType
    ) -> None:
        key = new_key()
        created = await mint(auth_client, key, key_type=key_type)
        assert set(created) == {"id", "key", "name", "scopes", "createdAt", "lastUsedAt"}
        assert created["scopes"] == ["read", "write:tx"]
        assert created["name"] == "bot"
        token = str(created["key"])
        assert token.startswith(f"svc_live_{created['id']}_")
        listed = await auth_client.get("/v1/auth/keys", headers=bearer(token))
        assert listed.status_code == 200, listed.text
        (row,) = listed.json()["keys"]
        assert row["id"] == created["id"] and "key" not in row
        assert listed.json()["pagination"] == {"limit": 50, "nextCursor": None}

    async def test_address_less_challenge(self, auth_client: httpx.AsyncClient) -> None:
        created = await mint(auth_client, new_key(), address_less=True, scopes=["read"])
        assert created["scopes"] == ["read"]

    async def test_not_idempotent(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        first = await mint(auth_client, key)
        second = await mint(auth_client, key)
        assert first["id"] != second["id"] and first["key"] != second["key"]
        listed = await auth_client.get("/v1/auth/keys", headers=bearer(second["key"]))
        assert [k["id"] for k in listed.json()["keys"]] == [second["id"], first["id"]]

    @pytest.mark.parametrize(
        ("scopes", "field"),
        [
            ([], "body.scopes"),
            (["admin"], "body.scopes"),
            (["read", "trade:place"], "body.scopes"),
            ("read", "body.scopes"),
        ],
    )
    async def test_bad_scopes(
        self, auth_client: httpx.AsyncClient, scopes: object, field: str
    ) -> None:
        body = await mint_body(auth_client, new_key(), scopes=scopes)
        response = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(response) == (400, "INVALID_REQUEST")
        assert _field(response) == field

    @pytest.mark.parametrize("name", ["", "x" * 65, "tab\there"])
    async def test_bad_name(self, auth_client: httpx.AsyncClient, name: str) -> None:
        body = await mint_body(auth_client, new_key(), name=name)
        response = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(response) == (400, "INVALID_REQUEST")
        assert _field(response) == "body.name"

    async def test_duplicate_scopes_collapse(self, auth_client: httpx.AsyncClient) -> None:
        created = await mint(auth_client, new_key(), scopes=["write:tx", "read", "read"])
        assert created["scopes"] == ["read", "write:tx"]

    async def test_unknown_field(self, auth_client: httpx.AsyncClient) -> None:
        body = await mint_body(auth_client, new_key(), issueToken=True)
        response = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(response) == (400, "INVALID_REQUEST")
        assert _field(response) == "body.issueToken"

    async def test_reused_challenge(self, auth_client: httpx.AsyncClient) -> None:
        body = await mint_body(auth_client, new_key())
        assert (await auth_client.post("/v1/auth/keys", json=body)).status_code == 201
        again = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(again) == (401, "CHALLENGE_EXPIRED")

    async def test_concurrent_mints_with_one_challenge(
        self, auth_client: httpx.AsyncClient
    ) -> None:
        body = await mint_body(auth_client, new_key(), address_less=True)
        results = await asyncio.gather(
            *(auth_client.post("/v1/auth/keys", json=body) for _ in range(2))
        )
        statuses = sorted(r.status_code for r in results)
        assert statuses == [201, 401], [r.text for r in results]

    async def test_expired_challenge(
        self, auth_app: FastAPI, auth_client: httpx.AsyncClient
    ) -> None:
        body = await mint_body(auth_client, new_key())
        auth_app.state.clock = lambda: datetime.now(UTC) + timedelta(minutes=5, seconds=1)
        try:
            response = await auth_client.post("/v1/auth/keys", json=body)
        finally:
            del auth_app.state.clock
        assert _error(response) == (401, "CHALLENGE_EXPIRED")

    async def test_signature_of_another_key(self, auth_client: httpx.AsyncClient) -> None:
        key, other = new_key(), new_key()
        body = await mint_body(auth_client, key)
        issued = await challenge(auth_client, str(body["address"]))
        body["signature"] = sign_message(other, issued["challenge"])
        response = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(response) == (401, "INVALID_SIGNATURE")

    async def test_signature_over_trimmed_text(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        address, public_key = wallet_of(key)
        issued = await challenge(auth_client, address)
        body = {
            "address": address,
            "publicKey": public_key,
            "signature": sign_message(key, issued["challenge"].strip() + " "),
            "name": "bot",
        }
        response = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(response) == (401, "INVALID_SIGNATURE")

    async def test_public_key_of_another_wallet(self, auth_client: httpx.AsyncClient) -> None:
        body = await mint_body(auth_client, new_key())
        body["publicKey"] = wallet_of(new_key())[1]
        response = await auth_client.post("/v1/auth/keys", json=body)
        assert _error(response) == (400, "INVALID_REQUEST")
        assert _field(response) == "body.publicKey"


class TestUse:
    async def test_scopes_gate_reads_and_builds(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        read_only = (await mint(auth_client, key, scopes=["read"]))["key"]
        write_only = (await mint(auth_client, key, scopes=["write:tx"]))["key"]
        # reads need `read`
        ok = await auth_client.get("/v1/protocol/config", headers=bearer(read_only))
        assert ok.status_code != 403
        denied = await auth_client.get("/v1/markets", headers=bearer(write_only))
        assert _error(denied) == (403, "INSUFFICIENT_SCOPE")
        assert denied.json()["details"]["requiredScope"] == "read"
        # builds need `write:tx`
        address, public_key = wallet_of(key)
        order = {
            "signerAddress": address,
            "signerPublicKey": public_key,
            "side": "buy",
            "outcome": "yes",
            "price": 500,
            "quantity": "10000000",
        }
        path = f"/v1/tx/markets/{MARKET}/orders"
        denied = await auth_client.post(path, json=order, headers=bearer(read_only))
        assert _error(denied) == (403, "INSUFFICIENT_SCOPE")
        assert denied.json()["details"]["requiredScope"] == "write:tx"
        allowed = await auth_client.post(path, json=order, headers=bearer(write_only))
        assert allowed.status_code not in (401, 403), allowed.text

    async def test_a_key_is_no_session(self, auth_client: httpx.AsyncClient) -> None:
        token = (await mint(auth_client, new_key()))["key"]
        response = await auth_client.post(
            "/v1/developer/keys", json={"name": "x"}, headers=bearer(token)
        )
        assert _error(response) == (403, "INSUFFICIENT_SCOPE")
        assert response.json()["details"]["requiredCredential"] == "session"

    @pytest.mark.parametrize(
        "token",
        [
            "svc_live_",
            "svc_live_" + "0" * 32 + "_" + "A" * 43,
            "svc_live_nothex",
        ],
    )
    async def test_unknown_or_malformed_key(
        self, auth_client: httpx.AsyncClient, token: str
    ) -> None:
        response = await auth_client.get("/v1/markets", headers=bearer(token))
        assert _error(response) == (401, "UNAUTHORIZED")

    async def test_wrong_secret_of_a_real_id(self, auth_client: httpx.AsyncClient) -> None:
        created = await mint(auth_client, new_key())
        forged = f"svc_live_{created['id']}_" + "A" * 43
        response = await auth_client.get("/v1/auth/keys", headers=bearer(forged))
        assert _error(response) == (401, "UNAUTHORIZED")

    async def test_key_in_the_url_is_refused(self, auth_client: httpx.AsyncClient) -> None:
        token = (await mint(auth_client, new_key()))["key"]
        response = await auth_client.get("/v1/auth/keys", params={"apiKey": str(token)})
        assert _error(response) == (400, "INVALID_REQUEST")
        assert _field(response) == "query.apiKey"

    async def test_anonymous_list_is_401(self, auth_client: httpx.AsyncClient) -> None:
        assert _error(await auth_client.get("/v1/auth/keys")) == (401, "UNAUTHORIZED")

    async def test_a_session_lists_the_wallets_keys(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        created = await mint(auth_client, key)
        await mint(auth_client, new_key())  # another wallet's
        session = await sign_in(auth_client, key)
        listed = await auth_client.get("/v1/auth/keys", headers=session.headers)
        assert [k["id"] for k in listed.json()["keys"]] == [created["id"]]

    async def test_groupless_wallet_with_and_without_suffix(
        self, auth_client: httpx.AsyncClient
    ) -> None:
        key = new_key()
        bare, public_key = wallet_of(key, "gl-secp256k1")
        issued = await challenge(auth_client, f"{bare}:1")
        body = {
            "address": f"{bare}:1",
            "publicKey": public_key,
            "signature": sign_message(key, issued["challenge"]),
            "keyType": "gl-secp256k1",
            "name": "bot",
        }
        created = await auth_client.post("/v1/auth/keys", json=body)
        assert created.status_code == 201, created.text
        session = await sign_in(auth_client, key, key_type="gl-secp256k1")
        listed = await auth_client.get("/v1/auth/keys", headers=session.headers)
        assert [k["id"] for k in listed.json()["keys"]] == [created.json()["id"]]

    async def test_paging(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        ids = [(await mint(auth_client, key))["id"] for _ in range(3)]
        headers = bearer((await mint(auth_client, key))["key"])
        seen: list[object] = []
        cursor = None
        while True:
            params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
            page = (await auth_client.get("/v1/auth/keys", params=params, headers=headers)).json()
            seen += [k["id"] for k in page["keys"]]
            cursor = page["pagination"]["nextCursor"]
            if cursor is None:
                break
        assert seen[1:] == ids[::-1] and len(seen) == 4


class TestDelete:
    async def test_revoked_key_is_401_at_once(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        keep = await mint(auth_client, key)
        doomed = await mint(auth_client, key)
        response = await auth_client.delete(
            f"/v1/auth/keys/{doomed['id']}", headers=bearer(keep["key"])
        )
        assert response.status_code == 204
        after = await auth_client.get("/v1/auth/keys", headers=bearer(doomed["key"]))
        assert _error(after) == (401, "UNAUTHORIZED")
        listed = await auth_client.get("/v1/auth/keys", headers=bearer(keep["key"]))
        assert [k["id"] for k in listed.json()["keys"]] == [keep["id"]]
        again = await auth_client.delete(
            f"/v1/auth/keys/{doomed['id']}", headers=bearer(keep["key"])
        )
        assert _error(again) == (404, "NOT_FOUND")

    async def test_a_key_may_revoke_itself(self, auth_client: httpx.AsyncClient) -> None:
        created = await mint(auth_client, new_key(), scopes=["read"])
        response = await auth_client.delete(
            f"/v1/auth/keys/{created['id']}", headers=bearer(created["key"])
        )
        assert response.status_code == 204
        after = await auth_client.get("/v1/markets", headers=bearer(created["key"]))
        assert _error(after) == (401, "UNAUTHORIZED")

    async def test_enumeration_safe(self, auth_client: httpx.AsyncClient) -> None:
        mine = await mint(auth_client, new_key())
        theirs = await mint(auth_client, new_key())
        for key_id in (theirs["id"], "0" * 32, "nope"):
            response = await auth_client.delete(
                f"/v1/auth/keys/{key_id}", headers=bearer(mine["key"])
            )
            assert _error(response) == (404, "NOT_FOUND")
            assert response.json()["message"] == "API key not found"
        still = await auth_client.get("/v1/auth/keys", headers=bearer(theirs["key"]))
        assert still.status_code == 200

    async def test_cookie_session_needs_csrf(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        created = await mint(auth_client, key)
        session = await sign_in(auth_client, key, bearer=False)
        path = f"/v1/auth/keys/{created['id']}"
        for headers in ({}, {"x-csrf-token": "svc_csrf_wrong"}):
            response = await auth_client.delete(path, headers=headers)
            assert _error(response) == (403, "CSRF_FAILED")
        response = await auth_client.delete(path, headers=session.headers)
        assert response.status_code == 204

    async def test_revocation_survives_a_restart(
        self, auth_settings: Settings, auth_client: httpx.AsyncClient
    ) -> None:
        created = await mint(auth_client, new_key())
        await auth_client.delete(f"/v1/auth/keys/{created['id']}", headers=bearer(created["key"]))
        app = create_app(auth_settings)
        async with app.router.lifespan_context(app), client_of(app) as fresh:
            response = await fresh.get("/v1/markets", headers=bearer(created["key"]))
        assert _error(response) == (401, "UNAUTHORIZED")


class TestSecrets:
    async def test_stored_only_as_a_digest(
        self, auth_client: httpx.AsyncClient, migrated_engine: AsyncEngine
    ) -> None:
        created = await mint(auth_client, new_key())
        token = str(created["key"])
        secret = token.rsplit("_", 1)[1]
        async with migrated_engine.connect() as conn:
            row = (
                (await conn.execute(select(api_key).where(api_key.c.id == created["id"])))
                .mappings()
                .one()
            )
        assert row["secret_digest"] == hashlib.sha256(secret.encode()).hexdigest()
        for value in row.values():
            assert secret not in str(value)
        listed = await auth_client.get("/v1/auth/keys", headers=bearer(token))
        assert secret not in listed.text and row["secret_digest"] not in listed.text

    async def test_no_key_in_any_log_record(
        self, auth_settings: Settings, caplog: pytest.LogCaptureFixture
    ) -> None:
        # SQL echo on: statements and their bound parameters are logged too.
        app = create_app(auth_settings.model_copy(update={"db": DbSettings(echo=True)}))
        caplog.set_level(logging.DEBUG)
        async with app.router.lifespan_context(app), client_of(app) as client:
            created = await mint(client, new_key())
            token = str(created["key"])
            secret = token.rsplit("_", 1)[1]
            await client.get("/v1/auth/keys", headers=bearer(token))
            await client.get("/v1/markets", headers=bearer(token + "x"))
            await client.get("/v1/auth/keys", params={"k": token})
            await client.delete(f"/v1/auth/keys/{created['id']}", headers=bearer(token))
            await client.get("/v1/auth/keys", headers=bearer(token))
        # httpx's records are the test client's own (it logs the URL it requested).
        records = [r for r in caplog.records if not r.name.startswith("httpx")]
        assert any(r.name.startswith("sqlalchemy.engine") for r in records)
        for record in records:
            text = record.getMessage() + repr(record.args) + repr(record.__dict__)
            assert secret not in text, record
