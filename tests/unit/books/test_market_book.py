"""One market's in-memory book: orders replace themselves, levels aggregate, JSON is cached."""

from __future__ import annotations

import json

import pytest

from predmarket.books.cache import BookEventError, MarketBook, _apply_order, _apply_trade

ADDRESS = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"
LOT = 10**17


def book() -> MarketBook:
    return MarketBook(ADDRESS, event_id=0, version=0)


def rest(b: MarketBook, order_id: int, side: str, outcome: str, price: int, qty: int) -> None:
    b.set_order(order_id, side=side, outcome=outcome, price=price, remaining=qty, open_=True)


def test_levels_aggregate_and_sort() -> None:
    b = book()
    rest(b, 1, "buy", "yes", 500, LOT)
    rest(b, 2, "buy", "yes", 520, 2 * LOT)
    rest(b, 3, "buy", "yes", 500, 3 * LOT)
    rest(b, 4, "sell", "yes", 700, LOT)
    rest(b, 5, "sell", "yes", 650, LOT)
    snap = b.snapshot(20)
    assert [(lv.price, lv.total_quantity, lv.order_count) for lv in snap.yes.bids] == [
        (520, 2 * LOT, 1),
        (500, 4 * LOT, 2),
    ]
    assert [lv.price for lv in snap.yes.asks] == [650, 700]
    assert (snap.best_bid_yes, snap.best_ask_yes, snap.best_bid_no, snap.best_ask_no) == (
        520,
        650,
        0,
        0,
    )
    assert [lv.price for lv in b.snapshot(1).yes.bids] == [520]


def test_an_order_view_replaces_the_order() -> None:
    b = book()
    rest(b, 1, "buy", "no", 300, 5 * LOT)
    rest(b, 1, "buy", "no", 300, 2 * LOT)  # a partial fill: the same order, less remaining
    assert b.levels() == {("no", "buy", 300): (2 * LOT, 1)}
    b.set_order(1, side="buy", outcome="no", price=300, remaining=0, open_=False)
    assert b.levels() == {} and b.open_orders == 0
    b.set_order(1, side="buy", outcome="no", price=300, remaining=0, open_=False)  # again: no-op
    assert b.levels() == {}


def test_rendered_json_follows_changes() -> None:
    b = book()
    first = b.render(20)
    assert b.render(20) is first  # cached
    rest(b, 1, "sell", "no", 800, LOT)
    body = json.loads(b.render(20))
    assert body["no"]["asks"] == [{"price": 800, "totalQuantity": str(LOT), "orderCount": 1}]
    assert body["eventId"] == "0" and body["version"] == 0


def test_quote() -> None:
    b = book()
    assert b.quote().model_dump() == {
        "marketAddress": ADDRESS,
        "yesPrice": 0.5,
        "noPrice": 0.5,
        "priceTimestamp": 0,
    }
    _apply_trade(b, {"outcome": "no", "price": 270, "timestamp": "2026-01-01T00:00:00.250Z"})
    q = b.quote()
    assert (q.yes_price, q.no_price, q.price_timestamp) == (0.73, 0.27, 1767225600250)


@pytest.mark.parametrize(
    "payload",
    [
        {"orderId": True, "side": "buy", "outcome": "yes", "price": 1, "remaining": "1"},
        {"orderId": 1, "side": "hold", "outcome": "yes", "price": 1, "remaining": "1"},
        {"orderId": 1, "side": "buy", "outcome": "yes", "price": 1, "remaining": "-1"},
        {"orderId": 1, "side": "buy", "outcome": "maybe", "price": 1, "remaining": "1"},
    ],
)
def test_unreadable_order_views(payload: dict[str, object]) -> None:
    with pytest.raises(BookEventError):
        _apply_order(book(), "insert", payload)


def test_ids_and_amounts_as_numbers_or_strings() -> None:
    b = book()
    view = {"side": "buy", "outcome": "yes", "price": 640, "status": "open"}
    _apply_order(b, "insert", {**view, "orderId": 7, "remaining": str(LOT)})
    _apply_order(b, "update", {**view, "orderId": "7", "remaining": LOT // 2})
    assert b.levels() == {("yes", "buy", 640): (LOT // 2, 1)}
