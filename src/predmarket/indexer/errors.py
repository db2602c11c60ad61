"""Errors of the indexer."""

from __future__ import annotations


class IndexerError(Exception):
    """The indexer cannot go on from here without help (a retry will not fix it by itself)."""


class EventDecodeError(IndexerError):
    """A node event does not fit the published ABI: the node runs other contracts, or is buggy."""


class ReorgDetected(IndexerError):
    """A block whose events were about to be applied is no longer in the main chain."""
