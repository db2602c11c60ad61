"""One book side against a plain model: FIFO per tick, best pointer, levels, lazy cancels."""

from hypothesis import given, settings
from hypothesis import strategies as st

from predmarket.exchange import Level, Outcome, Side
from predmarket.exchange.book import BookSide, RestingOrder

# Few ticks and many cancels, so levels fill up with dead entries and get compacted.
ticks = st.sampled_from([1, 500, 999])
add = st.tuples(st.just("add"), ticks, st.integers(1, 5))
remove = st.tuples(st.just("remove"), st.integers(0, 10**6), st.just(0))
fill = st.tuples(st.just("fill"), st.integers(1, 5), st.just(0))
# A build-up phase then a mixed phase, so deep levels exist to be cancelled into.
operations = st.tuples(
    st.lists(add, min_size=10, max_size=60),
    st.lists(st.one_of(add, remove, remove, fill), min_size=20, max_size=200),
).map(lambda phases: phases[0] + phases[1])


@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.sampled_from([1, 2, 3, 32]), operations)
def test_book_side_matches_a_list_model(
    is_bid: bool, compact_min_dead: int, ops: list[tuple[str, int, int]]
) -> None:
    side = BookSide(is_bid=is_bid, compact_min_dead=compact_min_dead)
    model: dict[int, list[RestingOrder]] = {}  # tick -> live orders, oldest first
    next_id = 1
    for op, a, b in ops:
        if op == "add":
            order = RestingOrder(next_id, "o", Side.BUY, Outcome.YES, a, b, b)
            next_id += 1
            side.add(order)
            model.setdefault(a, []).append(order)
        elif op == "remove":
            live = sorted((o for level in model.values() for o in level), key=lambda o: o.id)
            if not live:
                continue
            order = live[a % len(live)]
            side.remove(order)
            assert order.remaining == 0
            model[order.price].remove(order)
        else:
            if not side:
                continue
            best = side.best
            head = model[best][0]
            fill = min(a, head.remaining)
            done = side.fill_head(best, fill)
            assert done == (head.remaining == 0)
            if done:
                model[best].pop(0)
        model = {t: level for t, level in model.items() if level}

        prices = sorted(model, reverse=is_bid)
        assert side.best_price() == (prices[0] if prices else None)
        assert side.levels() == [
            Level(t, sum(o.remaining for o in model[t]), len(model[t])) for t in prices
        ]
        assert side.levels(2) == side.levels()[:2]
        for t in prices:
            assert side.head(t) is model[t][0]
        for t in (1, 500, 999):
            # Dead entries are counted exactly (they decide when a level is compacted).
            assert len(side.queues[t]) == side.count[t] + side.dead[t]
        assert list(side.orders()) == [o for t in prices for o in model[t]]
