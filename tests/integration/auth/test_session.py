"""POST /v1/auth/session: the exchange of a signed challenge for a session (spec 3.1, 5.2)."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import challenge, new_key, sign_in, wallet_of
from predmarket.alephium.signing import MessageHasher, sign_hash, sign_message
from predmarket.store.tables.auth import auth_session

pytestmark = pytest.mark.db


def _session_body(
    private_key: bytes,
    text: str,
    *,
    key_type: str = "default",
    address: str | None = None,
    **extra: object,
) -> dict[str, object]:
    derived, public_key = wallet_of(private_key, key_type)  # type: ignore[arg-type]
    return {
        "address": address or derived,
        "publicKey": public_key,
        "signature": sign_message(private_key, text),
        "keyType": key_type,
        **extra,
    }


def _code(response: httpx.Response) -> str:
    code: str = response.json()["code"]
    return code


def _field(response: httpx.Response) -> str:
    field: str = response.json()["details"]["fields"][0]["field"]
    return field


class TestBearer:
    @pytest.mark.parametrize("key_type", ["default", "gl-secp256k1"])
    async def test_bearer_session_authenticates(
        self, auth_client: httpx.AsyncClient, key_type: str
    ) -> None:
        key = new_key()
        signed = await sign_in(auth_client, key, key_type=key_type, bearer=True)  # type: ignore[arg-type]
        assert signed.mode == "bearer"
        assert signed.token is not None and signed.token.startswith("svc_sess_")
        assert signed.csrf_token is None
        assert signed.cookie is None  # bearer mode sets no cookie
        expires = datetime.fromisoformat(str(signed.body["expiresAt"]).replace("Z", "+00:00"))
        assert timedelta(days=29, hours=23) < expires - datetime.now(UTC) <= timedelta(days=30)
        listed = await auth_client.get("/v1/auth/sessions", headers=signed.headers)
        assert listed.status_code == 200, listed.text
        (row,) = listed.json()["sessions"]
        assert row["id"] == signed.session_id and row["current"] is True
        assert row["mode"] == "bearer"

    async def test_groupless_with_group_suffix(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        bare, _ = wallet_of(key, "gl-secp256k1")
        signed = await sign_in(auth_client, key, key_type="gl-secp256k1", address=f"{bare}:2")
        assert signed.address == f"{bare}:2"
        # one wallet: the session of "3…:2" lists with a sign-in as the bare "3…"
        other = await sign_in(auth_client, key, key_type="gl-secp256k1")
        listed = await auth_client.get("/v1/auth/sessions", headers=other.headers)
        assert {r["id"] for r in listed.json()["sessions"]} == {
            signed.session_id,
            other.session_id,
        }


class TestCookie:
    async def test_cookie_session(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        issued = await challenge(auth_client, address)
        response = await auth_client.post(
            "/v1/auth/session", json=_session_body(key, issued["challenge"])
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["mode"] == "cookie" and body["token"] is None
        assert body["csrfToken"].startswith("svc_csrf_")
        set_cookie = response.headers["set-cookie"]
        assert set_cookie.startswith("svc_session=svc_sess_")
        lowered = set_cookie.lower()
        assert "httponly" in lowered and "samesite=lax" in lowered and "path=/" in lowered
        assert "max-age=604800" in lowered  # seven idle days
        assert "secure" not in lowered  # plain http, not configured
        # the jar now holds the cookie: reads need nothing else
        listed = await auth_client.get("/v1/auth/sessions")
        assert listed.status_code == 200
        assert listed.json()["sessions"][0]["current"] is True


class TestRejections:
    async def test_reused_challenge(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        text = (await challenge(auth_client, address))["challenge"]
        body = _session_body(key, text, challenge=text, issueToken=True)
        first = await auth_client.post("/v1/auth/session", json=body)
        assert first.status_code == 200
        again = await auth_client.post("/v1/auth/session", json=body)
        assert again.status_code == 401 and _code(again) == "CHALLENGE_EXPIRED"

    async def test_concurrent_exchanges_one_wins(self, make_client) -> None:  # type: ignore[no-untyped-def]
        key = new_key()
        async with make_client() as a, make_client() as b:
            address, _ = wallet_of(key)
            text = (await challenge(a, address))["challenge"]
            body = _session_body(key, text, challenge=text, issueToken=True)
            results = await asyncio.gather(
                *(c.post("/v1/auth/session", json=body) for c in (a, b, a, b))
            )
        statuses = sorted(r.status_code for r in results)
        assert statuses == [200, 401, 401, 401], [r.text for r in results]
        assert all(_code(r) == "CHALLENGE_EXPIRED" for r in results if r.status_code == 401)

    async def test_trimmed_text_signature(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        text = (await challenge(auth_client, address))["challenge"]
        body = _session_body(key, text)
        body["signature"] = sign_message(key, text.strip() + "\n")
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 401 and _code(response) == "INVALID_SIGNATURE"

    @pytest.mark.parametrize("hasher", [MessageHasher.BLAKE2B, MessageHasher.SHA256])
    async def test_other_hashers_rejected(
        self, auth_client: httpx.AsyncClient, hasher: MessageHasher
    ) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        text = (await challenge(auth_client, address))["challenge"]
        body = _session_body(key, text)
        body["signature"] = sign_message(key, text, hasher)
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 401 and _code(response) == "INVALID_SIGNATURE"

    async def test_raw_bytes_signature_rejected(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        text = (await challenge(auth_client, address))["challenge"]
        body = _session_body(key, text)
        # "signing raw bytes": the text's bytes padded to a 32-byte value, no hasher at all
        body["signature"] = sign_hash(key, text.encode()[:32].ljust(32, b"\0"))
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 401 and _code(response) == "INVALID_SIGNATURE"

    async def test_signature_by_another_wallet(self, auth_client: httpx.AsyncClient) -> None:
        victim, attacker = new_key(), new_key()
        victim_address, _ = wallet_of(victim)
        text = (await challenge(auth_client, victim_address))["challenge"]
        # the attacker signs the victim's challenge and claims their own address
        body = _session_body(attacker, text, challenge=text)
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 401 and _code(response) == "INVALID_SIGNATURE"
        # or claims the victim's address with their own key: the key does not derive it
        body = _session_body(attacker, text, challenge=text, address=victim_address)
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 400 and _field(response) == "body.publicKey"
        # the challenge is still usable by its wallet
        ok = await auth_client.post(
            "/v1/auth/session", json=_session_body(victim, text, challenge=text)
        )
        assert ok.status_code == 200

    async def test_expired_challenge(
        self,
        auth_app,
        auth_client: httpx.AsyncClient,  # type: ignore[no-untyped-def]
    ) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        text = (await challenge(auth_client, address))["challenge"]
        auth_app.state.clock = lambda: datetime.now(UTC) + timedelta(seconds=301)
        response = await auth_client.post("/v1/auth/session", json=_session_body(key, text))
        assert response.status_code == 401 and _code(response) == "CHALLENGE_EXPIRED"

    async def test_unknown_challenge_text(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        text = "predmarket wants you to sign in\nNonce: 00"
        response = await auth_client.post(
            "/v1/auth/session", json=_session_body(key, text, challenge=text)
        )
        assert response.status_code == 401 and _code(response) == "CHALLENGE_EXPIRED"

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"keyType": "gl-webauthn"}, "body.keyType"),
            ({"keyType": "gl-secp256k1"}, "body.keyType"),  # a 1… address
            ({"signature": "ab" * 65}, "body.signature"),  # 65 bytes (recovery byte)
            ({"signature": "AB" * 64}, "body.signature"),  # uppercase
            ({"signature": "3044" + "02" * 34}, "body.signature"),  # DER-ish
            ({"publicKey": "04" + "11" * 64}, "body.publicKey"),  # uncompressed
            ({"publicKey": "zz"}, "body.publicKey"),
            ({"address": "not-an-address"}, "body.address"),
            ({"issueToken": "maybe"}, "body.issueToken"),
        ],
    )
    async def test_malformed(
        self, auth_client: httpx.AsyncClient, change: dict[str, object], field: str
    ) -> None:
        key = new_key()
        address, _ = wallet_of(key)
        text = (await challenge(auth_client, address))["challenge"]
        body = {**_session_body(key, text), **change}
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 400, response.text
        assert _code(response) == "INVALID_REQUEST" and _field(response) == field

    async def test_groupless_key_type_mismatch(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        address, _ = wallet_of(key, "gl-secp256k1")
        text = (await challenge(auth_client, address))["challenge"]
        body = _session_body(key, text, key_type="gl-secp256k1")
        body["keyType"] = "default"
        response = await auth_client.post("/v1/auth/session", json=body)
        assert response.status_code == 400 and _field(response) == "body.keyType"


class TestAddressless:
    async def test_any_wallet_may_sign(self, auth_client: httpx.AsyncClient) -> None:
        key = new_key()
        issued = await challenge(auth_client, None)
        assert "Wallet: any" in issued["challenge"]
        text = issued["challenge"]
        without = await auth_client.post("/v1/auth/session", json=_session_body(key, text))
        assert without.status_code == 401 and _code(without) == "CHALLENGE_EXPIRED"
        ok = await auth_client.post(
            "/v1/auth/session", json=_session_body(key, text, challenge=text, issueToken=True)
        )
        assert ok.status_code == 200, ok.text


async def test_a_session_row_holds_only_digests(
    auth_client: httpx.AsyncClient, migrated_engine: AsyncEngine
) -> None:
    """The session token's and the CSRF token's secrets are stored as SHA-256 digests only."""
    signed = await sign_in(auth_client, new_key(), bearer=False)
    bearer = await sign_in(auth_client, new_key())
    cookie_secret = str(signed.cookie).rsplit("_", 1)[1]
    csrf_secret = str(signed.csrf_token).rsplit("_", 1)[1]
    bearer_secret = str(bearer.token).rsplit("_", 1)[1]
    async with migrated_engine.connect() as conn:
        rows = {
            str(row["id"]): row
            for row in (
                await conn.execute(
                    select(auth_session).where(
                        auth_session.c.id.in_(
                            [uuid.UUID(signed.session_id), uuid.UUID(bearer.session_id)]
                        )
                    )
                )
            ).mappings()
        }
    cookie_row, bearer_row = rows[signed.session_id], rows[bearer.session_id]
    assert cookie_row["token_digest"] == hashlib.sha256(cookie_secret.encode()).hexdigest()
    assert cookie_row["csrf_digest"] == hashlib.sha256(csrf_secret.encode()).hexdigest()
    assert bearer_row["token_digest"] == hashlib.sha256(bearer_secret.encode()).hexdigest()
    assert bearer_row["csrf_digest"] is None
    for row in (cookie_row, bearer_row):
        for value in row.values():
            for secret in (cookie_secret, csrf_secret, bearer_secret):
                assert secret not in str(value)
