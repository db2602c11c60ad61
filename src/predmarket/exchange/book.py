"""One side (bids or asks) of one outcome's order book.

A side is an array of per-tick FIFO queues indexed by tick (1..999), the live quantity and order
count of each tick, a bitmask of the non-empty ticks and a pointer to the best tick. The bitmask
finds the next best tick when the best one empties without scanning 999 slots (one C-level
``bit_length`` on a 1000-bit int).

Cancellation is lazy: a cancelled order is marked dead (``remaining == 0``) and its level's
totals are reduced at once, but the entry stays in the deque until it reaches the head. The
invariant that keeps matching simple: **the head of every non-empty level is a live order.**
A level holding at least ``COMPACT_MIN_DEAD`` dead entries, and more dead than live ones, is
compacted so memory stays bounded.
"""

from collections import deque
from collections.abc import Iterator
from typing import Final

from predmarket.exchange.types import Level, Order, Outcome, Side
from predmarket.exchange.units import MAX_TICK, MIN_TICK, TICK_SCALE

NO_BID: Final = 0
"""``BookSide.best`` of an empty bid side: below every valid tick."""
NO_ASK: Final = TICK_SCALE
"""``BookSide.best`` of an empty ask side: above every valid tick."""

COMPACT_MIN_DEAD: Final = 32
"""A level is compacted once it holds at least this many dead entries, and more dead than live."""


class RestingOrder:
    """A live order in the book (mutable; the public view is :class:`Order`)."""

    __slots__ = ("id", "outcome", "owner", "price", "quantity", "remaining", "side")

    def __init__(
        self,
        id: int,
        owner: str,
        side: Side,
        outcome: Outcome,
        price: int,
        quantity: int,
        remaining: int,
    ) -> None:
        self.id = id
        self.owner = owner
        self.side = side
        self.outcome = outcome
        self.price = price
        self.quantity = quantity  # as originally ordered
        self.remaining = remaining  # still resting; 0 once cancelled (a dead entry)

    def snapshot(self) -> Order:
        return Order(
            self.id, self.owner, self.side, self.outcome, self.price, self.quantity, self.remaining
        )


_UNUSED: Final[deque[RestingOrder]] = deque()


