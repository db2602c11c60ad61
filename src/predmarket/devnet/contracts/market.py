"""The market contract: :class:`predmarket.exchange.Market` on chain.

Assets. The market's balance holds exactly what ``exchange`` says it holds: the collateral of
resting buys, of outstanding share sets and the fees (``Market.collateral_held``), the shares of
resting sells (``Market.shares_escrow``), plus ALPH: its own storage deposit and the deposit of
every resting order. A buy locks ``buy_lock(price, quantity)`` collateral, a sell locks the
shares; every payout of an ``exchange`` result becomes a generated output to its owner (fills of
makers too). A mint issues a new YES/NO pair, a merge burns one, a claim burns the shares handed
in.

Deposits and dust (chain-abi.md has the numbers). ``placeOrder`` takes the caller's approved ALPH
(at least ``ORDER_DEPOSIT``, 0.2 ALPH). Every token output carries exactly the dust amount (0.001
ALPH) as part of what its recipient receives:

- an owner whose order leaves the book (filled, self-trade cancelled) gets its deposit back in the
  same call, and that deposit pays the dust of that owner's token outputs;
- any other dust of the call (a partly filled maker's proceeds, the taker's own token outputs
  while its order rests) is paid from the caller's approved ALPH; when the order rests, what is
  left of that ALPH, up to ``ORDER_DEPOSIT``, becomes its deposit and the rest goes back. A caller
  that approves exactly ``ORDER_DEPOSIT`` therefore leaves a deposit of 0.2 ALPH minus at most a
  few dust amounts; the owner gets every bit of it back when the order leaves the book.

At most one maker per placement is filled only partly, and the caller receives at most three
tokens, so the dust paid from the approval is bounded (about 0.005 ALPH): nothing can fail after
``exchange`` has matched, which is what lets the chain run this contract on its live state.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Final, Self

from predmarket.alephium.address import parse_address
from predmarket.alephium.constants import DUST_AMOUNT
from predmarket.alephium.lockup import LockupScript
from predmarket.alephium.script import Val, ValAddress, ValBool, ValByteVec, ValU256
from predmarket.devnet.abi import (
    CANCEL_REASON_CODES,
    ERROR_NAMES,
    MARKET,
    ORDER_DEPOSIT,
    OUTCOME_CODES,
    OUTCOMES_BY_CODE,
    RESOLUTION_CODES,
    RESOLUTIONS_BY_CODE,
    SIDE_CODES,
    SIDES_BY_CODE,
    TRADE_KIND_CODES,
    MethodAbi,
)
from predmarket.devnet.errors import DevnetStateError
from predmarket.devnet.vm import CallContext, NativeContract
from predmarket.exchange import (
    AlreadyResolved,
    Asset,
    Cancel,
    ExchangeError,
    InsufficientShares,
    InvalidRequest,
    Market,
    MarketClosed,
    NotOrderOwner,
    NotResolved,
    Outcome,
    Side,
    TradeKind,
    UnknownOrder,
    buy_lock,
    validate_price,
    validate_quantity,
)

_ERRORS_BY_CLASS: Final[Mapping[type[ExchangeError], str]] = {
    MarketClosed: "MARKET_CLOSED",
    UnknownOrder: "UNKNOWN_ORDER",
    NotOrderOwner: "NOT_ORDER_OWNER",
    AlreadyResolved: "ALREADY_RESOLVED",
    NotResolved: "NOT_RESOLVED",
    InsufficientShares: "INSUFFICIENT_SHARES",
    InvalidRequest: "INVALID_ARGUMENT",
}


def error_name(error: ExchangeError) -> str:
    """The ABI error of an exchange error: its published chain code, else by its class."""
    if error.chain_code is not None:
        return ERROR_NAMES[error.chain_code]
    for cls, name in _ERRORS_BY_CLASS.items():
        if isinstance(error, cls):
            return name
    return "INVALID_ARGUMENT"


def clone_market(market: Market) -> Market:
    """An independent copy of ``market`` (exchange's books pickle faithfully; about 4 µs per
    resting order)."""
    copied = pickle.loads(pickle.dumps(market, protocol=pickle.HIGHEST_PROTOCOL))
    assert isinstance(copied, Market)
    return copied


# -- the contract ------------------------------------------------------------------------------


def _u256(val: Val) -> int:
    assert isinstance(val, ValU256)
    return val.value


class MarketContract(NativeContract):
    """A binary market (a sub-contract of the registry)."""

    abi = MARKET

    def __init__(
        self,
        *,
        contract_id: bytes,
        registry_id: bytes,
        index: int,
        collateral_id: bytes,
        yes_id: bytes,
        no_id: bytes,
        question: bytes,
        category: bytes,
        close_time_ms: int,
        metadata: bytes,
        operator: LockupScript,
    ) -> None:
        self.contract_id = contract_id
        self.registry_id = registry_id
        self.index = index
        self.collateral_id = collateral_id
        self.yes_id = yes_id
        self.no_id = no_id
        self.question = question
        self.category = category
        self.close_time_ms = close_time_ms
        self.metadata = metadata
        self.operator = operator
        self.market = Market()
        #: ALPH deposit held for each resting order.
        self.deposits: dict[int, int] = {}
        #: Owner address (the exchange's owner string) -> its lockup script, for payouts.
        self._lockups: dict[str, LockupScript] = {}

    def clone(self) -> Self:
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.market = clone_market(self.market)
        other.deposits = dict(self.deposits)
        other._lockups = dict(self._lockups)
        return other

    # -- fields --------------------------------------------------------------------------------

    def imm_fields(self) -> tuple[Val, ...]:
        return (
            ValByteVec(self.registry_id),
            ValU256(self.index),
            ValByteVec(self.collateral_id),
            ValByteVec(self.yes_id),
            ValByteVec(self.no_id),
            ValByteVec(self.question),
            ValByteVec(self.category),
            ValU256(self.close_time_ms),
            ValByteVec(self.metadata),
            ValAddress(self.operator),
        )

    def mut_fields(self) -> tuple[Val, ...]:
        m = self.market
        resolution = m.resolution
        return (
            ValBool(resolution is not None),
            ValU256(0 if resolution is None else RESOLUTION_CODES[resolution]),
            ValU256(m.next_order_id),
            ValU256(m.open_order_count),
            ValU256(m.collateral_escrow),
            ValU256(m.shares_escrow(Outcome.YES)),
            ValU256(m.shares_escrow(Outcome.NO)),
            ValU256(m.yes_supply),
            ValU256(m.no_supply),
            ValU256(m.fees_collected),
            ValU256(m.volume),
            ValU256(sum(self.deposits.values())),
        )

    def orders(self) -> list[dict[str, object]]:
        """The resting orders, in id order (a devnet read)."""
        return [
            {
                "orderId": o.id,
                "owner": o.owner,
                "side": o.side.value,
                "outcome": o.outcome.value,
                "price": o.price,
                "quantity": str(o.quantity),
                "remaining": str(o.remaining),
                "deposit": str(self.deposits[o.id]),
            }
            for o in self.market.orders()
        ]

    # -- helpers -------------------------------------------------------------------------------

    def _token_of(self, asset: Asset) -> bytes:
        if asset is Asset.COLLATERAL:
            return self.collateral_id
        return self.yes_id if asset is Asset.YES else self.no_id

    def _share_of(self, outcome: Outcome) -> bytes:
        return self.yes_id if outcome is Outcome.YES else self.no_id

    def _lockup(self, owner: str) -> LockupScript:
        lockup = self._lockups.get(owner)
        if lockup is None:
            lockup = self._lockups[owner] = parse_address(owner)
        return lockup

    def _refund_deposit(self, ctx: CallContext, order_id: int, owner: str) -> int:
        """Pay back the deposit of an order that left the book; returns it."""
        deposit = self.deposits.pop(order_id, 0)
        ctx.pay_alph(self._lockup(owner), deposit)
        return deposit

    def _refund(self, ctx: CallContext, cancel: Cancel) -> tuple[int, int]:
        """Pay back a cancelled order's lock and deposit; returns (lock refunded, deposit)."""
        refund = cancel.refund
        ctx.pay_token(self._lockup(cancel.owner), self._token_of(refund.asset), refund.amount)
        return refund.amount, self._refund_deposit(ctx, cancel.order_id, cancel.owner)

    def _emit_cancel(self, ctx: CallContext, cancel: Cancel, refund: int, deposit: int) -> None:
        ctx.emit(
            2,
            ValU256(cancel.order_id),
            ValAddress(self._lockup(cancel.owner)),
            ValU256(CANCEL_REASON_CODES[cancel.reason]),
            ValU256(cancel.quantity),
            ValU256(refund),
            ValU256(deposit),
        )

    # -- dispatch ------------------------------------------------------------------------------

    def call(self, ctx: CallContext, method: MethodAbi, args: tuple[Val, ...]) -> None:
        try:
            if method.index == 0:
                side, outcome, price, quantity = (_u256(a) for a in args)
                self._place(ctx, side, outcome, price, quantity)
            elif method.index == 1:
                self._cancel(ctx, _u256(args[0]))
            elif method.index == 2:
                self._resolve(ctx, _u256(args[0]))
            else:
                self._claim(ctx)
        except ExchangeError as e:
            # exchange raises before it changes anything
            ctx.revert(error_name(e), e.message)

    def _place(
        self, ctx: CallContext, side_code: int, outcome_code: int, price: int, qty: int
    ) -> None:
        side = SIDES_BY_CODE.get(side_code)
        outcome = OUTCOMES_BY_CODE.get(outcome_code)
        if side is None or outcome is None:
            ctx.revert("INVALID_ARGUMENT", "side and outcome must be 0 or 1")
        if self.market.resolution is not None or ctx.block_timestamp >= self.close_time_ms:
            ctx.revert("MARKET_CLOSED", "the market no longer takes orders")
        validate_price(price)
        validate_quantity(qty)
        if side is Side.BUY:
            lock_id, lock = self.collateral_id, buy_lock(price, qty)
        else:
            lock_id, lock = self._share_of(outcome), qty
        if any(t != lock_id for t in ctx.approved_token_ids()):
            ctx.revert("UNEXPECTED_APPROVAL", "approve only the token the order locks")
        fund = ctx.approved_alph
        if fund < ORDER_DEPOSIT:
            ctx.revert("INSUFFICIENT_APPROVAL", f"approve {ORDER_DEPOSIT} attoALPH (deposit)")
        if ctx.approved_token(lock_id) < lock:
            ctx.revert("INSUFFICIENT_APPROVAL", f"the order locks {lock} of {lock_id.hex()}")

        caller = ctx.caller
        owner = ctx.caller_address
        self._lockups[owner] = caller
        ctx.take_approved_alph(fund)
        ctx.take_approved_token(lock_id, lock)
        # exchange checks everything else before it changes anything: the last step that fails.
        result = self.market.place(owner, side, outcome, price, qty)

        for trade in result.trades:
            if trade.kind is TradeKind.MINT:
                ctx.issue_token(self.yes_id, trade.quantity)
                ctx.issue_token(self.no_id, trade.quantity)
            elif trade.kind is TradeKind.MERGE:
                ctx.burn_token(self.yes_id, trade.quantity)
                ctx.burn_token(self.no_id, trade.quantity)
        # Fills, the taker's price improvement and the self-trade cancellations' refunds.
        for payout in result.payouts:
            ctx.pay_token(self._lockup(payout.owner), self._token_of(payout.asset), payout.amount)
        for trade in result.trades:
            if not self.market.is_resting(trade.maker_order_id):
                self._refund_deposit(ctx, trade.maker_order_id, trade.maker_owner)
        cancelled = [
            (c, c.refund.amount, self._refund_deposit(ctx, c.order_id, c.owner))
            for c in result.cancels
        ]
        ctx.return_unused_approvals()

        # Dust nobody's refunded deposit covers comes out of the caller's approved ALPH (held in
        # the contract balance as ``fund`` until here).
        for recipient in ctx.outputs.recipients():
            if recipient != caller:
                need = ctx.outputs.shortfall(recipient)
                fund -= need
                ctx.pay_alph(recipient, need)
        deposit = 0
        if result.rests:
            need = ctx.outputs.shortfall(caller)
            fund -= need
            ctx.pay_alph(caller, need)
            if fund >= ORDER_DEPOSIT + DUST_AMOUNT:
                ctx.pay_alph(caller, fund - ORDER_DEPOSIT)
                fund = ORDER_DEPOSIT
            deposit = fund
            self.deposits[result.order_id] = deposit
        else:
            ctx.pay_alph(caller, fund)
        if fund < 0:
            raise DevnetStateError("order dust exceeded the approved deposit")

        ctx.emit(
            0,
            ValU256(result.order_id),
            ValAddress(caller),
            ValU256(SIDE_CODES[side]),
            ValU256(OUTCOME_CODES[outcome]),
            ValU256(price),
            ValU256(qty),
            ValU256(result.remaining),
            ValU256(deposit),
        )
        for trade in result.trades:
            ctx.emit(
                1,
                ValU256(trade.trade_id),
                ValU256(TRADE_KIND_CODES[trade.kind]),
                ValU256(trade.maker_order_id),
                ValAddress(self._lockup(trade.maker_owner)),
                ValU256(SIDE_CODES[trade.maker_side]),
                ValU256(OUTCOME_CODES[trade.maker_outcome]),
                ValU256(trade.maker_price),
                ValU256(trade.quantity),
                ValU256(trade.taker_order_id),
                ValAddress(caller),
                ValU256(trade.maker_fee),
                ValU256(trade.taker_fee),
            )
        for cancel, refund, refunded_deposit in cancelled:
            self._emit_cancel(ctx, cancel, refund, refunded_deposit)

    def _cancel(self, ctx: CallContext, order_id: int) -> None:
        order = self.market.get_order(order_id)
        if order is None:
            ctx.revert("UNKNOWN_ORDER", f"no resting order {order_id}")
        if order.owner != ctx.caller_address:
            ctx.revert("NOT_ORDER_OWNER", f"order {order_id} belongs to {order.owner}")
        cancel = self.market.cancel(order.owner, order_id)
        refund, deposit = self._refund(ctx, cancel)
        self._emit_cancel(ctx, cancel, refund, deposit)

    def _resolve(self, ctx: CallContext, resolution_code: int) -> None:
        if ctx.caller != self.operator:
            ctx.revert("NOT_OPERATOR", "only the operator resolves markets")
        resolution = RESOLUTIONS_BY_CODE.get(resolution_code)
        if resolution is None:
            ctx.revert("INVALID_ARGUMENT", "resolution must be 0, 1 or 2")
        if self.market.resolution is not None:
            ctx.revert("ALREADY_RESOLVED", f"already resolved as {self.market.resolution}")
        result = self.market.resolve(resolution)
        for cancel in result.cancels:
            refund, deposit = self._refund(ctx, cancel)
            self._emit_cancel(ctx, cancel, refund, deposit)
        ctx.emit(3, ValU256(resolution_code), ValU256(len(result.cancels)))

    def _claim(self, ctx: CallContext) -> None:
        if self.market.resolution is None:
            ctx.revert("NOT_RESOLVED", "the market is not resolved")
        if any(t not in (self.yes_id, self.no_id) for t in ctx.approved_token_ids()):
            ctx.revert("UNEXPECTED_APPROVAL", "approve only this market's share tokens")
        yes_quantity = ctx.approved_token(self.yes_id)
        no_quantity = ctx.approved_token(self.no_id)
        # The VM has checked that the approved ALPH pays the dust of every approved token, so
        # it pays the collateral output's dust here.
        ctx.take_approved_token(self.yes_id, yes_quantity)
        ctx.take_approved_token(self.no_id, no_quantity)
        result = self.market.claim(ctx.caller_address, yes_quantity, no_quantity)
        ctx.burn_token(self.yes_id, yes_quantity)
        ctx.burn_token(self.no_id, no_quantity)
        ctx.pay_token(ctx.caller, self.collateral_id, result.amount)
        ctx.emit(
            4,
            ValAddress(ctx.caller),
            ValU256(yes_quantity),
            ValU256(no_quantity),
            ValU256(result.amount),
        )
