"""Enums and immutable records of the market rules.

The records hold what a market contract needs to emit its events and pay its outputs. Only the
facts are stored; amounts that follow from them (fees, payouts, refunds) are derived properties,
so the matching loop builds as few objects as possible and the derived numbers cannot disagree
with the facts they come from.
"""

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from predmarket.exchange.units import TICK_SCALE, buy_lock, fee, notional


class Side(StrEnum):
    BUY = "buy"
    SELL = "sell"


class Outcome(StrEnum):
    YES = "yes"
    NO = "no"

    @property
    def other(self) -> "Outcome":
        """The complementary outcome (yes <-> no)."""
        return Outcome.NO if self is Outcome.YES else Outcome.YES


class Resolution(StrEnum):
    YES = "yes"
    NO = "no"
    INVALID = "invalid"


class TradeKind(StrEnum):
    NORMAL = "normal"
    """A buyer and a seller of the same outcome; shares move seller -> buyer."""
    MINT = "mint"
    """A yes buyer and a no buyer; their collateral backs a new complete set."""
    MERGE = "merge"
    """A yes seller and a no seller; a complete set is burned and its collateral split."""


class Asset(StrEnum):
    COLLATERAL = "collateral"
    YES = "yes"
    NO = "no"


class MarketStatus(StrEnum):
    OPEN = "open"
    """Orders may be placed and cancelled."""
    CLOSED = "closed"
    """Trading has stopped; resting orders may still be cancelled; awaiting resolution."""
    RESOLVED = "resolved"
    """The outcome is known; every order was cancelled; shares may be claimed."""


class CancelReason(StrEnum):
    OWNER = "owner"
    """The owner cancelled the order."""
    SELF_TRADE = "self-trade"
    """The owner's own incoming order reached it first (self-trade prevention)."""
    RESOLVED = "resolved"
    """The market was resolved while the order rested."""


class PayoutReason(StrEnum):
    FILL = "fill"
    """Proceeds of a trade: collateral to a seller, shares to a buyer."""
    PRICE_IMPROVEMENT = "price-improvement"
    """A taker buy filled below its limit gets back the unused part of its lock."""
    CANCEL = "cancel"
    """The lock of a cancelled order's remainder returns to its owner."""
    CLAIM = "claim"
    """Redemption of shares after resolution."""


_OUTCOME_ASSET = {Outcome.YES: Asset.YES, Outcome.NO: Asset.NO}


def outcome_asset(outcome: Outcome) -> Asset:
    """The share token of ``outcome``."""
    return _OUTCOME_ASSET[outcome]


@dataclass(frozen=True, slots=True)
class Payout:
    """An amount the market pays out to ``owner`` (a contract output)."""

    owner: str
    asset: Asset
    amount: int
    reason: PayoutReason


@dataclass(frozen=True, slots=True)
class Order:
    """A snapshot of a resting order."""

    id: int
    owner: str
    side: Side
    outcome: Outcome
    price: int
    quantity: int
    """Quantity originally ordered, in share base units."""
    remaining: int
    """Quantity still resting in the book."""

    @property
    def filled(self) -> int:
        return self.quantity - self.remaining

    @property
    def locked_asset(self) -> Asset:
        """Collateral for a buy, the outcome's share token for a sell."""
        return Asset.COLLATERAL if self.side is Side.BUY else outcome_asset(self.outcome)

    @property
    def locked(self) -> int:
        """What the remainder holds in escrow: ``buy_lock(price, remaining)`` or the shares."""
        if self.side is Side.BUY:
            return buy_lock(self.price, self.remaining)
        return self.remaining


