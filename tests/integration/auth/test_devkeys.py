"""Developer keys: ``/v1/developer/keys`` (spec 2.8, 5.4; docs/keys.md).

Created, rotated and revoked by the owner's wallet session; presented in ``x-svc-developer-key``;
never a wallet credential.
"""

from __future__ import annotations

import hashlib
import logging
import re

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import SignedIn, challenge, new_key, sign_in, wallet_of
from predmarket.alephium.signing import sign_message
from predmarket.app import create_app
from predmarket.settings import DbSettings, LimitSettings, Settings
from predmarket.store.tables.keys import developer_key, developer_key_event

pytestmark = pytest.mark.db

HEADER = "x-svc-developer-key"
HIGH_LIMITS = LimitSettings(
    anonymous_reads_per_minute=100_000,
    anonymous_writes_per_minute=100_000,
    session_reads_per_minute=100_000,
    session_writes_per_minute=100_000,
    developer_reads_per_minute=100_000,
    developer_writes_per_minute=100_000,
)
BUILDER_CODE = re.compile(r"bld_[a-z2-7]{12}")


@pytest.fixture
def auth_settings(auth_settings: Settings) -> Settings:
    return auth_settings.model_copy(update={"limits": HIGH_LIMITS})


@pytest.fixture
async def owner(auth_client: httpx.AsyncClient) -> SignedIn:
    return await sign_in(auth_client, new_key())


async def create(client: httpx.AsyncClient, session: SignedIn, **body: object) -> dict[str, object]:
    response = await client.post(
        "/v1/developer/keys", json={"name": "dash", **body}, headers=session.headers
    )
    assert response.status_code == 201, response.text
    data: dict[str, object] = response.json()
    return data


def dev(key: object) -> dict[str, str]:
    return {HEADER: str(key)}


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


