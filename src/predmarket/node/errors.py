"""Errors of the node client: what went wrong talking to the chain node, by kind.

The API maps them to its envelope (spec 7.2/7.3): NodeTimeout → 502 ``UPSTREAM_TIMEOUT``; any
other NodeError → 502; a NodeRejected carries the node's own ``detail`` (for example
``AssertionFailedWithErrorCode(<contract>, 12)``) so a domain can translate it further.
"""

from __future__ import annotations


class NodeError(Exception):
    """Base class: the node could not give an answer the caller can use."""

    def __init__(self, message: str, *, method: str = "", path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.path = path


class NodeUnavailable(NodeError):
    """No connection: refused, reset, DNS failure, or the connection dropped mid-request."""


class NodeTimeout(NodeError):
    """The node did not connect or answer within the client's timeout."""


class NodeRejected(NodeError):
    """A 4xx answer: the node refused the request; ``detail`` is the node's explanation."""

    def __init__(self, status: int, detail: str, *, method: str = "", path: str = "") -> None:
        message = f"node rejected {method} {path}: {status} {detail}"
        super().__init__(message, method=method, path=path)
        self.status = status
        self.detail = detail


class NodeServerError(NodeError):
    """A 5xx answer: the node failed (transient more often than not)."""

    def __init__(self, status: int, detail: str, *, method: str = "", path: str = "") -> None:
        message = f"node failed {method} {path}: {status} {detail}"
        super().__init__(message, method=method, path=path)
        self.status = status
        self.detail = detail


class NodeProtocolError(NodeError):
    """A 2xx answer whose body is not what the node's API promises (not JSON, wrong shape)."""
