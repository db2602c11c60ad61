"""User profiles and the ``me`` reads of the signed-in wallet."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.alephium.constants import TOTAL_NUMBER_OF_GROUPS
from predmarket.auth import wallets
from predmarket.auth.principal import Principal
from predmarket.kit.errors import InvalidRequest
from predmarket.kit.pagination import Pagination
from predmarket.users import queries
from predmarket.users.errors import WalletNotFound
from predmarket.users.schemas import Me, PendingReveals, ReferralSummary, UserProfile


def canonical_or_400(address: str) -> str:
    wallet = wallets.canonical_wallet(address)
    if wallet is None:
        raise InvalidRequest.for_field(
            "path.address",
            "not a wallet address: a default (1…) or gl-secp256k1 (3…) address",
            type="address_invalid",
        )
    return wallet


def owned_by_caller(principal: Principal, address: str) -> str:
    """The canonical wallet of ``address`` when it is the caller's, else 404 (spec 7.2: another
    wallet's private data is indistinguishable from missing data)."""
    wallet = canonical_or_400(address)
    if principal.wallet is None or not wallets.same_wallet(wallet, principal.wallet):
        raise WalletNotFound()
    return wallet


def owner_forms(wallet: str) -> list[str]:
    """Every way the read model may write the wallet: groupless owners carry ``:N``."""
    if wallets.key_type_of(wallet) == "gl-secp256k1":
        return [wallet, *(f"{wallet}:{g}" for g in range(TOTAL_NUMBER_OF_GROUPS))]
    return [wallet]


async def profile(conn: AsyncConnection, address: str) -> UserProfile:
    """The public profile of any wallet (zeros for one never seen)."""
    wallet = canonical_or_400(address)
    activity = await queries.activity(conn, owner_forms(wallet))
    return UserProfile(address=wallet, **activity._asdict())


async def me(conn: AsyncConnection, principal: Principal) -> Me:
    assert principal.wallet is not None and principal.auth is not None
    public = await profile(conn, principal.wallet)
    return Me(**public.model_dump(), authenticated_by=principal.auth)


def referral_summary(wallet: str) -> ReferralSummary:
    """Minimal until referrals exist: no code, nobody referred."""
    return ReferralSummary(address=wallet, code=None, referred_count=0, active_referred_count=0)


def pending_reveals(wallet: str, *, limit: int) -> PendingReveals:
    """Minimal until oracle votes are indexed: nothing pending."""
    del wallet
    return PendingReveals(reveals=[], pagination=Pagination(limit=limit, next_cursor=None))
