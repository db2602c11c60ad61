"""A transaction's status: the chain node's state combined with the indexer's."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Final

from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.books import queries as books_queries
from predmarket.devnet.abi import MARKET, MARKET_REGISTRY, ContractAbi, decode_event
from predmarket.node import NodeClient, NodeError
from predmarket.node.models import TxStatus
from predmarket.transactions import queries
from predmarket.transactions.errors import upstream
from predmarket.transactions.schemas import (
    FillRef,
    IndexerTxState,
    NodeTxState,
    OrderRef,
    TransactionStatus,
    TxLifecycle,
)

log = logging.getLogger("predmarket.transactions")

_LIFECYCLE: Final[Mapping[str, TxLifecycle]] = {
    "Confirmed": "confirmed",
    "MemPooled": "pending",
    "Conflicted": "conflicted",
    "TxNotFound": "not-found",
}
# Event indexes of the ABI (chain-abi.md).
_ORDER_PLACED, _TRADE, _ORDER_CANCELLED = 0, 1, 2
_MARKET_CREATED = 0


def _node_state(status: TxStatus) -> NodeTxState:
    return NodeTxState(
        status=status.type,
        block_hash=status.block_hash,
        tx_index=status.tx_index,
        chain_confirmations=status.chain_confirmations,
        from_group_confirmations=status.from_group_confirmations,
        to_group_confirmations=status.to_group_confirmations,
    )


def _decode(
    abi: ContractAbi, event_index: int, fields: object
) -> dict[str, int | bool | bytes | str] | None:
    if not isinstance(fields, Sequence) or isinstance(fields, str):
        return None
    try:
        return decode_event(abi, event_index, list(fields))
    except (ValueError, TypeError, KeyError, LookupError):
        return None


class _Touched:
    """Markets, orders and fills named by a transaction's events, in first-seen order."""

    def __init__(self) -> None:
        self.markets: dict[str, None] = {}
        self.orders: dict[tuple[str, int], None] = {}
        self.fills: dict[tuple[str, str], None] = {}

    def market_event(self, address: str, event_index: int, fields: object) -> None:
        self.markets.setdefault(address)
        named = _decode(MARKET, event_index, fields)
        if named is None:
            return
        if event_index in (_ORDER_PLACED, _ORDER_CANCELLED):
            self.orders.setdefault((address, int(named["orderId"])))
        elif event_index == _TRADE:
            # The taker first: it is the order this transaction placed.
            self.orders.setdefault((address, int(named["takerOrderId"])))
            self.orders.setdefault((address, int(named["makerOrderId"])))
            self.fills.setdefault((address, str(int(named["tradeId"]))))


async def _indexer_state(db: AsyncConnection, tx_id: str) -> IndexerTxState:
    seen = await books_queries.get_indexed_tx(db, tx_id)
    if seen is None:
        return IndexerTxState(
            indexed=False, block_hash=None, indexed_at=None, markets=[], orders=[], fills=[]
        )
    events = await queries.events_of(db, tx_id)
    created: list[str] = []
    for e in events:
        if e["event_index"] != _MARKET_CREATED:
            continue
        named = _decode(MARKET_REGISTRY, _MARKET_CREATED, e["fields"])
        if named is not None and isinstance(named.get("market"), str):
            created.append(str(named["market"]))
    markets = await queries.known_markets(db, [*(e["contract_address"] for e in events), *created])
    touched = _Touched()
    if seen["market_id"] is not None:
        address = await queries.market_address(db, int(seen["market_id"]))
        if address is not None:
            touched.markets.setdefault(address)
    for address in created:
        if address in markets:
            touched.markets.setdefault(address)
    for e in events:
        if e["contract_address"] in markets:
            touched.market_event(e["contract_address"], int(e["event_index"]), e["fields"])
    return IndexerTxState(
        indexed=True,
        block_hash=seen["block_hash"],
        indexed_at=seen["indexed_at"],
        markets=list(touched.markets),
        orders=[OrderRef(market_address=m, order_id=o) for m, o in touched.orders],
        fills=[FillRef(market_address=m, trade_id=t) for m, t in touched.fills],
    )


async def transaction_status(
    db: AsyncConnection, node: NodeClient, tx_id: str
) -> TransactionStatus:
    """The node's status of ``tx_id`` and what the indexer made of it; a node that is down or
    slow is a 502 (``UPSTREAM_TIMEOUT`` when it did not answer in time)."""
    tx_id = tx_id.lower()
    try:
        status = await node.tx_status(tx_id)
    except NodeError as e:
        log.warning("transaction status of %s: %s", tx_id, e)
        raise upstream(e, "report the transaction's status") from e
    indexer = await _indexer_state(db, tx_id)
    return TransactionStatus(
        tx_id=tx_id,
        status="indexed" if indexer.indexed else _LIFECYCLE[status.type],
        node=_node_state(status),
        indexer=indexer,
    )
