"""The trending algorithm v1 as pure arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from predmarket.exchange import notional
from predmarket.markets import _trending

NOW = datetime(2026, 1, 20, 12, tzinfo=UTC)
SHARE = 10**18


def test_fill_volume_follows_the_exchange() -> None:
    assert _trending.fill_volume("normal", 640, 3 * SHARE) == notional(640, 3 * SHARE)
    assert _trending.fill_volume("mint", 640, 3 * SHARE) == 3 * SHARE
    assert _trending.fill_volume("merge", 10, 3 * SHARE) == 3 * SHARE


def test_weights_sum_to_one() -> None:
    assert sum(_trending.WEIGHTS.values()) == pytest.approx(1.0)
    for name in _trending.WEIGHTS:
        assert name in _trending.DESCRIPTION


def test_rank() -> None:
    big, small = _trending.Activity(), _trending.Activity()
    big.add(kind="mint", price=500, quantity=4 * SHARE, maker="a", taker="b")
    small.add(kind="normal", price=500, quantity=2 * SHARE, maker="a", taker="c")
    small.add(kind="normal", price=500, quantity=2 * SHARE, maker="a", taker="c")
    ranked = _trending.rank(
        [(1, NOW - timedelta(hours=6)), (2, NOW), (3, None), (4, None)],
        {1: big, 2: small},
        now=NOW,
    )
    # the busier market with the fresher trade beats the one with more volume
    assert [s.market_id for s in ranked] == [2, 1, 4, 3]
    two, one, four, three = ranked
    assert (one.volume.value, one.volume.score) == (4 * SHARE, 1.0)
    assert two.volume.value == 2 * SHARE  # two normal trades of 2 shares at 0.5
    assert two.volume.score == round(0.5**0.5, 6)
    assert (one.trades.score, two.trades.score) == (0.5, 1.0)
    assert (one.traders.value, two.traders.value) == (2, 2)
    assert one.recency.score == 0.5 and two.recency.score == 1.0
    assert one.score == pytest.approx(0.4 + 0.125 + 0.2 + 0.075)
    assert two.score == pytest.approx(0.4 * 0.707107 + 0.25 + 0.2 + 0.15, abs=1e-6)
    assert three.score == four.score == 0.0
    assert three.recency.hours is None


def test_no_activity_anywhere() -> None:
    [only] = _trending.rank([(9, None)], {}, now=NOW)
    assert only.score == 0.0 and only.volume.score == 0.0 and only.trades.score == 0.0
    assert _trending.rank([], {}, now=NOW) == []


def test_a_trade_in_the_future_counts_as_now() -> None:
    [s] = _trending.rank([(1, NOW + timedelta(minutes=5))], {}, now=NOW)
    assert s.recency.hours == 0.0 and s.recency.score == 1.0
