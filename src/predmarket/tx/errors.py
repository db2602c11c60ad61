"""Errors of the transaction builders, and how a node's refusal becomes one of them.

A build fails in the node for three kinds of reasons, told apart by the node's ``detail``:

- the wallet cannot pay (``Not enough balance…``): 422 ``INSUFFICIENT_BALANCE``;
- the contract call reverts in the node's simulation
  (``AssertionFailedWithErrorCode(<contract>, <code>)``, chain-abi.md): the ABI error code is
  mapped to the status and code the client can act on (:data:`REVERT_ERRORS`);
- anything else (a refusal we cannot attribute to the request, the node down, slow or talking
  nonsense): 502, ``UPSTREAM_TIMEOUT`` when it did not answer in time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

from predmarket.devnet.abi import ERROR_CODES, ERROR_NAMES
from predmarket.kit.errors import (
    AppError,
    Conflict,
    InsufficientBalance,
    InvalidRequest,
    MarketClosed,
    NotFound,
    UpstreamError,
    UpstreamTimeout,
)
from predmarket.node import NodeError, NodeRejected, NodeTimeout, NodeUnavailable

#: How much of a node's refusal is quoted back in ``details.nodeDetail``.
_DETAIL_CHARS: Final = 500
_REVERT = re.compile(r"AssertionFailedWithErrorCode\((\w+), (\d+)\)")
# The node's UTXO selection ("Not enough balance: got X, expected Y", "Not enough balance for
# token <id>: …"). Not the VM's "NotEnoughApprovedBalance": that is a script failure, ours.
_NO_FUNDS = re.compile(r"\bnot enough balance\b|\binsufficient (?:balance|funds)\b", re.I)


class MarketNotFound(NotFound):
    message = "market not found"


class OrderNotFound(NotFound):
    """Spec 7.2: a missing order and another wallet's order look the same (404)."""

    message = "no open order with this id belongs to the signer in this market"


class BuildMismatch(UpstreamError):
    """The node returned a transaction that does not do what was asked; it is never returned."""

    message = "the chain node built a transaction that does not match the request"


class NodeRefused(UpstreamError):
    message = "the chain node refused to build the transaction"


def _quote(detail: str) -> str:
    return detail if len(detail) <= _DETAIL_CHARS else detail[:_DETAIL_CHARS] + "…"


def _field(name: str, message: str) -> Callable[[], AppError]:
    return lambda: InvalidRequest.for_field(name, message, type="contract_revert")


#: ABI error code → the error a build reports. Codes the request cannot cause (operator-only
#: methods, approvals we compute ourselves) are not listed: they mean the builder or the node is
#: wrong, which is a 502.
REVERT_ERRORS: Final[Mapping[int, Callable[[], AppError]]] = {
    ERROR_CODES["INVALID_ARGUMENT"]: _field("body", "the contract refused an argument"),
    ERROR_CODES["MARKET_CLOSED"]: lambda: MarketClosed(
        "the market is past its close time or resolved"
    ),
    ERROR_CODES["UNKNOWN_ORDER"]: OrderNotFound,
    ERROR_CODES["NOT_ORDER_OWNER"]: OrderNotFound,
    ERROR_CODES["ALREADY_RESOLVED"]: lambda: MarketClosed("the market is already resolved"),
    ERROR_CODES["NOT_RESOLVED"]: lambda: Conflict("the market is not resolved yet"),
    ERROR_CODES["INSUFFICIENT_SHARES"]: lambda: InsufficientBalance(
        "the sell offers more shares than exist outside the book"
    ),
    ERROR_CODES["INVALID_FILL"]: _field(
        "body.quantity", "quantity must be a positive multiple of 10000000 base units"
    ),
    ERROR_CODES["INVALID_PRICE"]: _field("body.price", "price must be a tick 1..999"),
}


def revert_code(detail: str) -> int | None:
    """The ABI error code of a contract revert quoted in a node's detail, if there is one."""
    match = _REVERT.search(detail)
    return int(match.group(2)) if match else None


def from_node_error(error: NodeError) -> AppError:
    """What a failed node call during a build means for the client."""
    if isinstance(error, NodeTimeout):
        return UpstreamTimeout()
    if isinstance(error, NodeUnavailable):
        return UpstreamError("the chain node is unreachable")
    if not isinstance(error, NodeRejected):
        # 5xx, or a 2xx that is not the node's JSON
        return UpstreamError(details={"nodeDetail": _quote(error.message)})
    code = revert_code(error.detail)
    if code is not None:
        make = REVERT_ERRORS.get(code)
        if make is not None:
            return make()
        return NodeRefused(
            details={
                "revertCode": code,
                "revertName": ERROR_NAMES.get(code, "UNKNOWN"),
                "nodeDetail": _quote(error.detail),
            }
        )
    if _NO_FUNDS.search(error.detail):
        return InsufficientBalance(details={"nodeDetail": _quote(error.detail)})
    return NodeRefused(details={"nodeStatus": error.status, "nodeDetail": _quote(error.detail)})
