"""``GET /v1/transactions/{txId}``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from predmarket.books.deps import TX_ID_PATTERN
from predmarket.kit.deps import DbDep
from predmarket.kit.errors import UpstreamError, UpstreamTimeout
from predmarket.openapi import public
from predmarket.transactions import service
from predmarket.transactions.schemas import TransactionStatus
from predmarket.tx.deps import NodeDep

router = APIRouter(prefix="/v1/transactions", tags=["Transactions"])

TxIdPath = Annotated[
    str,
    Path(
        alias="txId",
        pattern=TX_ID_PATTERN,
        description="the transaction id (64 hex characters)",
        examples=["7f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b"],
    ),
]


@router.get(
    "/{txId}",
    response_model=TransactionStatus,
    **public("get", errors=[UpstreamError, UpstreamTimeout]),
)
async def get_transaction(tx_id: TxIdPath, db: DbDep, node: NodeDep) -> TransactionStatus:
    """A transaction's state at the chain node (mempool, confirmations) and in the read model
    (indexed, with the markets, orders and fills it touched). Poll it after submitting: `status`
    becomes `indexed` once books and lists show the transaction's effects."""
    return await service.transaction_status(db, node, tx_id)
