"""The protocol's contract calls as scripts with the approvals each needs (built from the ABI).

Each function returns a :class:`Call`: the TxScript and the ALPH and tokens the caller approves,
which are also what ``execute-script`` must be given as ``attoAlphAmount`` and ``tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from predmarket.alephium.address import contract_address, contract_id_from_address
from predmarket.alephium.constants import DUST_AMOUNT
from predmarket.alephium.lockup import LockupScript
from predmarket.alephium.script import TxScript
from predmarket.devnet.abi import (
    COLLATERAL_TOKEN,
    MARKET,
    MARKET_CREATION_DEPOSIT,
    MARKET_REGISTRY,
    ORDER_DEPOSIT,
    OUTCOME_CODES,
    RESOLUTION_CODES,
    SIDE_CODES,
    ContractAbi,
    PyValue,
    call_script,
    decode_event,
)
from predmarket.exchange import Outcome, Resolution, Side, buy_lock


@dataclass(frozen=True, slots=True)
class Call:
    script: TxScript
    alph: int
    tokens: tuple[tuple[bytes, int], ...] = ()


@dataclass(frozen=True, slots=True)
class MarketRef:
    """The ids a client needs to trade on a market (all in its MarketCreated event)."""

    market_id: bytes
    collateral_id: bytes
    yes_id: bytes
    no_id: bytes

    @property
    def address(self) -> str:
        return contract_address(self.market_id)

    def share_id(self, outcome: Outcome) -> bytes:
        return self.yes_id if outcome is Outcome.YES else self.no_id

    @classmethod
    def from_event(cls, fields: list[Mapping[str, object]], collateral_id: bytes) -> MarketRef:
        """From the JSON fields of a registry's MarketCreated event."""
        named = decode_event(MARKET_REGISTRY, 0, fields)
        market, yes_id, no_id = named["market"], named["yesToken"], named["noToken"]
        assert isinstance(market, str) and isinstance(yes_id, bytes) and isinstance(no_id, bytes)
        return cls(contract_id_from_address(market), collateral_id, yes_id, no_id)


def _call(
    contract_id: bytes,
    method: str,
    args: list[PyValue],
    alph: int,
    tokens: tuple[tuple[bytes, int], ...] = (),
    *,
    abi: ContractAbi = MARKET,
) -> Call:
    return Call(call_script(abi, method, contract_id, args, alph=alph, tokens=tokens), alph, tokens)


def create_market(
    registry_id: bytes,
    question: str,
    category: str,
    close_time_ms: int,
    metadata: bytes = b"",
) -> Call:
    args: list[PyValue] = [question.encode(), category.encode(), close_time_ms, metadata]
    return _call(registry_id, "createMarket", args, MARKET_CREATION_DEPOSIT, abi=MARKET_REGISTRY)


def mint_collateral(token_id: bytes, to: str | LockupScript, amount: int) -> Call:
    return _call(token_id, "mint", [to, amount], DUST_AMOUNT, abi=COLLATERAL_TOKEN)


def place_order(
    market: MarketRef,
    side: Side,
    outcome: Outcome,
    price: int,
    quantity: int,
    *,
    deposit: int = ORDER_DEPOSIT,
) -> Call:
    """A buy approves ``buy_lock(price, quantity)`` collateral, a sell ``quantity`` shares."""
    if side is Side.BUY:
        lock = (market.collateral_id, buy_lock(price, quantity))
    else:
        lock = (market.share_id(outcome), quantity)
    args: list[PyValue] = [SIDE_CODES[side], OUTCOME_CODES[outcome], price, quantity]
    # a zero lock (only for orders the contract refuses) cannot be approved
    return _call(market.market_id, "placeOrder", args, deposit, (lock,) if lock[1] else ())


def cancel_order(market: MarketRef, order_id: int) -> Call:
    return _call(market.market_id, "cancelOrder", [order_id], 0)


def resolve(market: MarketRef, resolution: Resolution) -> Call:
    return _call(market.market_id, "resolve", [RESOLUTION_CODES[resolution]], 0)


def claim(market: MarketRef, yes_quantity: int, no_quantity: int) -> Call:
    """Approve the shares to redeem and the dust of each approved share token."""
    tokens = tuple(
        (token_id, amount)
        for token_id, amount in ((market.yes_id, yes_quantity), (market.no_id, no_quantity))
        if amount
    )
    return _call(market.market_id, "claim", [], DUST_AMOUNT * max(1, len(tokens)), tokens)
