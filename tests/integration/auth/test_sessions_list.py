"""GET /v1/auth/sessions: the wallet's 100 most recent sessions, never a secret."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import ClientFactory, new_key, sign_in, wallet_of
from predmarket.store.tables.auth import auth_session

pytestmark = pytest.mark.db

FIELDS = {"id", "mode", "createdAt", "lastSeenAt", "expiresAt", "revokedAt", "current"}


class TestListSessions:
    async def test_anonymous_is_401(self, auth_client: httpx.AsyncClient) -> None:
        response = await auth_client.get("/v1/auth/sessions")
        assert response.status_code == 401 and response.json()["code"] == "UNAUTHORIZED"

    async def test_rows_and_no_secrets(
        self, make_client: ClientFactory, migrated_engine: AsyncEngine
    ) -> None:
        key, other = new_key(), new_key()
        async with make_client() as client:
            bearer = await sign_in(client, key)
            cookie = await sign_in(client, key, bearer=False)
            await sign_in(client, other)  # another wallet: never listed
            response = await client.get("/v1/auth/sessions", headers=bearer.headers)
        assert response.status_code == 200
        body = response.json()
        assert body["pagination"] == {"limit": 100, "nextCursor": None}
        rows = body["sessions"]
        assert [r["id"] for r in rows] == [cookie.session_id, bearer.session_id]  # newest first
        assert all(set(r) == FIELDS for r in rows)
        assert [r["current"] for r in rows] == [False, True]
        assert [r["mode"] for r in rows] == ["cookie", "bearer"]
        # none of the stored secrets, digests or token ids appears anywhere in the response
        async with migrated_engine.connect() as conn:
            stored = (
                await conn.execute(
                    select(
                        auth_session.c.token_id,
                        auth_session.c.token_digest,
                        auth_session.c.csrf_digest,
                        auth_session.c.public_key,
                    ).where(auth_session.c.wallet == wallet_of(key)[0])
                )
            ).all()
        text = response.text
        for row in stored:
            for value in row:
                if value:
                    assert value not in text
        for secret in (bearer.token, cookie.cookie, cookie.csrf_token):
            assert secret and secret not in text and secret.split("_")[-1] not in text
        assert "svc_" not in text and "digest" not in json.dumps(body).lower()

    async def test_at_most_100_most_recent(
        self, auth_client: httpx.AsyncClient, migrated_engine: AsyncEngine
    ) -> None:
        key = new_key()
        signed = await sign_in(auth_client, key)
        wallet, public_key = wallet_of(key)
        old = datetime.now(UTC) - timedelta(days=2)
        async with migrated_engine.begin() as conn:
            await conn.execute(
                insert(auth_session),
                [
                    {
                        "id": uuid.uuid4(),
                        "wallet": wallet,
                        "address": wallet,
                        "key_type": "default",
                        "public_key": public_key,
                        "mode": "bearer",
                        "token_id": f"{i:032x}",
                        "token_digest": "0" * 64,
                        "csrf_digest": None,
                        "created_at": old + timedelta(seconds=i),
                        "last_seen_at": old,
                        "expires_at": old + timedelta(days=30),
                        "max_expires_at": old + timedelta(days=30),
                    }
                    for i in range(120)
                ],
            )
        response = await auth_client.get("/v1/auth/sessions", headers=signed.headers)
        rows = response.json()["sessions"]
        assert len(rows) == 100
        assert rows[0]["id"] == signed.session_id and rows[0]["current"] is True
        created = [r["createdAt"] for r in rows]
        assert created == sorted(created, reverse=True)
