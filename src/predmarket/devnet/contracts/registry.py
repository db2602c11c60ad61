"""The market registry: creates markets (operator-only for now) and lists them by events.

Ids (chain-formats.md §1.3, the node's ``subContractId``): market ``i`` is the sub-contract of
the registry at path ``u256To8Byte(i)`` (8 bytes, big-endian); its YES and NO share tokens are
sub-contracts of the market at paths ``00`` and ``01`` (the outcome as one byte). All live in the
registry's group. Token id = contract id, as for every token.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Self

from predmarket.alephium.address import contract_address
from predmarket.alephium.constants import MINIMAL_CONTRACT_DEPOSIT
from predmarket.alephium.contract import sub_contract_id
from predmarket.alephium.lockup import P2C, LockupScript
from predmarket.alephium.script import Val, ValAddress, ValByteVec, ValU256
from predmarket.devnet.abi import (
    MARKET_CREATION_DEPOSIT,
    MARKET_REGISTRY,
    MAX_CATEGORY_BYTES,
    MAX_METADATA_BYTES,
    MAX_QUESTION_BYTES,
    OUTCOME_CODES,
    MethodAbi,
)
from predmarket.devnet.contracts.market import MarketContract
from predmarket.devnet.contracts.token import ShareToken
from predmarket.devnet.errors import ScriptFailure
from predmarket.devnet.vm import CallContext, NativeContract
from predmarket.exchange import Outcome


def market_id(registry_id: bytes, index: int) -> bytes:
    return sub_contract_id(registry_id, index.to_bytes(8, "big"), registry_id[-1])


def share_token_id(market: bytes, outcome: Outcome) -> bytes:
    return sub_contract_id(market, bytes([OUTCOME_CODES[outcome]]), market[-1])


@dataclass
class MarketRegistry(NativeContract):
    abi = MARKET_REGISTRY

    contract_id: bytes
    operator: LockupScript
    collateral_id: bytes
    market_count: int = 0

    def clone(self) -> Self:
        return copy.copy(self)

    def imm_fields(self) -> tuple[Val, ...]:
        return (ValAddress(self.operator), ValByteVec(self.collateral_id))

    def mut_fields(self) -> tuple[Val, ...]:
        return (ValU256(self.market_count),)

    def call(self, ctx: CallContext, method: MethodAbi, args: tuple[Val, ...]) -> None:
        assert method.name == "createMarket"  # the only method
        question, category, close_time, metadata = args
        assert isinstance(question, ValByteVec) and isinstance(category, ValByteVec)
        assert isinstance(close_time, ValU256) and isinstance(metadata, ValByteVec)
        if ctx.caller != self.operator:
            ctx.revert("NOT_OPERATOR", "only the operator creates markets")
        if not 0 < len(question.value) <= MAX_QUESTION_BYTES:
            ctx.revert("INVALID_ARGUMENT", f"question must be 1..{MAX_QUESTION_BYTES} bytes")
        if len(category.value) > MAX_CATEGORY_BYTES:
            ctx.revert("INVALID_ARGUMENT", f"category must be at most {MAX_CATEGORY_BYTES} bytes")
        if len(metadata.value) > MAX_METADATA_BYTES:
            ctx.revert("INVALID_ARGUMENT", f"metadata must be at most {MAX_METADATA_BYTES} bytes")
        if close_time.value <= ctx.block_timestamp:
            ctx.revert("INVALID_CLOSE_TIME", "closeTimeMs must be after the block time")
        if ctx.approved_token_ids():
            ctx.revert("UNEXPECTED_APPROVAL", "createMarket takes no tokens")
        if ctx.approved_alph < MARKET_CREATION_DEPOSIT:
            ctx.revert("INSUFFICIENT_APPROVAL", f"approve {MARKET_CREATION_DEPOSIT} attoALPH")

        index = self.market_count
        mid = market_id(self.contract_id, index)
        yes_id = share_token_id(mid, Outcome.YES)
        no_id = share_token_id(mid, Outcome.NO)
        for cid in (mid, yes_id, no_id):
            if ctx.read(cid) is not None:
                raise ScriptFailure(f"ContractAlreadyExists({contract_address(cid)})")
        market = MarketContract(
            contract_id=mid,
            registry_id=self.contract_id,
            index=index,
            collateral_id=self.collateral_id,
            yes_id=yes_id,
            no_id=no_id,
            question=question.value,
            category=category.value,
            close_time_ms=close_time.value,
            metadata=metadata.value,
            operator=self.operator,
        )
        ctx.create_contract(mid, market, MINIMAL_CONTRACT_DEPOSIT)
        ctx.create_contract(yes_id, ShareToken(yes_id, mid, 0), MINIMAL_CONTRACT_DEPOSIT)
        ctx.create_contract(no_id, ShareToken(no_id, mid, 1), MINIMAL_CONTRACT_DEPOSIT)
        self.market_count = index + 1
        ctx.emit(
            0,
            ValU256(index),
            ValAddress(P2C(mid)),
            ValByteVec(yes_id),
            ValByteVec(no_id),
            question,
            category,
            close_time,
            metadata,
            ValAddress(ctx.caller),
        )