class BookSide:
    """Bids or asks of one outcome: price-time priority over ticks 1..999."""

    __slots__ = (
        "best",
        "compact_min_dead",
        "count",
        "dead",
        "is_bid",
        "mask",
        "quantity",
        "queues",
    )

    def __init__(self, *, is_bid: bool, compact_min_dead: int = COMPACT_MIN_DEAD) -> None:
        self.is_bid = is_bid
        self.compact_min_dead = compact_min_dead
        # Deques are created on first use of a tick and kept: an empty deque costs ~600 bytes,
        # so allocating all 999 up front would cost ~2.4 MB per market. Unused ticks share one
        # empty placeholder that is never appended to.
        self.queues: list[deque[RestingOrder]] = [_UNUSED] * (TICK_SCALE + 1)
        self.quantity: list[int] = [0] * (TICK_SCALE + 1)
        self.count: list[int] = [0] * (TICK_SCALE + 1)
        self.dead: list[int] = [0] * (TICK_SCALE + 1)
        self.mask = 0
        self.best: int = NO_BID if is_bid else NO_ASK

    # -- copying and pickling ----------------------------------------------------------------
    # Unused ticks share the ``_UNUSED`` placeholder, recognised by identity. Pickle and deepcopy
    # would turn it into one ordinary deque shared by all those ticks, so empty queues are
    # stored as None and restored to the placeholder.

    def __getstate__(self) -> dict[str, object]:
        state: dict[str, object] = {name: getattr(self, name) for name in self.__slots__}
        state["queues"] = [q if q else None for q in self.queues]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        stored: list[deque[RestingOrder] | None] = state["queues"]  # type: ignore[assignment]
        self.queues = [_UNUSED if q is None else q for q in stored]

    # -- reads -------------------------------------------------------------------------------

    def __bool__(self) -> bool:
        return self.mask != 0

    def best_price(self) -> int | None:
        """The best tick (highest bid / lowest ask), or None when the side is empty."""
        return self.best if self.mask else None

    def head(self, price: int) -> RestingOrder:
        """The oldest live order at ``price`` (the level must be non-empty)."""
        return self.queues[price][0]

    def levels(self, limit: int | None = None) -> list[Level]:
        """Aggregated levels from the best outward, at most ``limit`` of them."""
        out: list[Level] = []
        mask = self.mask
        while mask and (limit is None or len(out) < limit):
            tick = mask.bit_length() - 1 if self.is_bid else (mask & -mask).bit_length() - 1
            mask ^= 1 << tick
            out.append(Level(tick, self.quantity[tick], self.count[tick]))
        return out

    def orders(self) -> Iterator[RestingOrder]:
        """Live orders from the best level outward, FIFO within a level."""
        ticks = range(MAX_TICK, MIN_TICK - 1, -1) if self.is_bid else range(MIN_TICK, MAX_TICK + 1)
        for tick in ticks:
            if self.count[tick]:
                yield from (o for o in self.queues[tick] if o.remaining)

    # -- writes ------------------------------------------------------------------------------

    def add(self, order: RestingOrder) -> None:
        """Append ``order`` at the back of its price level."""
        tick = order.price
        queue = self.queues[tick]
        if queue is _UNUSED:
            queue = self.queues[tick] = deque()
        queue.append(order)
        self.quantity[tick] += order.remaining
        count = self.count[tick] + 1
        self.count[tick] = count
        if count == 1:
            self.mask |= 1 << tick
            if self.is_bid:
                if tick > self.best:
                    self.best = tick
            elif tick < self.best:
                self.best = tick

    def fill_head(self, price: int, quantity: int) -> bool:
        """Take ``quantity`` from the head order at ``price``.

        Returns True when the head is now completely filled and has left the book.
        """
        queue = self.queues[price]
        head = queue[0]
        self.quantity[price] -= quantity
        left = head.remaining - quantity
        head.remaining = left
        if left:
            return False
        queue.popleft()
        count = self.count[price] - 1
        self.count[price] = count
        if not count:
            self._empty_level(price, queue)
        elif not queue[0].remaining:
            self._drop_dead_heads(price, queue)
        return True

    def remove(self, order: RestingOrder) -> None:
        """Take a live order out of the book (cancellation); its ``remaining`` becomes 0."""
        tick = order.price
        queue = self.queues[tick]
        assert order.remaining > 0, "order is not live"
        self.quantity[tick] -= order.remaining
        order.remaining = 0
        count = self.count[tick] - 1
        self.count[tick] = count
        if count == 0:
            self._empty_level(tick, queue)
        elif queue[0] is order:
            queue.popleft()
            if not queue[0].remaining:
                self._drop_dead_heads(tick, queue)
        else:
            dead = self.dead[tick] + 1
            if dead >= self.compact_min_dead and dead > count:
                # Many cancels behind an old live head: rebuild the level without them.
                live = [o for o in queue if o.remaining]
                queue.clear()
                queue.extend(live)
                dead = 0
            self.dead[tick] = dead

    # -- internals ---------------------------------------------------------------------------

    def _drop_dead_heads(self, tick: int, queue: deque[RestingOrder]) -> None:
        while not queue[0].remaining:
            queue.popleft()
            self.dead[tick] -= 1

    def _empty_level(self, tick: int, queue: deque[RestingOrder]) -> None:
        queue.clear()
        self.dead[tick] = 0
        mask = self.mask ^ (1 << tick)
        self.mask = mask
        if tick == self.best:
            if self.is_bid:
                self.best = mask.bit_length() - 1 if mask else NO_BID
            else:
                self.best = (mask & -mask).bit_length() - 1 if mask else NO_ASK
