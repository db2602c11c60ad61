"""``POST /v1/tx/markets/{address}/orders`` and ``DELETE /v1/tx/markets/{address}/orders/{id}``:
unsigned order transactions (spec 2.4, 4.2, 7.4)."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Path

from predmarket.auth.deps import WalletDep
from predmarket.auth.errors import CsrfFailed, SessionRequired, SignerMismatch
from predmarket.kit.deps import DbDep
from predmarket.kit.errors import (
    InsufficientBalance,
    InsufficientScope,
    MarketClosed,
    UpstreamError,
    UpstreamTimeout,
)
from predmarket.openapi import public
from predmarket.tx import service
from predmarket.tx.deps import ChainCacheDep, NodeDep, check_signer
from predmarket.tx.errors import MarketNotFound, OrderNotFound
from predmarket.tx.schemas import EXAMPLE_MARKET, TxBuild, TxCancelOrder, TxPlaceOrder

router = APIRouter(prefix="/v1/tx/markets", tags=["Transactions"])

#: Spec 4.2's address rule: 30..80 characters of base58 plus ``:`` (a ``:N`` group suffix).
ADDRESS_PATTERN: Final = r"^[1-9A-HJ-NP-Za-km-z]+(:[0-9]+)?$"
#: Order ids are the contract's, sequential from 1 per market; the read model stores 64 bits.
MAX_ORDER_ID: Final = 2**63 - 1

MarketAddress = Annotated[
    str,
    Path(
        min_length=30,
        max_length=80,
        pattern=ADDRESS_PATTERN,
        description="the market's contract address",
        examples=[EXAMPLE_MARKET],
    ),
]
OrderId = Annotated[
    int,
    Path(ge=1, le=MAX_ORDER_ID, description="the on-chain order id (per market, from 1)"),
]


@router.post(
    "/{address}/orders",
    response_model=TxBuild,
    **public(
        "placeOrder",
        errors=[
            SessionRequired,
            CsrfFailed,
            InsufficientScope,
            SignerMismatch,
            MarketNotFound,
            MarketClosed,
            InsufficientBalance,
            UpstreamError,
            UpstreamTimeout,
        ],
    ),
)
async def place_order(
    wallet: WalletDep,
    address: MarketAddress,
    body: TxPlaceOrder,
    db: DbDep,
    node: NodeDep,
    cache: ChainCacheDep,
) -> TxBuild:
    """Build the unsigned transaction of one limit order: a buy locks price * quantity / 1000 *
    1.025 collateral (the 2.5% fee included), a sell locks the shares; both approve the 0.2 ALPH
    order deposit. Nothing is submitted: sign ``txId`` and submit ``unsignedTx`` to the node.
    Needs the signer's wallet session (or API key with ``write:tx``): ``signerAddress`` must be
    the authenticated wallet."""
    check_signer(wallet, body.signer_address)
    return await service.build_place_order(db, node, cache, market_address=address, request=body)


@router.delete(
    "/{address}/orders/{id}",
    response_model=TxBuild,
    **public(
        "cancelOrder",
        errors=[
            SessionRequired,
            CsrfFailed,
            InsufficientScope,
            SignerMismatch,
            OrderNotFound,
            MarketClosed,
            InsufficientBalance,
            UpstreamError,
            UpstreamTimeout,
        ],
    ),
)
async def cancel_order(
    wallet: WalletDep,
    address: MarketAddress,
    id: OrderId,
    body: TxCancelOrder,
    db: DbDep,
    node: NodeDep,
    cache: ChainCacheDep,
) -> TxBuild:
    """Build the unsigned transaction cancelling one of the signer's open orders; its lock and
    deposit come back when it is mined. The signer is named in the JSON body of this DELETE.
    An order that does not exist, is no longer open or is not the signer's is a 404. Needs the
    signer's wallet session (or API key with ``write:tx``)."""
    check_signer(wallet, body.signer_address)
    return await service.build_cancel_order(
        db, node, cache, market_address=address, order_id=id, request=body
    )
