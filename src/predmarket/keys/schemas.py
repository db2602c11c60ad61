"""Legacy API keys (spec 2.7) and developer keys (spec 2.8) as the API shows them.

A key's secret appears only in the ``*Created`` / ``*Rotated`` answers, once; no schema ever
carries a stored digest.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints, field_validator

from predmarket.auth.principal import API_KEY_SCOPES, DEVELOPER_SCOPES
from predmarket.kit.pagination import Pagination
from predmarket.kit.schemas import BaseSchema, InputSchema, UtcDateTime, example

#: Page sizes of the key lists and of the audit log.
LIST_DEFAULT_LIMIT: Final = 50
LIST_MAX_LIMIT: Final = 100
#: New legacy keys get both scopes (spec 5.3).
DEFAULT_API_KEY_SCOPES: Final = API_KEY_SCOPES
#: New developer keys get the public read scopes; private data, trading and webhooks are asked
#: for explicitly.
DEFAULT_DEVELOPER_SCOPES: Final = (
    "public:read",
    "market:read",
    "realtime:public",
    "transactions:read",
)

KeyName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$"),
    Field(
        description="a label of your choice: 1..64 characters, no control characters",
        examples=["trading bot"],
    ),
]
DeveloperKeyEventName = Literal["created", "rotated", "revoked", "updated"]

_WALLET = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH"
_KEY_ID = "5d0f6c1e9a7b4c3d8e2f1a0b9c8d7e6f"
_CHALLENGE = (
    "predmarket wants you to sign in with your wallet:\n" + _WALLET + "\n\nNonce: 3f…\nExpires: …"
)


def _scope_list(value: object, allowed: tuple[str, ...]) -> list[str]:
    """Known scopes, at least one, duplicates dropped, in the order of ``allowed``."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("scopes must be an array of strings")
    if not value:
        raise ValueError("at least one scope is required")
    unknown = sorted({v for v in value if v not in allowed})
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    return [s for s in allowed if s in value]


# -- legacy API keys ----------------------------------------------------------------------------


class ApiKeyCreate(InputSchema):
    """A signed challenge and the new key's name and scopes."""

    model_config = example(
        {
            "address": _WALLET,
            "publicKey": "03" + "ab" * 32,
            "signature": "cd" * 64,
            "keyType": "default",
            "name": "trading bot",
            "scopes": ["read", "write:tx"],
        }
    )

    address: str = Field(max_length=80, description="the wallet that signed the challenge")
    public_key: str = Field(max_length=130, description="compressed secp256k1 key, hex")
    signature: str = Field(max_length=200, description="64-byte r‖s over the challenge, hex")
    key_type: str | None = Field(
        default=None, max_length=32, description="`default` (default) or `gl-secp256k1`"
    )
    challenge: str | None = Field(
        default=None,
        max_length=2048,
        description="the text of an address-less challenge, echoed verbatim; omitted: the "
        "newest unused challenge issued for `address`",
        examples=[_CHALLENGE],
    )
    name: KeyName
    scopes: list[str] | None = Field(
        default=None,
        description="`read` and/or `write:tx`; omitted: both",
        examples=[["read"]],
    )

    @field_validator("scopes", mode="before")
    @classmethod
    def _known_scopes(cls, value: object) -> list[str] | None:
        return None if value is None else _scope_list(value, API_KEY_SCOPES)


class ApiKey(BaseSchema):
    """A legacy API key as listed: never its secret."""

    model_config = example(
        {
            "id": _KEY_ID,
            "name": "trading bot",
            "scopes": ["read", "write:tx"],
            "createdAt": "2026-01-01T00:00:00.000Z",
            "lastUsedAt": None,
        }
    )

    id: str = Field(description="the key's public id (the part after `svc_live_`)")
    name: str
    scopes: list[str]
    created_at: UtcDateTime
    last_used_at: UtcDateTime | None = Field(description="to the minute")


class ApiKeyCreated(ApiKey):
    """The new key, with its value: shown this once."""

    model_config = example(
        {
            "id": _KEY_ID,
            "key": f"svc_live_{_KEY_ID}_" + "x" * 43,
            "name": "trading bot",
            "scopes": ["read", "write:tx"],
            "createdAt": "2026-01-01T00:00:00.000Z",
            "lastUsedAt": None,
        }
    )

    key: str = Field(description="`svc_live_…`: send as `Authorization: Bearer`; shown once")


