"""Fixtures of the devnet tests (helpers in ``devnet_harness``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from devnet_harness import Clock, Harness

from predmarket.devnet.node import DevnetNode


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def harness(tmp_path: Path, clock: Clock) -> Iterator[Harness]:
    data_dir = tmp_path / "devnet"
    node = DevnetNode.open(data_dir, clock_ms=clock, faucet_cooldown_ms=0)
    try:
        yield Harness(node, clock, data_dir)
    finally:
        node.close()


@pytest.fixture
def interval(tmp_path: Path, clock: Clock) -> Iterator[Harness]:
    """A node that mines only when told (``node.mine()``)."""
    data_dir = tmp_path / "devnet-interval"
    node = DevnetNode.open(data_dir, clock_ms=clock, faucet_cooldown_ms=0, automine=False)
    try:
        yield Harness(node, clock, data_dir)
    finally:
        node.close()
