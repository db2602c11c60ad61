"""Responses of the user routes (spec 2.12: fields not shown; ours are documented in
docs/auth.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from predmarket.kit.pagination import Pagination
from predmarket.kit.schemas import BaseSchema, UtcDateTime, example

EXAMPLE_ADDRESS = "17xWHPjBAnCwuXp3gmr3KgW1tAtWxRMe8dDsJqjSZjQWm"
_PROFILE_EXAMPLE = {
    "address": EXAMPLE_ADDRESS,
    "orderCount": 12,
    "openOrderCount": 3,
    "fillCount": 7,
    "firstActivityAt": "2026-11-20T08:00:00.000Z",
    "lastActivityAt": "2026-11-22T10:00:00.000Z",
}


class UserProfile(BaseSchema):
    """A wallet's public trading record, from the read model."""

    model_config = example(_PROFILE_EXAMPLE)

    address: str = Field(description="the wallet's canonical address (groupless: without :N)")
    order_count: int = Field(ge=0, description="orders the wallet placed")
    open_order_count: int = Field(ge=0, description="of which still resting")
    fill_count: int = Field(ge=0, description="fills the wallet took part in, as maker or taker")
    first_activity_at: UtcDateTime | None
    last_activity_at: UtcDateTime | None


class Me(UserProfile):
    """The signed-in wallet: its profile and how this request authenticated it."""

    model_config = example({**_PROFILE_EXAMPLE, "authenticatedBy": "cookie"})

    authenticated_by: Literal["cookie", "bearer", "api_key"]


class ReferralSummary(BaseSchema):
    model_config = example(
        {"address": EXAMPLE_ADDRESS, "code": None, "referredCount": 0, "activeReferredCount": 0}
    )

    address: str
    code: str | None = Field(description="the wallet's referral code; null until it has one")
    referred_count: int = Field(ge=0)
    active_referred_count: int = Field(ge=0)


class PendingReveal(BaseSchema):
    """An oracle vote committed and not yet revealed (filled in with the oracle routes)."""

    model_config = example(
        {
            "disputeId": "1",
            "marketAddress": "vqD1HoSAqk6VD9s2k7JpVqv6zX5iVCDpAngTDpYVLaeb",
            "revealDeadline": "2026-11-23T10:00:00.000Z",
        }
    )

    dispute_id: str
    market_address: str
    reveal_deadline: UtcDateTime


class PendingReveals(BaseSchema):
    model_config = example({"reveals": [], "pagination": {"limit": 50, "nextCursor": None}})

    reveals: list[PendingReveal]
    pagination: Pagination