@dataclass(frozen=True, slots=True)
class Trade:
    """One match between a resting (maker) order and an incoming (taker) order.

    ``maker_price`` is the trade price, in ticks of the maker's outcome: the resting order's price
    always sets the price and the taker keeps any improvement. In a mint or merge the taker trades
    the other outcome at ``TICK_SCALE - maker_price``.
    """

    trade_id: int
    kind: TradeKind
    quantity: int
    maker_order_id: int
    maker_owner: str
    maker_side: Side
    maker_outcome: Outcome
    maker_price: int
    taker_order_id: int
    taker_owner: str

    @property
    def taker_side(self) -> Side:
        if self.kind is TradeKind.NORMAL:
            return Side.SELL if self.maker_side is Side.BUY else Side.BUY
        return self.maker_side

    @property
    def taker_outcome(self) -> Outcome:
        if self.kind is TradeKind.NORMAL:
            return self.maker_outcome
        return self.maker_outcome.other

    @property
    def taker_price(self) -> int:
        """Effective price of the taker's leg, in ticks of the taker's outcome."""
        if self.kind is TradeKind.NORMAL:
            return self.maker_price
        return TICK_SCALE - self.maker_price

    @property
    def yes_price(self) -> int:
        """The trade's price expressed as a yes price (for charts and last-price quotes)."""
        if self.maker_outcome is Outcome.YES:
            return self.maker_price
        return TICK_SCALE - self.maker_price

    @property
    def maker_notional(self) -> int:
        return notional(self.maker_price, self.quantity)

    @property
    def taker_notional(self) -> int:
        return notional(self.taker_price, self.quantity)

    @property
    def maker_fee(self) -> int:
        """Fee paid by the maker: 2.5 % of its notional when it buys, else 0."""
        return fee(self.maker_price, self.quantity) if self.maker_side is Side.BUY else 0

    @property
    def taker_fee(self) -> int:
        """Fee paid by the taker: 2.5 % of its notional when it buys, else 0."""
        return fee(self.taker_price, self.quantity) if self.taker_side is Side.BUY else 0

    @property
    def fees(self) -> int:
        return self.maker_fee + self.taker_fee

    @property
    def volume(self) -> int:
        """Collateral exchanged: the notional of a normal trade, ``quantity`` for mint/merge."""
        if self.kind is TradeKind.NORMAL:
            return self.maker_notional
        return self.quantity

    @property
    def payouts(self) -> tuple[Payout, ...]:
        """What the market pays out for this trade (not counting the taker's price improvement).

        - normal, taker buys: shares to the taker, notional to the maker (seller);
        - normal, taker sells: notional to the taker, shares to the maker (buyer);
        - mint: the taker's outcome shares to the taker, the other outcome's to the maker;
        - merge: each seller gets the notional of its own leg (they sum to ``quantity``).
        """
        q = self.quantity
        if self.kind is TradeKind.NORMAL:
            shares = outcome_asset(self.maker_outcome)
            proceeds = notional(self.maker_price, q)
            if self.maker_side is Side.SELL:
                return (
                    Payout(self.taker_owner, shares, q, PayoutReason.FILL),
                    Payout(self.maker_owner, Asset.COLLATERAL, proceeds, PayoutReason.FILL),
                )
            return (
                Payout(self.taker_owner, Asset.COLLATERAL, proceeds, PayoutReason.FILL),
                Payout(self.maker_owner, shares, q, PayoutReason.FILL),
            )
        if self.kind is TradeKind.MINT:
            return (
                Payout(self.taker_owner, outcome_asset(self.taker_outcome), q, PayoutReason.FILL),
                Payout(self.maker_owner, outcome_asset(self.maker_outcome), q, PayoutReason.FILL),
            )
        return (
            Payout(self.taker_owner, Asset.COLLATERAL, self.taker_notional, PayoutReason.FILL),
            Payout(self.maker_owner, Asset.COLLATERAL, self.maker_notional, PayoutReason.FILL),
        )


@dataclass(frozen=True, slots=True)
class Cancel:
    """A resting order removed from the book, with its remainder refunded."""

    order_id: int
    owner: str
    side: Side
    outcome: Outcome
    price: int
    quantity: int
    """The remaining quantity that was cancelled."""
    reason: CancelReason

    @property
    def refund(self) -> Payout:
        """Exactly the lock of the cancelled remainder: collateral for a buy, shares for a sell."""
        if self.side is Side.BUY:
            amount = buy_lock(self.price, self.quantity)
            return Payout(self.owner, Asset.COLLATERAL, amount, PayoutReason.CANCEL)
        return Payout(self.owner, outcome_asset(self.outcome), self.quantity, PayoutReason.CANCEL)


@dataclass(frozen=True, slots=True)
class PlaceResult:
    """Everything that happened when an order was placed.

    ``trades`` and ``cancels`` are in execution order. The order's unfilled ``remaining`` rests in
    its book under ``order_id`` (limit orders only: nothing is discarded).
    """

    order_id: int
    owner: str
    side: Side
    outcome: Outcome
    price: int
    quantity: int
    remaining: int
    trades: tuple[Trade, ...]
    cancels: tuple[Cancel, ...]
    """Resting orders of the same owner cancelled by self-trade prevention."""

    @property
    def filled(self) -> int:
        return self.quantity - self.remaining

    @property
    def rests(self) -> bool:
        """True when part of the order now rests in the book."""
        return self.remaining > 0

    @property
    def locked_asset(self) -> Asset:
        return Asset.COLLATERAL if self.side is Side.BUY else outcome_asset(self.outcome)

    @property
    def locked(self) -> int:
        """What the owner hands to the market with the order (``collateralRequired`` for a buy)."""
        if self.side is Side.BUY:
            return buy_lock(self.price, self.quantity)
        return self.quantity

    @property
    def fees(self) -> int:
        """Fees charged by this placement's trades, whoever pays them: a buying taker, and a
        buying maker (its fee comes out of its lock when a sell or a mint reaches it)."""
        return sum(t.fees for t in self.trades)

    @property
    def improvement_refund(self) -> int:
        """Collateral returned to a buying taker because it filled below its limit."""
        if self.side is not Side.BUY:
            return 0
        total = 0
        for t in self.trades:
            total += buy_lock(self.price, t.quantity) - buy_lock(t.taker_price, t.quantity)
        return total

    @property
    def resting_order(self) -> Order | None:
        """A snapshot of the remainder as it rests in the book, if any."""
        if self.remaining == 0:
            return None
        return Order(
            self.order_id,
            self.owner,
            self.side,
            self.outcome,
            self.price,
            self.quantity,
            self.remaining,
        )

    @property
    def payouts(self) -> tuple[Payout, ...]:
        """Every output of this placement: per trade its fills then the taker's price
        improvement refund (buys only, when positive), then the self-trade cancellation refunds.
        """
        out: list[Payout] = []
        buy = self.side is Side.BUY
        for t in self.trades:
            out.extend(t.payouts)
            if buy:
                refund = buy_lock(self.price, t.quantity) - buy_lock(t.taker_price, t.quantity)
                if refund:
                    out.append(
                        Payout(self.owner, Asset.COLLATERAL, refund, PayoutReason.PRICE_IMPROVEMENT)
                    )
        out.extend(c.refund for c in self.cancels)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class ResolveResult:
    """The outcome set on a market and the resting orders it cancelled (in id order)."""

    resolution: Resolution
    cancels: tuple[Cancel, ...]

    @property
    def payouts(self) -> tuple[Payout, ...]:
        return tuple(c.refund for c in self.cancels)


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """Shares handed in after resolution (and burned) and the collateral paid for them."""

    owner: str
    yes_quantity: int
    no_quantity: int
    amount: int

    @property
    def payouts(self) -> tuple[Payout, ...]:
        if self.amount == 0:
            return ()
        return (Payout(self.owner, Asset.COLLATERAL, self.amount, PayoutReason.CLAIM),)