class ApiKeyPage(BaseSchema):
    model_config = example(
        {
            "keys": [
                {
                    "id": _KEY_ID,
                    "name": "trading bot",
                    "scopes": ["read", "write:tx"],
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "lastUsedAt": "2026-01-02T10:11:00.000Z",
                }
            ],
            "pagination": {"limit": 50, "nextCursor": None},
        }
    )

    keys: list[ApiKey]
    pagination: Pagination


# -- developer keys -----------------------------------------------------------------------------


class DeveloperKeyCreate(InputSchema):
    model_config = example(
        {"name": "my market dashboard", "scopes": ["public:read", "market:read"]}
    )

    name: KeyName
    scopes: list[str] | None = Field(
        default=None,
        description="developer scopes (spec 5.4); omitted: " + ", ".join(DEFAULT_DEVELOPER_SCOPES),
    )

    @field_validator("scopes", mode="before")
    @classmethod
    def _known_scopes(cls, value: object) -> list[str] | None:
        return None if value is None else _scope_list(value, DEVELOPER_SCOPES)


class DeveloperKeyUpdate(InputSchema):
    """A new name and/or new scopes (recorded in the audit log)."""

    model_config = example({"scopes": ["public:read", "market:read", "account:read"]})

    name: KeyName | None = None
    scopes: list[str] | None = None

    @field_validator("scopes", mode="before")
    @classmethod
    def _known_scopes(cls, value: object) -> list[str] | None:
        return None if value is None else _scope_list(value, DEVELOPER_SCOPES)


_DEV_KEY_EXAMPLE = {
    "id": _KEY_ID,
    "builderCode": "bld_k3v9q2m7x4tz",
    "name": "my market dashboard",
    "scopes": ["public:read", "market:read"],
    "createdAt": "2026-01-01T00:00:00.000Z",
    "rotatedAt": None,
    "revokedAt": None,
    "lastUsedAt": "2026-01-02T10:11:00.000Z",
}


class DeveloperKey(BaseSchema):
    """A developer key as its owner sees it: never its secret."""

    model_config = example(_DEV_KEY_EXAMPLE)

    id: str = Field(description="the key's public id (the part after `svc_dev_`)")
    builder_code: str = Field(
        description="public attribution identity: immutable, kept across rotation, not secret"
    )
    name: str
    scopes: list[str]
    created_at: UtcDateTime
    rotated_at: UtcDateTime | None
    revoked_at: UtcDateTime | None
    last_used_at: UtcDateTime | None = Field(description="to the minute")


class DeveloperKeyCreated(DeveloperKey):
    """A developer key with its value: shown this once (on creation and on each rotation)."""

    model_config = example({**_DEV_KEY_EXAMPLE, "key": f"svc_dev_{_KEY_ID}_" + "x" * 43})

    key: str = Field(description="`svc_dev_…`: send in the `x-svc-developer-key` header only")


class DeveloperKeyPage(BaseSchema):
    model_config = example(
        {"keys": [_DEV_KEY_EXAMPLE], "pagination": {"limit": 50, "nextCursor": None}}
    )

    keys: list[DeveloperKey]
    pagination: Pagination


_EVENT_EXAMPLE = {
    "id": "12",
    "event": "updated",
    "occurredAt": "2026-01-03T08:00:00.000Z",
    "actor": _WALLET,
    "requestId": "0b7d1c5e9f2a4e19a1f3c2d4e5f60718",
    "details": {"scopes": {"from": ["public:read"], "to": ["public:read", "account:read"]}},
}


class DeveloperKeyEvent(BaseSchema):
    """One entry of a developer key's audit log; never a secret."""

    model_config = example(_EVENT_EXAMPLE)

    id: str
    event: DeveloperKeyEventName
    occurred_at: UtcDateTime
    actor: str = Field(description="the wallet whose session did it")
    request_id: str | None = Field(description="`x-request-id` of the request that did it")
    details: dict[str, object] = Field(description="what changed (name, scopes)")


class DeveloperKeyEventPage(BaseSchema):
    model_config = example(
        {"events": [_EVENT_EXAMPLE], "pagination": {"limit": 50, "nextCursor": None}}
    )

    events: list[DeveloperKeyEvent]
    pagination: Pagination
