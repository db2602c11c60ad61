"""The service's client of a chain node (the embedded devnet or a real Alephium node).

``from predmarket.node import NodeClient, NodeError`` — see :mod:`predmarket.node.client`.
"""

from __future__ import annotations

from predmarket.node.client import MAX_EVENTS_LIMIT, NO_RETRY, NodeClient, RetryPolicy
from predmarket.node.errors import (
    NodeError,
    NodeProtocolError,
    NodeRejected,
    NodeServerError,
    NodeTimeout,
    NodeUnavailable,
)

__all__ = [
    "MAX_EVENTS_LIMIT",
    "NO_RETRY",
    "NodeClient",
    "NodeError",
    "NodeProtocolError",
    "NodeRejected",
    "NodeServerError",
    "NodeTimeout",
    "NodeUnavailable",
    "RetryPolicy",
]
