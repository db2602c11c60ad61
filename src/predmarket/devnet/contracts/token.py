"""Token contracts: the collateral token and the markets' YES/NO share tokens.

A token's id is the id of the contract that issues it. Issued amounts enter a contract balance
through :meth:`~predmarket.devnet.vm.CallContext.issue_token`, which only the token's ``issuer``
may call: the collateral token issues itself (``mint``), a share token is issued and burned by its
market.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Self

from predmarket.alephium.constants import DUST_AMOUNT, U256_MAX
from predmarket.alephium.lockup import P2C, LockupScript
from predmarket.alephium.script import Val, ValAddress, ValByteVec, ValU256
from predmarket.devnet.abi import (
    COLLATERAL_DECIMALS,
    COLLATERAL_TOKEN,
    SHARE_DECIMALS,
    SHARE_TOKEN,
    MethodAbi,
)
from predmarket.devnet.vm import CallContext, NativeContract


@dataclass
class CollateralToken(NativeContract):
    """The collateral token; ``mint`` is open to the operator and the faucet."""

    abi = COLLATERAL_TOKEN

    contract_id: bytes
    operator: LockupScript
    faucet: LockupScript
    symbol: bytes = b"PMC"
    name: bytes = b"predmarket collateral (devnet)"
    decimals: int = COLLATERAL_DECIMALS
    total_supply: int = 0

    @property
    def issuer(self) -> bytes:
        return self.contract_id

    def clone(self) -> Self:
        return copy.copy(self)

    def imm_fields(self) -> tuple[Val, ...]:
        return (
            ValByteVec(self.symbol),
            ValByteVec(self.name),
            ValU256(self.decimals),
            ValAddress(self.operator),
            ValAddress(self.faucet),
        )

    def mut_fields(self) -> tuple[Val, ...]:
        return (ValU256(self.total_supply),)

    def call(self, ctx: CallContext, method: MethodAbi, args: tuple[Val, ...]) -> None:
        assert method.name == "mint"  # the only method
        to_val, amount_val = args
        assert isinstance(to_val, ValAddress) and isinstance(amount_val, ValU256)
        to, amount = to_val.value, amount_val.value
        if ctx.caller not in (self.operator, self.faucet):
            ctx.revert("NOT_MINTER")
        if isinstance(to, P2C):
            ctx.revert("INVALID_ARGUMENT", "collateral cannot be minted to a contract")
        if amount == 0 or self.total_supply + amount > U256_MAX:
            ctx.revert("INVALID_ARGUMENT", f"amount {amount} out of range")
        if ctx.approved_token_ids():
            ctx.revert("UNEXPECTED_APPROVAL", "mint takes no tokens")
        if ctx.approved_alph < DUST_AMOUNT:
            ctx.revert("INSUFFICIENT_APPROVAL", f"approve {DUST_AMOUNT} attoALPH for the output")
        ctx.issue_token(self.contract_id, amount)
        ctx.pay_token(to, self.contract_id, amount)
        ctx.give_approved_alph(to, DUST_AMOUNT)
        ctx.emit(0, ValAddress(to), ValU256(amount))


@dataclass
class ShareToken(NativeContract):
    """A market's YES or NO share token; only its market issues and burns it."""

    abi = SHARE_TOKEN

    contract_id: bytes
    market_id: bytes
    outcome: int
    decimals: int = SHARE_DECIMALS
    total_supply: int = 0

    @property
    def issuer(self) -> bytes:
        return self.market_id

    def clone(self) -> Self:
        return copy.copy(self)

    def imm_fields(self) -> tuple[Val, ...]:
        return (ValByteVec(self.market_id), ValU256(self.outcome), ValU256(self.decimals))

    def mut_fields(self) -> tuple[Val, ...]:
        return (ValU256(self.total_supply),)

    def call(self, ctx: CallContext, method: MethodAbi, args: tuple[Val, ...]) -> None:
        # No public methods: the VM rejects every method index before it gets here.
        del ctx, args
        raise AssertionError(f"a share token has no method {method.index}")