class TestCreate:
    async def test_create(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        created = await create(auth_client, owner)
        assert set(created) == {
            "id",
            "key",
            "builderCode",
            "name",
            "scopes",
            "createdAt",
            "rotatedAt",
            "revokedAt",
            "lastUsedAt",
        }
        assert str(created["key"]).startswith(f"svc_dev_{created['id']}_")
        assert BUILDER_CODE.fullmatch(str(created["builderCode"]))
        assert created["scopes"] == [
            "public:read",
            "market:read",
            "realtime:public",
            "transactions:read",
        ]
        assert created["rotatedAt"] is None and created["revokedAt"] is None
        # it works at once, in its header
        ok = await auth_client.get("/v1/markets", headers=dev(created["key"]))
        assert ok.status_code == 200, ok.text

    async def test_chosen_scopes(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        created = await create(auth_client, owner, scopes=["webhooks:manage", "account:read"])
        assert created["scopes"] == ["account:read", "webhooks:manage"]

    @pytest.mark.parametrize("scopes", [[], ["read"], ["market:read", "write:tx"], "market:read"])
    async def test_bad_scopes(
        self, auth_client: httpx.AsyncClient, owner: SignedIn, scopes: object
    ) -> None:
        response = await auth_client.post(
            "/v1/developer/keys", json={"name": "x", "scopes": scopes}, headers=owner.headers
        )
        assert _error(response) == (400, "INVALID_REQUEST")
        assert response.json()["details"]["fields"][0]["field"] == "body.scopes"

    async def test_builder_codes_are_distinct(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        codes = {(await create(auth_client, owner))["builderCode"] for _ in range(5)}
        assert len(codes) == 5

    async def test_needs_a_session(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        anonymous = await auth_client.post("/v1/developer/keys", json={"name": "x"})
        assert _error(anonymous) == (401, "UNAUTHORIZED")
        key = (await create(auth_client, owner))["key"]
        with_dev_key_only = await auth_client.post(
            "/v1/developer/keys", json={"name": "x"}, headers=dev(key)
        )
        assert _error(with_dev_key_only) == (401, "UNAUTHORIZED")

    async def test_cookie_session_needs_csrf(self, auth_client: httpx.AsyncClient) -> None:
        session = await sign_in(auth_client, new_key(), bearer=False)
        response = await auth_client.post("/v1/developer/keys", json={"name": "x"})
        assert _error(response) == (403, "CSRF_FAILED")
        response = await auth_client.post(
            "/v1/developer/keys", json={"name": "x"}, headers=session.headers
        )
        assert response.status_code == 201, response.text


class TestReadAndOwnership:
    async def test_list_and_get(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        first = await create(auth_client, owner, name="one")
        second = await create(auth_client, owner, name="two")
        other = await sign_in(auth_client, new_key())
        await create(auth_client, other)
        listed = await auth_client.get("/v1/developer/keys", headers=owner.headers)
        assert listed.status_code == 200, listed.text
        keys = listed.json()["keys"]
        assert [k["id"] for k in keys] == [second["id"], first["id"]]
        assert all("key" not in k for k in keys)
        got = await auth_client.get(f"/v1/developer/keys/{first['id']}", headers=owner.headers)
        assert got.json() == {k: v for k, v in first.items() if k != "key"}

    async def test_another_wallets_key_is_404(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        theirs = await create(auth_client, owner)
        intruder = await sign_in(auth_client, new_key())
        base = f"/v1/developer/keys/{theirs['id']}"
        for method, path in [
            ("GET", base),
            ("GET", f"{base}/events"),
            ("PATCH", base),
            ("POST", f"{base}/rotate"),
            ("DELETE", base),
        ]:
            kwargs: dict[str, object] = {"json": {"name": "mine"}} if method == "PATCH" else {}
            response = await auth_client.request(
                method,
                path,
                headers=intruder.headers,
                **kwargs,  # type: ignore[arg-type]
            )
            assert _error(response) == (404, "NOT_FOUND"), (method, path)
            unknown = await auth_client.request(
                method,
                path.replace(str(theirs["id"]), "0" * 32),
                headers=intruder.headers,
                **kwargs,  # type: ignore[arg-type]
            )
            assert unknown.json()["message"] == response.json()["message"]
        still = await auth_client.get("/v1/markets", headers=dev(theirs["key"]))
        assert still.status_code == 200

    async def test_a_legacy_key_cannot_manage(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        key = new_key()
        address, public_key = wallet_of(key)
        issued = await challenge(auth_client, address)
        minted = await auth_client.post(
            "/v1/auth/keys",
            json={
                "address": address,
                "publicKey": public_key,
                "signature": sign_message(key, issued["challenge"]),
                "name": "legacy",
            },
        )
        headers = {"authorization": f"Bearer {minted.json()['key']}"}
        for method in ("GET", "POST"):
            response = await auth_client.request(
                method, "/v1/developer/keys", headers=headers, json={"name": "x"}
            )
            assert _error(response) == (403, "INSUFFICIENT_SCOPE")


class TestRotateRevoke:
    async def test_rotate_keeps_identity_and_kills_the_old_secret(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        created = await create(auth_client, owner, scopes=["market:read"])
        rotated = await auth_client.post(
            f"/v1/developer/keys/{created['id']}/rotate", headers=owner.headers
        )
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()
        assert new["id"] == created["id"] and new["builderCode"] == created["builderCode"]
        assert new["scopes"] == ["market:read"] and new["rotatedAt"] is not None
        assert new["key"] != created["key"]
        old = await auth_client.get("/v1/markets", headers=dev(created["key"]))
        assert _error(old) == (401, "UNAUTHORIZED")
        ok = await auth_client.get("/v1/markets", headers=dev(new["key"]))
        assert ok.status_code == 200

    async def test_revoke(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        created = await create(auth_client, owner)
        path = f"/v1/developer/keys/{created['id']}"
        assert (await auth_client.delete(path, headers=owner.headers)).status_code == 204
        after = await auth_client.get("/v1/markets", headers=dev(created["key"]))
        assert _error(after) == (401, "UNAUTHORIZED")
        # idempotent, and the record stays for the owner
        assert (await auth_client.delete(path, headers=owner.headers)).status_code == 204
        got = (await auth_client.get(path, headers=owner.headers)).json()
        assert got["revokedAt"] is not None and got["builderCode"] == created["builderCode"]
        rotate = await auth_client.post(f"{path}/rotate", headers=owner.headers)
        assert _error(rotate) == (409, "KEY_REVOKED")
        patch = await auth_client.patch(path, json={"name": "x"}, headers=owner.headers)
        assert _error(patch) == (409, "KEY_REVOKED")

    async def test_update_scopes_takes_effect(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        created = await create(auth_client, owner, scopes=["public:read"])
        denied = await auth_client.get("/v1/markets", headers=dev(created["key"]))
        assert _error(denied) == (403, "INSUFFICIENT_SCOPE")
        assert denied.json()["details"]["requiredScope"] == "market:read"
        patched = await auth_client.patch(
            f"/v1/developer/keys/{created['id']}",
            json={"scopes": ["public:read", "market:read"]},
            headers=owner.headers,
        )
        assert patched.status_code == 200, patched.text
        assert patched.json()["scopes"] == ["public:read", "market:read"]
        allowed = await auth_client.get("/v1/markets", headers=dev(created["key"]))
        assert allowed.status_code == 200

    async def test_the_builder_code_cannot_be_changed(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        created = await create(auth_client, owner)
        path = f"/v1/developer/keys/{created['id']}"
        refused = await auth_client.patch(
            path, json={"builderCode": "bld_0000000000000000"}, headers=owner.headers
        )
        assert _error(refused) == (400, "INVALID_REQUEST")
        assert "builderCode" in refused.text
        got = await auth_client.get(path, headers=owner.headers)
        assert got.json()["builderCode"] == created["builderCode"]


class TestAudit:
    async def test_events(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        created = await create(auth_client, owner, scopes=["public:read"])
        key_id = created["id"]
        base = f"/v1/developer/keys/{key_id}"
        headers = {**owner.headers, "x-request-id": "req-update-1"}
        await auth_client.patch(
            base, json={"name": "renamed", "scopes": ["market:read"]}, headers=headers
        )
        rotated = await auth_client.post(f"{base}/rotate", headers=owner.headers)
        await auth_client.delete(base, headers=owner.headers)
        response = await auth_client.get(f"{base}/events", headers=owner.headers)
        assert response.status_code == 200, response.text
        events = response.json()["events"]
        assert [e["event"] for e in events] == ["revoked", "rotated", "updated", "created"]
        assert {e["actor"] for e in events} == {owner.address}
        updated = events[2]
        assert updated["requestId"] == "req-update-1"
        assert updated["details"] == {
            "name": {"from": "dash", "to": "renamed"},
            "scopes": {"from": ["public:read"], "to": ["market:read"]},
        }
        assert events[3]["details"] == {"name": "dash", "scopes": ["public:read"]}
        for secret in (str(created["key"]), str(rotated.json()["key"])):
            assert secret.rsplit("_", 1)[1] not in response.text

    async def test_events_page(self, auth_client: httpx.AsyncClient, owner: SignedIn) -> None:
        created = await create(auth_client, owner)
        for _ in range(3):
            await auth_client.post(
                f"/v1/developer/keys/{created['id']}/rotate", headers=owner.headers
            )
        page = await auth_client.get(
            f"/v1/developer/keys/{created['id']}/events",
            params={"limit": 2},
            headers=owner.headers,
        )
        body = page.json()
        assert [e["event"] for e in body["events"]] == ["rotated", "rotated"]
        rest = await auth_client.get(
            f"/v1/developer/keys/{created['id']}/events",
            params={"limit": 2, "cursor": body["pagination"]["nextCursor"]},
            headers=owner.headers,
        )
        assert [e["event"] for e in rest.json()["events"]] == ["rotated", "created"]
        assert rest.json()["pagination"]["nextCursor"] is None


class TestNeverAWallet:
    async def test_me_and_tx_need_a_session(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        everything = [
            "public:read",
            "market:read",
            "realtime:public",
            "account:read",
            "transactions:read",
            "trade:place",
            "trade:cancel",
            "webhooks:manage",
        ]
        key = (await create(auth_client, owner, scopes=everything))["key"]
        me = await auth_client.get("/v1/auth/keys", headers=dev(key))
        assert _error(me) == (401, "UNAUTHORIZED")
        sessions = await auth_client.get("/v1/auth/sessions", headers=dev(key))
        assert _error(sessions) == (401, "UNAUTHORIZED")
        tx = await auth_client.post(
            "/v1/tx/markets/25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd/orders",
            json={},
            headers=dev(key),
        )
        assert _error(tx) == (401, "UNAUTHORIZED")
        # with the owner's session as well, the account read works
        both = await auth_client.get("/v1/auth/keys", headers={**dev(key), **owner.headers})
        assert both.status_code == 200, both.text

    async def test_account_read_needs_the_scope_even_with_a_session(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        key = (await create(auth_client, owner, scopes=["market:read"]))["key"]
        response = await auth_client.get("/v1/auth/keys", headers={**dev(key), **owner.headers})
        assert _error(response) == (403, "INSUFFICIENT_SCOPE")
        assert response.json()["details"]["requiredScope"] == "account:read"

    async def test_as_bearer_it_is_refused(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        key = (await create(auth_client, owner))["key"]
        response = await auth_client.get("/v1/markets", headers={"authorization": f"Bearer {key}"})
        assert _error(response) == (401, "UNAUTHORIZED")

    async def test_in_the_url_it_is_refused(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        key = (await create(auth_client, owner))["key"]
        for name in ("developerKey", "x-svc-developer-key", "q"):
            response = await auth_client.get("/v1/markets", params={name: str(key)})
            assert _error(response) == (400, "INVALID_REQUEST")
            fields = response.json()["details"]["fields"]
            assert fields[0]["field"] == f"query.{name}"
            assert fields[0]["type"] == "credential_in_url"

    @pytest.mark.parametrize(
        "value", ["svc_dev_", "svc_dev_" + "0" * 32 + "_" + "A" * 43, "garbage"]
    )
    async def test_invalid_key_is_401_even_on_public_reads(
        self, auth_client: httpx.AsyncClient, value: str
    ) -> None:
        response = await auth_client.get("/v1/markets", headers=dev(value))
        assert _error(response) == (401, "UNAUTHORIZED")


class TestSecrets:
    async def test_stored_only_as_a_digest(
        self,
        auth_client: httpx.AsyncClient,
        owner: SignedIn,
        migrated_engine: AsyncEngine,
    ) -> None:
        created = await create(auth_client, owner)
        secret = str(created["key"]).rsplit("_", 1)[1]
        async with migrated_engine.connect() as conn:
            row = (
                (
                    await conn.execute(
                        select(developer_key).where(developer_key.c.id == created["id"])
                    )
                )
                .mappings()
                .one()
            )
            events = (
                (
                    await conn.execute(
                        select(developer_key_event).where(
                            developer_key_event.c.key_id == created["id"]
                        )
                    )
                )
                .mappings()
                .all()
            )
        assert row["secret_digest"] == hashlib.sha256(secret.encode()).hexdigest()
        for value in [*row.values(), *(v for e in events for v in e.values())]:
            assert secret not in str(value)
        assert all(row["secret_digest"] not in str(e["details"]) for e in events)

    async def test_last_used_is_recorded(
        self, auth_client: httpx.AsyncClient, owner: SignedIn
    ) -> None:
        created = await create(auth_client, owner)
        await auth_client.get("/v1/markets", headers=dev(created["key"]))
        got = await auth_client.get(f"/v1/developer/keys/{created['id']}", headers=owner.headers)
        assert got.json()["lastUsedAt"] is not None

    async def test_no_key_in_any_log_record(
        self, auth_settings: Settings, caplog: pytest.LogCaptureFixture
    ) -> None:
        # SQL echo on: statements and their bound parameters are logged too.
        app = create_app(auth_settings.model_copy(update={"db": DbSettings(echo=True)}))
        caplog.set_level(logging.DEBUG)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
        ):
            owner = await sign_in(client, new_key())
            created = await create(client, owner)
            path = f"/v1/developer/keys/{created['id']}"
            rotated = (await client.post(f"{path}/rotate", headers=owner.headers)).json()
            keys = [str(created["key"]), str(rotated["key"])]
            for key in keys:
                await client.get("/v1/markets", headers=dev(key))
                await client.get("/v1/markets", params={"k": key})
            await client.get(f"{path}/events", headers=owner.headers)
        records = [r for r in caplog.records if not r.name.startswith("httpx")]
        assert any(r.name.startswith("sqlalchemy.engine") for r in records)
        for record in records:
            text = record.getMessage() + repr(record.args) + repr(record.__dict__)
            for key in keys:
                assert key.rsplit("_", 1)[1] not in text, record
