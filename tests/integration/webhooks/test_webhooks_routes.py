"""Webhook management: ``/v1/webhooks`` (spec 6.2; docs/webhooks.md).

A developer key with ``webhooks:manage`` manages the key owner's webhooks; ``user:`` topics
also need that wallet's session; URLs are checked against the SSRF rules.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text

from helpers.auth import new_key, sign_in
from helpers.webhooks import (
    DEV_HEADER,
    Developer,
    client_of,
    create_webhook,
    fast_webhooks,
    fills_topic,
    make_developer,
    settings_for,
)
from predmarket.app import create_app
from predmarket.store.tables.webhooks import webhook_subscription
from predmarket.webhooks import signing

pytestmark = pytest.mark.db

HOOK = "https://hooks.example.com/predmarket"


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


class TestAuthorization:
    async def test_anonymous_is_401(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/v1/webhooks")
        assert _error(response) == (401, "UNAUTHORIZED")
        assert "x-svc-developer-key" in response.json()["message"]

    async def test_a_session_alone_is_401(
        self, client: httpx.AsyncClient, developer: Developer
    ) -> None:
        response = await client.get("/v1/webhooks", headers=developer.session.headers)
        assert _error(response) == (401, "UNAUTHORIZED")

    async def test_a_key_without_the_scope_is_403(self, client: httpx.AsyncClient) -> None:
        other = await make_developer(client, scopes=["market:read"])
        response = await client.post(
            "/v1/webhooks", json={"url": HOOK, "topics": [fills_topic()]}, headers=other.headers
        )
        assert _error(response) == (403, "INSUFFICIENT_SCOPE")
        assert response.json()["details"]["requiredScope"] == "webhooks:manage"

    async def test_a_wrong_key_is_401(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/v1/webhooks", headers={DEV_HEADER: "svc_dev_" + "0" * 76})
        assert response.status_code == 401

    async def test_a_legacy_api_key_is_refused(
        self, client: httpx.AsyncClient, developer: Developer
    ) -> None:
        key = new_key()
        session = await sign_in(client, key)
        from helpers.auth import challenge, wallet_of
        from predmarket.alephium.signing import sign_message

        address, public_key = wallet_of(key)
        issued = await challenge(client, address)
        minted = await client.post(
            "/v1/auth/keys",
            json={
                "address": address,
                "publicKey": public_key,
                "signature": sign_message(key, issued["challenge"]),
                "name": "legacy",
            },
        )
        assert minted.status_code == 201, minted.text
        headers = {"authorization": f"Bearer {minted.json()['key']}", **developer.headers}
        response = await client.get("/v1/webhooks", headers=headers)
        assert _error(response) == (403, "INSUFFICIENT_SCOPE")
        assert session.address == address


class TestCreate:
    async def test_created_with_a_secret_shown_once(
        self, client: httpx.AsyncClient, developer: Developer, wh_app: FastAPI
    ) -> None:
        topic = fills_topic()
        response = await client.post(
            "/v1/webhooks",
            json={"url": HOOK, "topics": [topic, topic], "description": "fills"},
            headers=developer.headers,
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["id"].startswith("wh_") and body["secret"].startswith("whsec_")
        assert len(signing.secret_key(body["secret"])) == 32
        assert body["topics"] == [topic]
        assert body["enabled"] is True and body["description"] == "fills"
        again = await client.get(f"/v1/webhooks/{body['id']}", headers=developer.headers)
        assert again.status_code == 200
        assert "secret" not in again.json()
        assert again.json()["url"] == HOOK
        # Stored encrypted: no column holds the secret or its key bytes.
        async with wh_app.state.engine.connect() as conn:
            row = (
                (
                    await conn.execute(
                        select(webhook_subscription).where(webhook_subscription.c.id == body["id"])
                    )
                )
                .mappings()
                .one()
            )
        secret = body["secret"]
        assert all(secret.removeprefix("whsec_") not in str(v) for v in row.values())

    @pytest.mark.parametrize(
        ("topics", "status", "code"),
        [
            ([], 400, "INVALID_REQUEST"),
            (["market:nope"], 403, "realtime_topic_forbidden"),
            (["weather:today"], 403, "realtime_topic_forbidden"),
            ([f"market:2{'a' * 44}:fills{n}" for n in range(1)], 403, "realtime_topic_forbidden"),
        ],
    )
    async def test_bad_topics(
        self,
        client: httpx.AsyncClient,
        developer: Developer,
        topics: list[str],
        status: int,
        code: str,
    ) -> None:
        response = await client.post(
            "/v1/webhooks", json={"url": HOOK, "topics": topics}, headers=developer.headers
        )
        assert _error(response) == (status, code)

    async def test_too_many_topics(self, client: httpx.AsyncClient, developer: Developer) -> None:
        topics = [fills_topic() for _ in range(21)]
        response = await client.post(
            "/v1/webhooks", json={"url": HOOK, "topics": topics}, headers=developer.headers
        )
        assert _error(response) == (400, "INVALID_REQUEST")
        assert response.json()["details"]["fields"][0]["field"] == "body.topics"

    async def test_user_topics_need_the_wallets_session(
        self, client: httpx.AsyncClient, developer: Developer
    ) -> None:
        own = f"user:{developer.session.address}:fills"
        without = await client.post(
            "/v1/webhooks", json={"url": HOOK, "topics": [own]}, headers=developer.headers
        )
        assert _error(without) == (403, "realtime_topic_forbidden")
        other = await sign_in(client, new_key())
        foreign = await client.post(
            "/v1/webhooks",
            json={"url": HOOK, "topics": [f"user:{other.address}:orders"]},
            headers=developer.with_session,
        )
        assert _error(foreign) == (403, "realtime_topic_forbidden")
        allowed = await client.post(
            "/v1/webhooks", json={"url": HOOK, "topics": [own]}, headers=developer.with_session
        )
        assert allowed.status_code == 201, allowed.text

    async def test_unknown_fields_are_400(
        self, client: httpx.AsyncClient, developer: Developer
    ) -> None:
        response = await client.post(
            "/v1/webhooks",
            json={"url": HOOK, "topics": [fills_topic()], "secret": "mine"},
            headers=developer.headers,
        )
        assert _error(response) == (400, "INVALID_REQUEST")

    async def test_the_owner_limit(self, tmp_path: Path, migrated_url: str) -> None:
        settings = settings_for(
            migrated_url, tmp_path / "d", webhooks=fast_webhooks(max_per_owner=2)
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app), client_of(app) as c:
            dev = await make_developer(c)
            for _ in range(2):
                await create_webhook(c, dev, HOOK, [fills_topic()])
            response = await c.post(
                "/v1/webhooks", json={"url": HOOK, "topics": [fills_topic()]}, headers=dev.headers
            )
            assert _error(response) == (409, "WEBHOOK_LIMIT_REACHED")


class TestSsrf:
    @pytest.fixture
    async def strict(self, tmp_path: Path, migrated_url: str) -> httpx.AsyncClient:
        settings = settings_for(
            migrated_url, tmp_path / "d", webhooks=fast_webhooks(allow_private=False)
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app), client_of(app) as c:
            yield c  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("url", "reason"),
        [
            ("http://127.0.0.1:8080/x", "address_not_allowed"),
            ("http://localhost/x", "address_not_allowed"),
            ("http://169.254.169.254/latest/meta-data/", "address_not_allowed"),
            ("http://10.0.0.1/x", "address_not_allowed"),
            ("http://192.168.0.10/x", "address_not_allowed"),
            ("http://[::1]/x", "address_not_allowed"),
            ("http://[::ffff:10.0.0.1]/x", "address_not_allowed"),
            ("ftp://93.184.216.34/x", "scheme_not_allowed"),
            ("file:///etc/passwd", "scheme_not_allowed"),
            ("http://me:pw@93.184.216.34/x", "userinfo_not_allowed"),
        ],
    )
    async def test_refused_at_creation(
        self, strict: httpx.AsyncClient, url: str, reason: str
    ) -> None:
        dev = await make_developer(strict)
        response = await strict.post(
            "/v1/webhooks", json={"url": url, "topics": [fills_topic()]}, headers=dev.headers
        )
        assert _error(response) == (400, "WEBHOOK_URL_REJECTED")
        details = response.json()["details"]
        assert details["reason"] == reason
        assert details["fields"][0]["field"] == "body.url"

    async def test_refused_on_update(self, strict: httpx.AsyncClient) -> None:
        dev = await make_developer(strict)
        created = await create_webhook(strict, dev, "http://93.184.216.34/x", [fills_topic()])
        response = await strict.patch(
            f"/v1/webhooks/{created['id']}",
            json={"url": "http://169.254.169.254/"},
            headers=dev.headers,
        )
        assert _error(response) == (400, "WEBHOOK_URL_REJECTED")


class TestReadUpdateDelete:
    async def test_owners_see_only_their_own(
        self, client: httpx.AsyncClient, developer: Developer
    ) -> None:
        mine = [await create_webhook(client, developer, HOOK, [fills_topic()]) for _ in range(3)]
        other = await make_developer(client)
        theirs = await create_webhook(client, other, HOOK, [fills_topic()])
        page = await client.get("/v1/webhooks?limit=2", headers=developer.headers)
        assert page.status_code == 200
        first = page.json()
        assert [w["id"] for w in first["webhooks"]] == [mine[2]["id"], mine[1]["id"]]
        assert first["pagination"]["nextCursor"]
        rest = await client.get(
            f"/v1/webhooks?limit=2&cursor={first['pagination']['nextCursor']}",
            headers=developer.headers,
        )
        assert [w["id"] for w in rest.json()["webhooks"]] == [mine[0]["id"]]
        assert rest.json()["pagination"]["nextCursor"] is None
        for method, path in [
            ("GET", f"/v1/webhooks/{theirs['id']}"),
            ("PATCH", f"/v1/webhooks/{theirs['id']}"),
            ("DELETE", f"/v1/webhooks/{theirs['id']}"),
            ("POST", f"/v1/webhooks/{theirs['id']}/rotate-secret"),
            ("GET", f"/v1/webhooks/{theirs['id']}/deliveries"),
            ("GET", "/v1/webhooks/wh_nope"),
        ]:
            response = await client.request(
                method, path, headers=developer.headers, json={} if method == "PATCH" else None
            )
            assert _error(response) == (404, "NOT_FOUND"), (method, path)

    async def test_update_and_delete(self, client: httpx.AsyncClient, developer: Developer) -> None:
        created = await create_webhook(client, developer, HOOK, [fills_topic()])
        path = f"/v1/webhooks/{created['id']}"
        topic = fills_topic()
        response = await client.patch(
            path,
            json={"url": HOOK + "/v2", "topics": [topic], "description": "v2"},
            headers=developer.headers,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["url"], body["topics"], body["description"]) == (HOOK + "/v2", [topic], "v2")
        off = await client.patch(path, json={"enabled": False}, headers=developer.headers)
        assert off.json()["enabled"] is False
        assert off.json()["disabledReason"] == "disabled by the owner"
        on = await client.patch(path, json={"enabled": True}, headers=developer.headers)
        assert on.json()["enabled"] is True and on.json()["disabledReason"] is None
        assert (await client.delete(path, headers=developer.headers)).status_code == 204
        assert (await client.get(path, headers=developer.headers)).status_code == 404
        assert (await client.delete(path, headers=developer.headers)).status_code == 404

    async def test_rotate_secret(self, client: httpx.AsyncClient, developer: Developer) -> None:
        created = await create_webhook(client, developer, HOOK, [fills_topic()])
        response = await client.post(
            f"/v1/webhooks/{created['id']}/rotate-secret", headers=developer.headers
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["secret"].startswith("whsec_") and body["secret"] != created["secret"]
        assert body["previousSecretExpiresAt"] is not None
        assert body["secretRotatedAt"] is not None

    async def test_no_secret_in_the_database_as_text(
        self, client: httpx.AsyncClient, developer: Developer, wh_app: FastAPI
    ) -> None:
        created = await create_webhook(client, developer, HOOK, [fills_topic()])
        secret = str(created["secret"])
        async with wh_app.state.engine.connect() as conn:
            rows = (await conn.execute(text("SELECT * FROM webhook_subscription"))).all()
        assert rows and all(secret not in str(r) for r in rows)
