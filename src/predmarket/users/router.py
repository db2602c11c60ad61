"""``/v1/users/*`` and ``/v1/referrals/*``: public profiles and the signed-in wallet's reads.

``me`` in a path is the authenticated wallet (a session or a legacy key; 401 without one). A
wallet-scoped path naming an address works for the caller's own wallet and is a 404 for any other
(spec 7.2).
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Path, Query

from predmarket.auth.deps import WalletDep
from predmarket.auth.errors import SessionRequired
from predmarket.kit.deps import DbDep
from predmarket.openapi import public
from predmarket.users import service
from predmarket.users.errors import WalletNotFound
from predmarket.users.schemas import Me, PendingReveals, ReferralSummary, UserProfile

ADDRESS_PATTERN: Final = r"^[1-9A-HJ-NP-Za-km-z]+(:[0-9]+)?$"

WalletAddress = Annotated[
    str,
    Path(
        min_length=30,
        max_length=80,
        pattern=ADDRESS_PATTERN,
        description="a wallet address (default 1… or groupless 3…, with or without :N)",
    ),
]
Limit = Annotated[int, Query(ge=1, le=200, description="page size")]

users = APIRouter(prefix="/v1/users", tags=["Users"])
referrals = APIRouter(prefix="/v1/referrals", tags=["Referrals"])


@users.get("/me", response_model=Me, **public("getMe", errors=[SessionRequired]))
async def get_me(wallet: WalletDep, db: DbDep) -> Me:
    """The signed-in wallet's profile."""
    return await service.me(db, wallet)


@users.get(
    "/me/pending-reveals",
    response_model=PendingReveals,
    **public("listMyPendingReveals", errors=[SessionRequired]),
)
async def my_pending_reveals(wallet: WalletDep, limit: Limit = 50) -> PendingReveals:
    """Oracle votes the signed-in wallet committed and has yet to reveal."""
    assert wallet.wallet is not None
    return service.pending_reveals(wallet.wallet, limit=limit)


@users.get(
    "/{address}/pending-reveals",
    response_model=PendingReveals,
    **public("listPendingReveals", errors=[SessionRequired, WalletNotFound]),
)
async def pending_reveals(
    address: WalletAddress, wallet: WalletDep, limit: Limit = 50
) -> PendingReveals:
    """The same for an address: only the caller's own (another wallet's is a 404)."""
    return service.pending_reveals(service.owned_by_caller(wallet, address), limit=limit)


@users.get("/{address}", response_model=UserProfile, **public("getUser"))
async def get_user(address: WalletAddress, db: DbDep) -> UserProfile:
    """Any wallet's public trading record (zeros for a wallet never seen)."""
    return await service.profile(db, address)


@referrals.get(
    "/me/summary",
    response_model=ReferralSummary,
    **public("getMyReferralSummary", errors=[SessionRequired]),
)
async def my_referral_summary(wallet: WalletDep) -> ReferralSummary:
    """The signed-in wallet's referral code and referred wallets."""
    assert wallet.wallet is not None
    return service.referral_summary(wallet.wallet)


@referrals.get(
    "/{address}/summary",
    response_model=ReferralSummary,
    **public("getReferralSummary", errors=[SessionRequired, WalletNotFound]),
)
async def referral_summary(address: WalletAddress, wallet: WalletDep) -> ReferralSummary:
    """The same for an address: only the caller's own (another wallet's is a 404)."""
    return service.referral_summary(service.owned_by_caller(wallet, address))
