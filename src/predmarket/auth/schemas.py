"""Bodies and responses of the wallet sign-in routes (spec 2.5, 2.6, 4.2)."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import Field

from predmarket.kit.pagination import Pagination
from predmarket.kit.schemas import BaseSchema, InputSchema, UtcDateTime, example

EXAMPLE_ADDRESS = "17xWHPjBAnCwuXp3gmr3KgW1tAtWxRMe8dDsJqjSZjQWm"
EXAMPLE_PUBLIC_KEY = "02258e09d412bd402074ad4e69e95ce69e75ac6970ebffec96cc4079e8c3da541b"
EXAMPLE_NONCE = "5f1c0a7d9e3b42c8a61f0e2d4b7c9a13"
EXAMPLE_CHALLENGE = (
    "predmarket wants you to sign in with your wallet.\n\n"
    "Signing this message proves you control the wallet and opens an API session.\n"
    "It does not authorize any transaction or move any funds.\n\n"
    f"Wallet: {EXAMPLE_ADDRESS}\n"
    f"Nonce: {EXAMPLE_NONCE}\n"
    "Issued at: 2026-11-22T10:00:00.000Z\n"
    "Expires at: 2026-11-22T10:05:00.000Z"
)
EXAMPLE_SIGNATURE = "3c" * 64
EXAMPLE_SESSION_ID = "0f8b3c1e-6a2d-4f7e-9b1a-2c3d4e5f6a7b"
# Shapes only: real values are random (docs/auth.md, token formats).
EXAMPLE_TOKEN = "svc_sess_" + "0" * 32 + "_" + "A" * 43
EXAMPLE_CSRF = "svc_csrf_" + "0" * 32 + "_" + "B" * 43


class ChallengeCreate(InputSchema):
    model_config = example({"address": EXAMPLE_ADDRESS}, {})

    address: str | None = Field(
        default=None,
        max_length=1024,
        description="the wallet that will sign; omit for a challenge any wallet may sign "
        "(its exact text must then be sent back as `challenge`)",
    )


class Challenge(BaseSchema):
    model_config = example(
        {
            "challenge": EXAMPLE_CHALLENGE,
            "expiresAt": "2026-11-22T10:05:00.000Z",
            "nonce": EXAMPLE_NONCE,
        }
    )

    challenge: str = Field(description="the exact text to sign: untrimmed, newlines included")
    expires_at: UtcDateTime
    nonce: str = Field(description="the random nonce inside the text (32 hex characters)")


class SessionCreate(InputSchema):
    model_config = example(
        {
            "address": EXAMPLE_ADDRESS,
            "publicKey": EXAMPLE_PUBLIC_KEY,
            "signature": EXAMPLE_SIGNATURE,
            "keyType": "default",
            "issueToken": True,
        }
    )

    address: str = Field(max_length=1024, description="the signing wallet")
    public_key: str = Field(
        max_length=1024, description="compressed secp256k1 public key (66 hex characters)"
    )
    signature: str = Field(
        max_length=1024,
        description="64-byte r || s as 128 lowercase hex characters over the challenge text "
        "hashed with the `alephium` message hasher",
    )
    key_type: str = Field(
        max_length=64,
        description="`default` (addresses starting 1) or `gl-secp256k1` (starting 3)",
        json_schema_extra={"enum": ["default", "gl-secp256k1"]},
    )
    issue_token: bool = Field(
        default=False,
        description="true: a bearer session, its token in `token` and no cookie; "
        "false: a cookie session",
    )
    challenge: str | None = Field(
        default=None,
        max_length=2048,
        description="the exact challenge text that was signed; required for an address-less "
        "challenge, otherwise the newest unused challenge issued for `address` is meant",
    )


class SessionOpened(BaseSchema):
    model_config = example(
        {
            "sessionId": EXAMPLE_SESSION_ID,
            "address": EXAMPLE_ADDRESS,
            "keyType": "default",
            "mode": "cookie",
            "csrfToken": EXAMPLE_CSRF,
            "token": None,
            "expiresAt": "2026-11-29T10:00:00.000Z",
        },
        {
            "sessionId": EXAMPLE_SESSION_ID,
            "address": EXAMPLE_ADDRESS,
            "keyType": "default",
            "mode": "bearer",
            "csrfToken": None,
            "token": EXAMPLE_TOKEN,
            "expiresAt": "2026-12-22T10:00:00.000Z",
        },
    )

    session_id: uuid.UUID
    address: str
    key_type: Literal["default", "gl-secp256k1"]
    mode: Literal["cookie", "bearer"]
    csrf_token: str | None = Field(
        description="cookie sessions: send it as `x-csrf-token` on every mutating request; "
        "null for bearer sessions"
    )
    token: str | None = Field(
        description="bearer sessions (`issueToken: true`): send as `Authorization: Bearer`; "
        "shown once; null for cookie sessions"
    )
    expires_at: UtcDateTime


class SessionItem(BaseSchema):
    model_config = example(
        {
            "id": EXAMPLE_SESSION_ID,
            "mode": "bearer",
            "createdAt": "2026-11-22T10:00:00.000Z",
            "lastSeenAt": "2026-11-22T10:00:00.000Z",
            "expiresAt": "2026-12-22T10:00:00.000Z",
            "revokedAt": None,
            "current": False,
        }
    )

    id: uuid.UUID
    mode: Literal["cookie", "bearer"]
    created_at: UtcDateTime
    last_seen_at: UtcDateTime
    expires_at: UtcDateTime
    revoked_at: UtcDateTime | None
    current: bool = Field(description="the session this request is authenticated with")


class SessionList(BaseSchema):
    model_config = example(
        {
            "sessions": [
                {
                    "id": EXAMPLE_SESSION_ID,
                    "mode": "cookie",
                    "createdAt": "2026-11-22T10:00:00.000Z",
                    "lastSeenAt": "2026-11-22T10:30:00.000Z",
                    "expiresAt": "2026-11-29T10:30:00.000Z",
                    "revokedAt": None,
                    "current": True,
                }
            ],
            "pagination": {"limit": 100, "nextCursor": None},
        }
    )

    sessions: list[SessionItem]
    pagination: Pagination
