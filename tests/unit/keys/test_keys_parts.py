"""Key schemas, builder codes and token checks that need no database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import pytest
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.auth import tokens
from predmarket.keys import authn
from predmarket.keys.queries import scopes_of, scopes_text
from predmarket.keys.schemas import ApiKeyCreate, DeveloperKeyCreate, DeveloperKeyUpdate
from predmarket.keys.service import new_builder_code

BASE = {"address": "1abc", "publicKey": "02", "signature": "00", "name": "bot"}


def _loc(error: ValidationError) -> tuple[Any, ...]:
    return tuple(error.errors()[0]["loc"])


class TestApiKeyCreate:
    def test_scopes_default_to_none(self) -> None:
        assert ApiKeyCreate.model_validate(BASE).scopes is None

    def test_scopes_are_deduplicated_in_canonical_order(self) -> None:
        body = ApiKeyCreate.model_validate({**BASE, "scopes": ["write:tx", "read", "write:tx"]})
        assert body.scopes == ["read", "write:tx"]

    def test_null_scopes_mean_the_default(self) -> None:
        assert ApiKeyCreate.model_validate({**BASE, "scopes": None}).scopes is None

    @pytest.mark.parametrize("scopes", [[], ["admin"], ["public:read"], "read", [1]])
    def test_bad_scopes_name_the_field(self, scopes: object) -> None:
        with pytest.raises(ValidationError) as caught:
            ApiKeyCreate.model_validate({**BASE, "scopes": scopes})
        assert _loc(caught.value) == ("scopes",)

    @pytest.mark.parametrize("name", ["", "x" * 65, "a\nb", "\x7f"])
    def test_bad_names(self, name: str) -> None:
        with pytest.raises(ValidationError) as caught:
            ApiKeyCreate.model_validate({**BASE, "name": name})
        assert _loc(caught.value) == ("name",)

    def test_names_keep_their_text(self) -> None:
        assert ApiKeyCreate.model_validate({**BASE, "name": " émoji 🚀 "}).name == " émoji 🚀 "

    def test_unknown_fields_are_refused(self) -> None:
        with pytest.raises(ValidationError):
            ApiKeyCreate.model_validate({**BASE, "secret": "x"})


class TestDeveloperSchemas:
    def test_scopes(self) -> None:
        body = DeveloperKeyCreate.model_validate(
            {"name": "x", "scopes": ["trade:cancel", "public:read"]}
        )
        assert body.scopes == ["public:read", "trade:cancel"]
        with pytest.raises(ValidationError):
            DeveloperKeyCreate.model_validate({"name": "x", "scopes": ["read"]})

    def test_update_may_change_either(self) -> None:
        assert DeveloperKeyUpdate.model_validate({}).scopes is None
        assert DeveloperKeyUpdate.model_validate({"name": "n"}).name == "n"
        with pytest.raises(ValidationError):
            DeveloperKeyUpdate.model_validate({"scopes": []})


def test_builder_codes() -> None:
    codes = {new_builder_code() for _ in range(1000)}
    assert len(codes) == 1000
    for code in codes:
        assert code.startswith("bld_") and len(code) == 16
        assert set(code[4:]) <= set("abcdefghijklmnopqrstuvwxyz234567")


def test_scope_text_round_trip() -> None:
    text = scopes_text(["write:tx", "read", "read"])
    assert text == "read write:tx"
    assert scopes_of(text) == {"read", "write:tx"}


class TestMalformedTokens:
    """A token that cannot be one of ours is refused before any database work."""

    NO_DB = cast(AsyncConnection, None)
    NOW = datetime(2026, 1, 1, tzinfo=UTC)

    @pytest.mark.parametrize(
        "token",
        [
            "",
            "svc_live_",
            "svc_live_" + "0" * 32,
            "svc_live_" + "0" * 32 + "_" + "A" * 42,
            "svc_live_" + "G" * 32 + "_" + "A" * 43,
            "svc_dev_" + "0" * 32 + "_" + "A" * 43,
            "svc_sess_" + "0" * 32 + "_" + "A" * 43,
        ],
    )
    async def test_api_key(self, token: str) -> None:
        assert await authn.authenticate_api_key(self.NO_DB, token, self.NOW) is None

    @pytest.mark.parametrize(
        "token",
        ["", "svc_dev_", "svc_live_" + "0" * 32 + "_" + "A" * 43, "svc_dev_x_y"],
    )
    async def test_developer_key(self, token: str) -> None:
        assert await authn.authenticate_developer_key(self.NO_DB, token, self.NOW) is None

    def test_keys_have_the_shared_token_format(self) -> None:
        issued = tokens.new_secret(authn.API_KEY_PREFIX)
        assert tokens.parse(issued.token, authn.API_KEY_PREFIX) is not None
        assert tokens.parse(issued.token, authn.DEVELOPER_KEY_PREFIX) is None
        assert issued.token not in repr(issued)
