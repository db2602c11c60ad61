"""No secret reaches a log line: tokens, CSRF tokens and signatures, over the whole flow, with
every logger at DEBUG and SQL echo on (statements and their parameters)."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

from helpers.auth import challenge, client_of, new_key, settings_for, sign_in, wallet_of
from predmarket.alephium.signing import sign_message
from predmarket.app import create_app
from predmarket.settings import DbSettings

pytestmark = pytest.mark.db


async def test_no_secret_in_any_log_record(
    tmp_path: Path, migrated_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("sqlalchemy.engine", "uvicorn", "uvicorn.access", "httpx", "predmarket"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    settings = settings_for(migrated_url, tmp_path / "data", db=DbSettings(echo=True))
    app = create_app(settings)
    secrets: list[str] = []
    async with app.router.lifespan_context(app), client_of(app) as client:
        key = new_key()
        address, public_key = wallet_of(key)
        # failures first: a bad signature, a token that does not verify
        text = (await challenge(client, address))["challenge"]
        wrong = sign_message(new_key(), text)
        secrets.append(wrong)
        r = await client.post(
            "/v1/auth/session",
            json={
                "address": address,
                "publicKey": public_key,
                "signature": wrong,
                "keyType": "default",
            },
        )
        assert r.status_code == 401
        forged = "svc_sess_" + "0" * 32 + "_" + "Z" * 43
        secrets.append(forged)
        r = await client.get("/v1/auth/sessions", headers={"authorization": f"Bearer {forged}"})
        assert r.status_code == 401
        # the whole flow, both modes
        bearer = await sign_in(client, key)
        cookie = await sign_in(client, key, bearer=False)
        secrets += [str(bearer.token), str(cookie.cookie), str(cookie.csrf_token)]
        assert (await client.get("/v1/users/me", headers=bearer.headers)).status_code == 200
        assert (await client.get("/v1/auth/sessions")).status_code == 200
        r = await client.delete(f"/v1/auth/sessions/{uuid.uuid4()}", headers=cookie.headers)
        assert r.status_code == 204
        r = await client.post("/v1/auth/logout", headers={"x-csrf-token": "svc_csrf_bad"})
        assert r.status_code == 403
        assert (await client.post("/v1/auth/logout", headers=cookie.headers)).status_code == 204
        r = await client.post("/v1/auth/sessions/revoke-all", headers=bearer.headers)
        assert r.status_code == 204
        r = await client.get("/v1/users/me", headers=bearer.headers)
        assert r.status_code == 401
    assert any(rec.name.startswith("sqlalchemy.engine") for rec in caplog.records)
    logged = "\n".join(
        f"{rec.getMessage()} {rec.args!r} {getattr(rec, '__dict__', {})!r}"
        for rec in caplog.records
    )
    for secret in secrets:
        for part in (secret, secret.rpartition("_")[2]):
            assert part not in logged, "a secret reached the logs"
