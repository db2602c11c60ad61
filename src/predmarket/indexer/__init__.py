"""The chain indexer: contract events → read model + outbox + checkpoint, one transaction per
block batch (docs/indexer.md).

``from predmarket.indexer import Indexer, run_once``.
"""

from __future__ import annotations

from predmarket.indexer.errors import EventDecodeError, IndexerError, ReorgDetected
from predmarket.indexer.service import (
    INDEXER_LOCK_KEY,
    CommitListener,
    Indexer,
    discover_registry,
    run_once,
)

__all__ = [
    "INDEXER_LOCK_KEY",
    "CommitListener",
    "EventDecodeError",
    "Indexer",
    "IndexerError",
    "ReorgDetected",
    "discover_registry",
    "run_once",
]
