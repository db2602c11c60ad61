"""A binary market: linked yes/no books, matching, fees, settlement and claims.

Matching (price-time priority over two linked books). An incoming order meets the best of:

- the opposite side of its own book (a *normal* trade), and
- the same side of the complementary book: a buy of one outcome at ``P`` meets a resting buy of
  the other at ``b >= 1000 - P`` and the pair *mints* a complete set; a sell at ``P`` meets a
  resting sell of the other at ``a <= 1000 - P`` and the pair *merges* (burns) one.

Candidates are compared by the *effective price* for the taker's outcome (``a`` for a resting
ask, ``1000 - b`` for a complementary bid, and so on): cheapest first for a buy, dearest first
for a sell. **Tie rule:** when a normal and a mint/merge candidate offer the same effective price,
the resting order placed earlier (lower order id) fills first, so time priority holds across the
two books exactly as within one level.

The resting order's price is the trade price; the taker keeps any improvement (a buying taker
gets the unused part of its lock back at once). The unfilled remainder of an order rests in its
own book.

**Self-trade policy:** when the best resting candidate belongs to the taker's owner (normal, mint
or merge alike), that resting order is cancelled, its lock refunded, a :class:`Cancel` with reason
``self-trade`` is reported, and matching continues with the next candidate. The incoming order is
never reduced by it.

Accounting (collateral base units), kept by counters on the market:
``collateral_deposited - collateral_withdrawn == collateral_escrow + collateral_backing
+ fees_collected``, and before resolution ``yes_supply == no_supply == collateral_backing``.

The market holds no wallets: the caller (a contract, the devnet, a preview) moves the assets
named by each result's ``locked`` and ``payouts``. As a guard against impossible input it refuses
a sell of more shares than exist outside the book (``InsufficientShares``). Everything is
deterministic: ids are sequential, there is no clock and no randomness.
"""

from enum import StrEnum
from typing import Final, TypeVar

from predmarket.exchange.book import BookSide, RestingOrder
from predmarket.exchange.errors import (
    AlreadyResolved,
    ClaimExceedsSupply,
    InsufficientShares,
    InvalidPrice,
    InvalidQuantity,
    InvalidRequest,
    MarketClosed,
    NotOrderOwner,
    NotResolved,
    UnknownOrder,
)
from predmarket.exchange.types import (
    BookDepth,
    Cancel,
    CancelReason,
    ClaimResult,
    MarketStatus,
    Order,
    Outcome,
    PlaceResult,
    Resolution,
    ResolveResult,
    Side,
    Trade,
    TradeKind,
    new_cancel,
    new_place_result,
    new_trade,
)
from predmarket.exchange.units import (
    MAX_TICK,
    MIN_TICK,
    QUANTITY_STEP,
    TICK_SCALE,
    buy_lock,
    fee,
    notional,
)

# Module-level aliases: the hot path compares enum members by identity.
_BUY: Final = Side.BUY
_SELL: Final = Side.SELL
_YES: Final = Outcome.YES
_NO: Final = Outcome.NO
_NORMAL: Final = TradeKind.NORMAL
_MINT: Final = TradeKind.MINT
_MERGE: Final = TradeKind.MERGE
_OPEN: Final = MarketStatus.OPEN
_SELF_TRADE: Final = CancelReason.SELF_TRADE
_OUTCOMES: Final = (Outcome.YES, Outcome.NO)  # by book index

# Lookups that normalise plain strings ("buy") to enum members; anything else is rejected.
_SIDES: Final[dict[str, Side]] = {s.value: s for s in Side}
_OUTCOMES_BY_VALUE: Final[dict[str, Outcome]] = {o.value: o for o in Outcome}
_RESOLUTIONS: Final[dict[str, Resolution]] = {r.value: r for r in Resolution}

_E = TypeVar("_E", bound=StrEnum)


def _enum_arg(members: dict[str, _E], value: object, field: str) -> _E:
    """The enum member ``value`` names, or InvalidRequest naming ``field``."""
    member = members.get(value) if isinstance(value, str) else None
    if member is None:
        allowed = ", ".join(repr(v) for v in members)
        raise InvalidRequest(f"{field} must be one of {allowed}, got {value!r}", field=field)
    return member


