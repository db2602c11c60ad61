"""The transaction status response: the node's view and the indexer's, side by side."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from predmarket.kit.schemas import BaseSchema, UtcDateTime, example

_TX = "7f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b"
_BLOCK = "00a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f"
_MARKET = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"

NodeTxStatusName = Literal["Confirmed", "MemPooled", "TxNotFound", "Conflicted"]
TxLifecycle = Literal["not-found", "pending", "confirmed", "indexed", "conflicted"]

_NODE_CONFIRMED = {
    "status": "Confirmed",
    "blockHash": _BLOCK,
    "txIndex": 0,
    "chainConfirmations": 3,
    "fromGroupConfirmations": 3,
    "toGroupConfirmations": 3,
}
_NODE_MEMPOOL = {
    "status": "MemPooled",
    "blockHash": None,
    "txIndex": None,
    "chainConfirmations": None,
    "fromGroupConfirmations": None,
    "toGroupConfirmations": None,
}


class NodeTxState(BaseSchema):
    """The chain node's answer, in the node's own words (``GET /transactions/status``).

    Confirmation counts and the block are set when ``Confirmed`` (or ``Conflicted``)."""

    model_config = example(_NODE_CONFIRMED, _NODE_MEMPOOL)

    status: NodeTxStatusName
    block_hash: str | None
    tx_index: int | None
    chain_confirmations: int | None
    from_group_confirmations: int | None
    to_group_confirmations: int | None


class OrderRef(BaseSchema):
    """An order the transaction placed, filled or cancelled."""

    model_config = example({"marketAddress": _MARKET, "orderId": 17})

    market_address: str
    order_id: int


class FillRef(BaseSchema):
    """A trade the transaction executed."""

    model_config = example({"marketAddress": _MARKET, "tradeId": "9"})

    market_address: str
    trade_id: str


class IndexerTxState(BaseSchema):
    """What the read model holds of the transaction: public ids only."""

    model_config = example(
        {
            "indexed": True,
            "blockHash": _BLOCK,
            "indexedAt": "2026-01-01T00:05:00.250Z",
            "markets": [_MARKET],
            "orders": [
                {"marketAddress": _MARKET, "orderId": 21},
                {"marketAddress": _MARKET, "orderId": 17},
            ],
            "fills": [{"marketAddress": _MARKET, "tradeId": "9"}],
        }
    )

    indexed: bool
    block_hash: str | None = Field(description="the block the indexer applied")
    indexed_at: UtcDateTime | None
    markets: list[str] = Field(description="markets the transaction created or changed")
    orders: list[OrderRef] = Field(description="orders it placed, filled or cancelled")
    fills: list[FillRef] = Field(description="trades it executed")


class TransactionStatus(BaseSchema):
    """A transaction as the node and the indexer see it.

    ``status``: ``indexed`` once its effects are in the read model (books, orders, fills);
    otherwise the node's state: ``confirmed`` (in a block, not indexed yet), ``pending``
    (mempool), ``conflicted``, or ``not-found`` (never submitted, dropped, or not seen yet)."""

    model_config = example(
        {
            "txId": _TX,
            "status": "indexed",
            "node": _NODE_CONFIRMED,
            "indexer": {
                "indexed": True,
                "blockHash": _BLOCK,
                "indexedAt": "2026-01-01T00:05:00.250Z",
                "markets": [_MARKET],
                "orders": [{"marketAddress": _MARKET, "orderId": 21}],
                "fills": [],
            },
        }
    )

    tx_id: str
    status: TxLifecycle
    node: NodeTxState
    indexer: IndexerTxState