@dataclass(frozen=True, slots=True)
class Level:
    """An aggregated price level of one side of a book."""

    price: int
    total_quantity: int
    order_count: int


@dataclass(frozen=True, slots=True)
class BookDepth:
    """The best ``levels`` of one outcome's book: bids high to low, asks low to high."""

    outcome: Outcome
    bids: tuple[Level, ...]
    asks: tuple[Level, ...]


# -- fast constructors for the matching loop ---------------------------------------------------
# A frozen dataclass's generated __init__ stores every field through ``object.__setattr__``
# (about 90 ns a field), which made building Trade/PlaceResult/Cancel a third of the engine's
# time. Storing through the slot descriptors directly costs under half of that and yields the
# same frozen instance (``new_trade(...) == Trade(...)``; tests check each factory against its
# class). Keep the parameter lists in field order.

_new = object.__new__


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Any, ...]:
    assert names == tuple(f.name for f in fields(cls)), f"{cls.__name__} fields changed"
    return tuple(vars(cls)[name].__set__ for name in names)


(_t0, _t1, _t2, _t3, _t4, _t5, _t6, _t7, _t8, _t9) = _slot_setters(
    Trade,
    (
        "trade_id",
        "kind",
        "quantity",
        "maker_order_id",
        "maker_owner",
        "maker_side",
        "maker_outcome",
        "maker_price",
        "taker_order_id",
        "taker_owner",
    ),
)


def new_trade(
    trade_id: int,
    kind: TradeKind,
    quantity: int,
    maker_order_id: int,
    maker_owner: str,
    maker_side: Side,
    maker_outcome: Outcome,
    maker_price: int,
    taker_order_id: int,
    taker_owner: str,
) -> Trade:
    """``Trade(...)`` without the frozen-init overhead."""
    t: Trade = _new(Trade)
    _t0(t, trade_id)
    _t1(t, kind)
    _t2(t, quantity)
    _t3(t, maker_order_id)
    _t4(t, maker_owner)
    _t5(t, maker_side)
    _t6(t, maker_outcome)
    _t7(t, maker_price)
    _t8(t, taker_order_id)
    _t9(t, taker_owner)
    return t


(_p0, _p1, _p2, _p3, _p4, _p5, _p6, _p7, _p8) = _slot_setters(
    PlaceResult,
    (
        "order_id",
        "owner",
        "side",
        "outcome",
        "price",
        "quantity",
        "remaining",
        "trades",
        "cancels",
    ),
)


def new_place_result(
    order_id: int,
    owner: str,
    side: Side,
    outcome: Outcome,
    price: int,
    quantity: int,
    remaining: int,
    trades: tuple[Trade, ...],
    cancels: tuple[Cancel, ...],
) -> PlaceResult:
    """``PlaceResult(...)`` without the frozen-init overhead."""
    r: PlaceResult = _new(PlaceResult)
    _p0(r, order_id)
    _p1(r, owner)
    _p2(r, side)
    _p3(r, outcome)
    _p4(r, price)
    _p5(r, quantity)
    _p6(r, remaining)
    _p7(r, trades)
    _p8(r, cancels)
    return r


(_c0, _c1, _c2, _c3, _c4, _c5, _c6) = _slot_setters(
    Cancel, ("order_id", "owner", "side", "outcome", "price", "quantity", "reason")
)


def new_cancel(
    order_id: int,
    owner: str,
    side: Side,
    outcome: Outcome,
    price: int,
    quantity: int,
    reason: CancelReason,
) -> Cancel:
    """``Cancel(...)`` without the frozen-init overhead."""
    c: Cancel = _new(Cancel)
    _c0(c, order_id)
    _c1(c, owner)
    _c2(c, side)
    _c3(c, outcome)
    _c4(c, price)
    _c5(c, quantity)
    _c6(c, reason)
    return c
