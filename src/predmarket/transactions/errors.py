"""How a failed node call reads to the client: a 502, ``UPSTREAM_TIMEOUT`` when it was slow."""

from __future__ import annotations

from predmarket.kit.errors import UpstreamError, UpstreamTimeout
from predmarket.node import NodeError, NodeTimeout, NodeUnavailable


def upstream(error: NodeError, doing: str) -> UpstreamError:
    """``doing`` completes "the chain node could not …"; the node's address and its own wording
    stay in our logs."""
    if isinstance(error, NodeTimeout):
        return UpstreamTimeout()
    if isinstance(error, NodeUnavailable):
        return UpstreamError("the chain node is unreachable")
    return UpstreamError(f"the chain node could not {doing}")
