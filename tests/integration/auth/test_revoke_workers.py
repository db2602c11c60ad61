"""Revocation holds across worker PROCESSES: a session revoked through one uvicorn worker is
refused by another at once (spec 5.2.6: every token is checked against durable revocation
state; nothing about a session is cached in a process)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from helpers.auth import new_key, sign_in_sync, wallet_of
from helpers.workers import api_workers
from predmarket.alephium.signing import sign_message

pytestmark = pytest.mark.db


def test_revoke_all_on_one_worker_holds_on_the_other(migrated_url: str, tmp_path: Path) -> None:
    key = new_key()
    address, public_key = wallet_of(key)
    with (
        api_workers(2, database_url=migrated_url, data_dir=tmp_path / "data") as (one, two),
        httpx.Client(base_url=one, timeout=30) as first,
        httpx.Client(base_url=two, timeout=30) as second,
    ):

        def open_session(client: httpx.Client, *, bearer: bool) -> dict[str, str]:
            signed = sign_in_sync(
                client,
                address=address,
                public_key=public_key,
                key_type="default",
                sign=lambda text: sign_message(key, text),
                bearer=bearer,
            )
            return signed.headers

        bearer_one = open_session(first, bearer=True)
        bearer_two = open_session(second, bearer=True)
        cookie_two = open_session(second, bearer=False)  # the cookie stays in `second`'s jar
        # Each worker honours the sessions the other one opened.
        assert first.get("/v1/auth/sessions", headers=bearer_two).status_code == 200
        assert second.get("/v1/auth/sessions", headers=bearer_one).status_code == 200
        listed = second.get("/v1/auth/sessions", headers=cookie_two)
        assert listed.status_code == 200 and len(listed.json()["sessions"]) == 3

        revoked = first.post("/v1/auth/sessions/revoke-all", headers=bearer_one)
        assert revoked.status_code == 204

        for headers in (bearer_one, bearer_two):
            refused = second.get("/v1/users/me", headers=headers)
            assert (refused.status_code, refused.json()["code"]) == (401, "UNAUTHORIZED")
        assert second.get("/v1/users/me", headers=cookie_two).status_code == 401
        assert first.get("/v1/users/me", headers=bearer_two).status_code == 401
