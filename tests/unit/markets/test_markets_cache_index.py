"""The market list's index: sort orders and filter sets stay exact through any sequence of
additions, replacements and removals; outbox topics name the right market."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from predmarket.markets.cache import _SORTS, _Entry, _Index, _touched_market

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def row(rnd: random.Random, market_id: int) -> dict[str, Any]:
    tags = sorted(rnd.sample(["a", "b", "c", "d"], rnd.randint(0, 3)))
    return {
        "id": market_id,
        "market_address": f"addr-{market_id}",
        "question": "Q?",
        "question_folded": "q?",
        "category": rnd.choice(["x", "y", ""]),
        "creator": rnd.choice(["c1", "c2"]),
        "tag_list": "\x1f".join(tags) or None,
        "volume": rnd.choice([0, 5, 10**30]),
        "status": rnd.choice(["open", "resolved"]),
        "close_at": BASE,
        "created_at": BASE + timedelta(seconds=rnd.randint(0, 3)),
        "best_bid_yes": rnd.choice([0, 500]),
        "last_fill_id": rnd.choice([0, 7]),
    }


def check(index: _Index) -> None:
    entries = index.entries
    for n, keys in enumerate(index.orders):
        assert keys == sorted(e.keys[n] for e in entries.values())
    assert index.by_address == {e.address: e.id for e in entries.values()}
    expected: dict[str, set[int]] = {}
    for e in entries.values():
        for t in e.tags:
            expected.setdefault(t, set()).add(e.id)
    assert index.by_tag == expected
    categories: dict[str, set[int]] = {}
    for e in entries.values():
        categories.setdefault(e.category, set()).add(e.id)
    assert index.by_category == categories
    assert index.resolved == {e.id for e in entries.values() if not e.unresolved}


@pytest.mark.parametrize("seed", range(5))
def test_the_index_follows_puts_and_removes(seed: int) -> None:
    rnd = random.Random(seed)
    index = _Index.build(_Entry(row(rnd, i)) for i in range(1, 30))  # type: ignore[arg-type]
    check(index)
    for _ in range(300):
        market_id = rnd.randint(1, 40)
        if rnd.random() < 0.2:
            index.remove(market_id)
        else:
            index.put(_Entry(row(rnd, market_id)))  # type: ignore[arg-type]
        check(index)
    assert len(_SORTS) == len(index.orders) == 4


@pytest.mark.parametrize(
    ("topic", "entity", "market"),
    [
        ("market:25LVf:orders", "market", "25LVf"),
        ("market:25LVf:fills", "trade", "25LVf"),
        ("market:25LVf:orders", "order", None),  # an order alone changes no summary column
        ("user:1abc:orders", "order", None),
        ("user:1abc:fills", "trade", None),
        ("dispute:3", "dispute", None),
    ],
)
def test_which_events_touch_a_market(topic: str, entity: str, market: str | None) -> None:
    assert _touched_market({"topic": topic, "entity": entity}) == market  # type: ignore[arg-type]
