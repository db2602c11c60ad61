"""The block log: every accepted block, in SQLite, written before the submit returns.

A block is one row of ``block`` (height, hash, parent, timestamp) and one row of ``tx`` per
transaction (its unsigned bytes, signature and whether its script ran). Opening the devnet replays
the log from genesis through the same deterministic apply path as live blocks, so balances,
orders, events and statuses come back exactly. One SQLite transaction per block, WAL journal,
``synchronous=NORMAL``: a committed block survives a crash of the process (the last blocks before a
power loss may not). The mempool is not persisted: transactions that were still pending are lost
on restart and must be resubmitted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

LOG_FILE: Final = "chain.sqlite3"
SCHEMA_VERSION: Final = 1

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS block (
    height INTEGER PRIMARY KEY,
    hash BLOB NOT NULL UNIQUE,
    parent BLOB NOT NULL,
    timestamp INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tx (
    height INTEGER NOT NULL REFERENCES block(height),
    idx INTEGER NOT NULL,
    tx_id BLOB NOT NULL UNIQUE,
    unsigned BLOB NOT NULL,
    signature TEXT NOT NULL,
    script_ok INTEGER NOT NULL,
    PRIMARY KEY (height, idx)
);
"""


@dataclass(frozen=True, slots=True)
class StoredTx:
    tx_id: bytes
    raw: bytes
    signature: str
    script_ok: bool


@dataclass(frozen=True, slots=True)
class StoredBlock:
    height: int
    hash: bytes
    parent: bytes
    timestamp: int
    txs: tuple[StoredTx, ...]


class BlockLog:
    """Append-only block log in ``data_dir/chain.sqlite3``."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOG_FILE
        # The node's lock serializes every use, from whichever thread holds it.
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        elif row[0] != str(SCHEMA_VERSION):
            raise ValueError(f"{self.path}: unsupported block log schema {row[0]}")

    def append(
        self, height: int, hash_: bytes, parent: bytes, timestamp: int, txs: Sequence[StoredTx]
    ) -> None:
        """Write one block and its transactions in one SQLite transaction."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO block (height, hash, parent, timestamp) VALUES (?, ?, ?, ?)",
                (height, hash_, parent, timestamp),
            )
            db.executemany(
                "INSERT INTO tx (height, idx, tx_id, unsigned, signature, script_ok)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (height, i, t.tx_id, t.raw, t.signature, int(t.script_ok))
                    for i, t in enumerate(txs)
                ],
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def blocks(self) -> Iterator[StoredBlock]:
        """Every stored block in height order, with its transactions (streamed)."""
        rows = self._db.execute(
            "SELECT b.height, b.hash, b.parent, b.timestamp,"
            " t.tx_id, t.unsigned, t.signature, t.script_ok"
            " FROM block b LEFT JOIN tx t ON t.height = b.height ORDER BY b.height, t.idx"
        )
        current: tuple[int, bytes, bytes, int] | None = None
        txs: list[StoredTx] = []
        for height, hash_, parent, timestamp, tx_id, raw, signature, ok in rows:
            if current is not None and current[0] != height:
                yield StoredBlock(*current, tuple(txs))
                txs = []
            current = (height, hash_, parent, timestamp)
            if tx_id is not None:
                txs.append(StoredTx(tx_id, raw, signature, bool(ok)))
        if current is not None:
            yield StoredBlock(*current, tuple(txs))

    def close(self) -> None:
        self._db.close()