def _outcome_index(outcome: object) -> int:
    """0 for the yes book, 1 for the no book (accepts the plain strings too)."""
    return 0 if _enum_arg(_OUTCOMES_BY_VALUE, outcome, "outcome") is Outcome.YES else 1


# Collateral ticks one share base unit of (yes, no) redeems for, per resolution. INVALID pays
# 500/1000 for either outcome; the payout is floored, which is exact because every share amount
# is a multiple of 10**7.
_REDEMPTION_TICKS: Final[dict[Resolution, tuple[int, int]]] = {
    Resolution.YES: (TICK_SCALE, 0),
    Resolution.NO: (0, TICK_SCALE),
    Resolution.INVALID: (TICK_SCALE // 2, TICK_SCALE // 2),
}


class Market:
    """One binary market: a yes book and a no book, each with bids and asks."""

    __slots__ = (
        "_asks",
        "_bids",
        "_collateral_escrow",
        "_deposited",
        "_fees",
        "_next_order_id",
        "_next_trade_id",
        "_orders",
        "_resolution",
        "_shares_escrow",
        "_status",
        "_supply",
        "_volume",
        "_withdrawn",
    )

    def __init__(self) -> None:
        # Index 0 is the yes book, 1 the no book; ``1 - i`` is the complementary book.
        self._bids = (BookSide(is_bid=True), BookSide(is_bid=True))
        self._asks = (BookSide(is_bid=False), BookSide(is_bid=False))
        self._orders: dict[int, RestingOrder] = {}
        self._next_order_id = 1
        self._next_trade_id = 1
        self._status = MarketStatus.OPEN
        self._resolution: Resolution | None = None
        self._collateral_escrow = 0
        self._shares_escrow = [0, 0]
        self._supply = [0, 0]
        self._fees = 0
        self._deposited = 0
        self._withdrawn = 0
        self._volume = 0

    # -- orders ------------------------------------------------------------------------------

    def place(
        self, owner: str, side: Side, outcome: Outcome, price: int, quantity: int
    ) -> PlaceResult:
        """Place a limit order: match what crosses it, rest the remainder.

        A buy locks ``buy_lock(price, quantity)`` collateral; a sell locks ``quantity`` shares of
        ``outcome``. Raises MarketClosed, InvalidRequest, InvalidPrice, InvalidQuantity or
        InsufficientShares, before anything changes.
        """
        if self._status is not _OPEN:
            raise MarketClosed(f"market is {self._status}: no orders can be placed")
        if side is not _BUY and side is not _SELL:
            side = _enum_arg(_SIDES, side, "side")
        if outcome is _YES:
            index = 0
        elif outcome is _NO:
            index = 1
        else:
            index = _outcome_index(outcome)
        if type(price) is not int or not MIN_TICK <= price <= MAX_TICK:
            raise InvalidPrice(
                f"price must be an integer tick in {MIN_TICK}..{MAX_TICK}, got {price!r}",
                field="price",
            )
        if type(quantity) is not int or quantity <= 0 or quantity % QUANTITY_STEP:
            raise InvalidQuantity(
                f"quantity must be a positive integer multiple of {QUANTITY_STEP} base units, "
                f"got {quantity!r}",
                field="quantity",
            )
        if type(owner) is not str or not owner:
            raise InvalidRequest(f"owner must be a non-empty string, got {owner!r}", field="owner")
        if side is _BUY:
            return self._place_buy(owner, index, price, quantity)
        free = self._supply[index] - self._shares_escrow[index]
        if quantity > free:
            raise InsufficientShares(
                f"quantity {quantity} exceeds the {free} {_OUTCOMES[index]} shares "
                "outside the book",
                field="quantity",
            )
        return self._place_sell(owner, index, price, quantity)

    def cancel(self, owner: str, order_id: int) -> Cancel:
        """Cancel a resting order of ``owner``; the result's ``refund`` is its remaining lock."""
        order = self._orders.get(order_id)
        if order is None:
            raise UnknownOrder(f"no resting order with order_id {order_id!r}", field="order_id")
        if order.owner != owner:
            raise NotOrderOwner(
                f"order_id {order_id} does not belong to owner {owner!r}", field="owner"
            )
        return self._cancel(order, CancelReason.OWNER)

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop trading: no new orders; resting orders may still be cancelled until resolve."""
        if self._status is MarketStatus.RESOLVED:
            raise AlreadyResolved("market is already resolved")
        self._status = MarketStatus.CLOSED

    def resolve(self, resolution: Resolution) -> ResolveResult:
        """Set the outcome, cancel and refund every resting order (in id order)."""
        if self._status is MarketStatus.RESOLVED:
            raise AlreadyResolved(f"market is already resolved as {self._resolution}")
        res = _enum_arg(_RESOLUTIONS, resolution, "resolution")
        # Dict order is id order: orders enter the dict when they start to rest, at placement.
        cancels = tuple(
            self._cancel(order, CancelReason.RESOLVED) for order in list(self._orders.values())
        )
        self._status = MarketStatus.RESOLVED
        self._resolution = res
        return ResolveResult(res, cancels)

    def claim(self, owner: str, yes_quantity: int, no_quantity: int) -> ClaimResult:
        """Redeem shares handed in by ``owner`` after resolution; they are burned.

        A winning share base unit pays 1 collateral base unit, a losing one 0; under INVALID
        each share base unit of either outcome pays 500/1000 (floored; exact for valid amounts).
        """
        if self._resolution is None:
            raise NotResolved("claims open once the market is resolved")
        if type(owner) is not str or not owner:
            raise InvalidRequest(f"owner must be a non-empty string, got {owner!r}", field="owner")
        for field, qty in (("yes_quantity", yes_quantity), ("no_quantity", no_quantity)):
            if type(qty) is not int or qty < 0 or qty % QUANTITY_STEP:
                raise InvalidQuantity(
                    f"{field} must be a non-negative integer multiple of {QUANTITY_STEP} "
                    f"base units, got {qty!r}",
                    field=field,
                )
        if yes_quantity == 0 and no_quantity == 0:
            raise InvalidQuantity(
                "a claim must hand in some shares: yes_quantity and no_quantity are both 0",
                field="yes_quantity",
            )
        for field, qty, supply in (
            ("yes_quantity", yes_quantity, self._supply[0]),
            ("no_quantity", no_quantity, self._supply[1]),
        ):
            if qty > supply:
                raise ClaimExceedsSupply(
                    f"{field} {qty} exceeds the {supply} shares outstanding", field=field
                )
        yes_ticks, no_ticks = _REDEMPTION_TICKS[self._resolution]
        amount = (yes_quantity * yes_ticks + no_quantity * no_ticks) // TICK_SCALE
        self._supply[0] -= yes_quantity
        self._supply[1] -= no_quantity
        self._withdrawn += amount
        return ClaimResult(owner, yes_quantity, no_quantity, amount)

    # -- reads -------------------------------------------------------------------------------

    @property
    def status(self) -> MarketStatus:
        return self._status

    @property
    def resolution(self) -> Resolution | None:
        return self._resolution

    @property
    def next_order_id(self) -> int:
        """The id the next placed order will get."""
        return self._next_order_id

    def get_order(self, order_id: int) -> Order | None:
        """A snapshot of the resting order ``order_id``, or None if it is not resting."""
        order = self._orders.get(order_id)
        return None if order is None else order.snapshot()

    def get_order_or_raise(self, order_id: int) -> Order:
        """Like :meth:`get_order` but raises :class:`UnknownOrder`."""
        order = self._orders.get(order_id)
        if order is None:
            raise UnknownOrder(f"no resting order with order_id {order_id!r}", field="order_id")
        return order.snapshot()

    def is_resting(self, order_id: int) -> bool:
        """True when ``order_id`` is a live order in the book (cheaper than ``get_order``)."""
        return order_id in self._orders

    def orders(self) -> list[Order]:
        """Snapshots of every resting order, in id (time) order."""
        return [o.snapshot() for o in self._orders.values()]

    @property
    def open_order_count(self) -> int:
        return len(self._orders)

    def best_bid(self, outcome: Outcome) -> int | None:
        """Highest resting bid tick of ``outcome``'s book, or None."""
        return self._bids[_outcome_index(outcome)].best_price()

    def best_ask(self, outcome: Outcome) -> int | None:
        """Lowest resting ask tick of ``outcome``'s book, or None."""
        return self._asks[_outcome_index(outcome)].best_price()

    def depth(self, outcome: Outcome, levels: int = 20) -> BookDepth:
        """Aggregated levels of ``outcome``'s book: ``levels`` per side from the best outward."""
        index = _outcome_index(outcome)
        return BookDepth(
            _OUTCOMES[index],
            tuple(self._bids[index].levels(levels)),
            tuple(self._asks[index].levels(levels)),
        )

    @property
    def collateral_escrow(self) -> int:
        """Collateral locked by resting buy orders (exactly the sum of their remaining locks)."""
        return self._collateral_escrow

    def shares_escrow(self, outcome: Outcome) -> int:
        """Shares of ``outcome`` locked by resting sell orders."""
        return self._shares_escrow[_outcome_index(outcome)]

    def supply(self, outcome: Outcome) -> int:
        """Outstanding shares of ``outcome`` (minted, not yet merged or claimed)."""
        return self._supply[_outcome_index(outcome)]

    @property
    def yes_supply(self) -> int:
        return self._supply[0]

    @property
    def no_supply(self) -> int:
        return self._supply[1]

    @property
    def collateral_backing(self) -> int:
        """Collateral owed to outstanding shares: one per complete set before resolution, the
        redemption value of the remaining shares after it."""
        if self._resolution is None:
            return self._supply[0]
        yes_ticks, no_ticks = _REDEMPTION_TICKS[self._resolution]
        return (self._supply[0] * yes_ticks + self._supply[1] * no_ticks) // TICK_SCALE

    @property
    def fees_collected(self) -> int:
        """Fees accrued to the protocol."""
        return self._fees

    @property
    def collateral_deposited(self) -> int:
        """Total collateral ever locked by buy orders."""
        return self._deposited

    @property
    def collateral_withdrawn(self) -> int:
        """Total collateral ever paid out (proceeds, refunds, merges, claims)."""
        return self._withdrawn

    @property
    def collateral_held(self) -> int:
        """Collateral the market holds now: escrow + backing + fees."""
        return self._deposited - self._withdrawn

    @property
    def volume(self) -> int:
        """Traded volume in collateral base units: the notional of each normal trade plus the
        quantity (the collateral minted or released) of each mint and merge."""
        return self._volume

    # -- matching ----------------------------------------------------------------------------
    # The two loops below are the hot path; they read the book sides' arrays directly and build
    # records with the fast constructors of ``types``. Amounts use the ``units`` functions, whose
    # results are exact for valid quantities (see units), so per-fill locks add up to the lock
    # of the whole order.

    def _place_buy(self, owner: str, index: int, price: int, quantity: int) -> PlaceResult:
        order_id = self._next_order_id
        self._next_order_id = order_id + 1
        self._deposited += buy_lock(price, quantity)
        remaining = quantity
        trades: tuple[Trade, ...] = ()
        cancels: tuple[Cancel, ...] = ()
        # Skip setting up the matching loop when nothing can cross (a quote away from the touch).
        if self._asks[index].best <= price or self._bids[1 - index].best >= TICK_SCALE - price:
            remaining, trades, cancels = self._match_buy(order_id, owner, index, price, quantity)
        outcome = _OUTCOMES[index]
        if remaining:
            resting = RestingOrder(order_id, owner, _BUY, outcome, price, quantity, remaining)
            self._bids[index].add(resting)
            self._orders[order_id] = resting
            self._collateral_escrow += buy_lock(price, remaining)
        return new_place_result(
            order_id, owner, _BUY, outcome, price, quantity, remaining, trades, cancels
        )

    def _place_sell(self, owner: str, index: int, price: int, quantity: int) -> PlaceResult:
        order_id = self._next_order_id
        self._next_order_id = order_id + 1
        remaining = quantity
        trades: tuple[Trade, ...] = ()
        cancels: tuple[Cancel, ...] = ()
        if self._bids[index].best >= price or self._asks[1 - index].best <= TICK_SCALE - price:
            remaining, trades, cancels = self._match_sell(order_id, owner, index, price, quantity)
        outcome = _OUTCOMES[index]
        if remaining:
            resting = RestingOrder(order_id, owner, _SELL, outcome, price, quantity, remaining)
            self._asks[index].add(resting)
            self._orders[order_id] = resting
            self._shares_escrow[index] += remaining
        return new_place_result(
            order_id, owner, _SELL, outcome, price, quantity, remaining, trades, cancels
        )

    def _match_buy(
        self, order_id: int, owner: str, index: int, price: int, quantity: int
    ) -> tuple[int, tuple[Trade, ...], tuple[Cancel, ...]]:
        """Fill an incoming buy against resting asks and complementary bids (mints).

        Returns the unfilled quantity, the trades and the self-trade cancellations.
        """
        own_asks = self._asks[index]
        comp_bids = self._bids[1 - index]
        ask_queues = own_asks.queues
        bid_queues = comp_bids.queues
        orders = self._orders
        first_trade_id = self._next_trade_id
        trades: list[Trade] = []
        cancels: list[Cancel] = []
        remaining = quantity
        # Counter changes are summed locally and applied once after the loop.
        fees = withdrawn = volume = minted = escrow_out = shares_out = 0
        while remaining:
            ask = own_asks.best  # NO_ASK (1000) when empty: never <= price
            bid = comp_bids.best  # NO_BID (0) when empty
            mint_price = TICK_SCALE - bid  # the yes/no price a complementary bid offers
            if ask < mint_price:
                if ask > price:
                    break
                is_normal = True
            elif mint_price < ask:
                if mint_price > price:
                    break
                is_normal = False
            else:
                if ask > price:
                    break
                # Tie between a resting ask and a complementary bid: the earlier order first.
                is_normal = ask_queues[ask][0].id < bid_queues[bid][0].id
            if is_normal:
                maker = ask_queues[ask][0]
                if maker.owner == owner:
                    cancels.append(self._cancel(maker, _SELF_TRADE))
                    continue
                fill = maker.remaining if maker.remaining < remaining else remaining
                paid = notional(ask, fill)
                cost = buy_lock(ask, fill)  # what the taker pays: notional + fee
                fees += cost - paid
                # Leaving the market: the seller's proceeds and the taker's price improvement.
                withdrawn += paid + buy_lock(price, fill) - cost
                shares_out += fill
                volume += paid
                if own_asks.fill_head(ask, fill):
                    del orders[maker.id]
                trade = new_trade(
                    first_trade_id + len(trades),
                    _NORMAL,
                    fill,
                    maker.id,
                    maker.owner,
                    _SELL,
                    maker.outcome,
                    ask,
                    order_id,
                    owner,
                )
            else:
                maker = bid_queues[bid][0]
                if maker.owner == owner:
                    cancels.append(self._cancel(maker, _SELF_TRADE))
                    continue
                fill = maker.remaining if maker.remaining < remaining else remaining
                # Both buyers pay notional + fee at their own leg's price; the two notionals
                # (bid + mint_price == 1000) back ``fill`` new complete sets exactly.
                escrow_out += buy_lock(bid, fill)
                fees += fee(bid, fill) + fee(mint_price, fill)
                withdrawn += buy_lock(price, fill) - buy_lock(mint_price, fill)
                minted += fill
                volume += fill
                if comp_bids.fill_head(bid, fill):
                    del orders[maker.id]
                trade = new_trade(
                    first_trade_id + len(trades),
                    _MINT,
                    fill,
                    maker.id,
                    maker.owner,
                    _BUY,
                    maker.outcome,
                    bid,
                    order_id,
                    owner,
                )
            trades.append(trade)
            remaining -= fill
        if trades:
            self._next_trade_id += len(trades)
            self._fees += fees
            self._withdrawn += withdrawn
            self._volume += volume
            self._collateral_escrow -= escrow_out
            self._shares_escrow[index] -= shares_out
            if minted:
                self._supply[0] += minted
                self._supply[1] += minted
        return remaining, tuple(trades), tuple(cancels)

    def _match_sell(
        self, order_id: int, owner: str, index: int, price: int, quantity: int
    ) -> tuple[int, tuple[Trade, ...], tuple[Cancel, ...]]:
        """Fill an incoming sell against resting bids and complementary asks (merges).

        Returns the unfilled quantity, the trades and the self-trade cancellations.
        """
        own_bids = self._bids[index]
        comp_asks = self._asks[1 - index]
        bid_queues = own_bids.queues
        ask_queues = comp_asks.queues
        orders = self._orders
        first_trade_id = self._next_trade_id
        trades: list[Trade] = []
        cancels: list[Cancel] = []
        remaining = quantity
        # Counter changes are summed locally and applied once after the loop.
        fees = withdrawn = volume = merged = escrow_out = 0
        while remaining:
            bid = own_bids.best  # NO_BID (0) when empty: never >= price
            ask = comp_asks.best  # NO_ASK (1000) when empty
            merge_price = TICK_SCALE - ask  # the price a complementary ask pays for our leg
            if bid > merge_price:
                if bid < price:
                    break
                is_normal = True
            elif merge_price > bid:
                if merge_price < price:
                    break
                is_normal = False
            else:
                if bid < price:
                    break
                # Tie between a resting bid and a complementary ask: the earlier order first.
                is_normal = bid_queues[bid][0].id < ask_queues[ask][0].id
            if is_normal:
                maker = bid_queues[bid][0]
                if maker.owner == owner:
                    cancels.append(self._cancel(maker, _SELF_TRADE))
                    continue
                fill = maker.remaining if maker.remaining < remaining else remaining
                paid = notional(bid, fill)
                # The buyer's lock for this part leaves escrow: the notional to the taker, the
                # fee to the protocol. A maker trades at its own price: no improvement to refund.
                cost = buy_lock(bid, fill)
                escrow_out += cost
                fees += cost - paid
                withdrawn += paid
                volume += paid
                if own_bids.fill_head(bid, fill):
                    del orders[maker.id]
                trade = new_trade(
                    first_trade_id + len(trades),
                    _NORMAL,
                    fill,
                    maker.id,
                    maker.owner,
                    _BUY,
                    maker.outcome,
                    bid,
                    order_id,
                    owner,
                )
            else:
                maker = ask_queues[ask][0]
                if maker.owner == owner:
                    cancels.append(self._cancel(maker, _SELF_TRADE))
                    continue
                fill = maker.remaining if maker.remaining < remaining else remaining
                # A complete set is burned; its collateral goes to the two sellers
                # (notional(ask) + notional(1000 - ask) == fill exactly). Sellers pay no fee.
                merged += fill
                withdrawn += fill
                volume += fill
                if comp_asks.fill_head(ask, fill):
                    del orders[maker.id]
                trade = new_trade(
                    first_trade_id + len(trades),
                    _MERGE,
                    fill,
                    maker.id,
                    maker.owner,
                    _SELL,
                    maker.outcome,
                    ask,
                    order_id,
                    owner,
                )
            trades.append(trade)
            remaining -= fill
        if trades:
            self._next_trade_id += len(trades)
            self._fees += fees
            self._withdrawn += withdrawn
            self._volume += volume
            self._collateral_escrow -= escrow_out
            if merged:
                # The maker's shares of the other outcome leave escrow; the taker's never
                # entered it. Both are burned.
                self._shares_escrow[1 - index] -= merged
                self._supply[0] -= merged
                self._supply[1] -= merged
        return remaining, tuple(trades), tuple(cancels)

    def _cancel(self, order: RestingOrder, reason: CancelReason) -> Cancel:
        """Remove ``order`` from its book and release exactly the lock of its remainder."""
        quantity = order.remaining
        index = 0 if order.outcome is _YES else 1
        if order.side is _BUY:
            lock = buy_lock(order.price, quantity)
            self._collateral_escrow -= lock
            self._withdrawn += lock
            self._bids[index].remove(order)
        else:
            self._shares_escrow[index] -= quantity
            self._asks[index].remove(order)
        del self._orders[order.id]
        return new_cancel(
            order.id, order.owner, order.side, order.outcome, order.price, quantity, reason
        )
