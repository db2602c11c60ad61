"""The check of a node-built transaction against what the service asked for (pure, no I/O).

The node selects the inputs, adds the change and prices the gas; everything else was fixed by
the request. Before a build is returned it is decoded with our own codec and must:

- decode, and hash to the txId the node reported (so the wallet signs what it is shown);
- carry our network id and exactly our script bytes (the call and its approvals);
- spend only the signer's outputs: every input's hint is the signer's, the first is unlocked by
  the signer's key (P2PKH) or its groupless P2PK lock, the rest ``SameAsPrevious`` — an input
  of anyone else would make the signature invalid, so nothing else can slip in;
- pay its fixed outputs (the change) only to the signer, without a time lock or data, and obey
  the node's output rules;
- ask for gas within the chain's limits at a gas price between the minimum and
  :data:`MAX_GAS_PRICE` (a node asking for more is not trusted with the wallet's ALPH), the same
  amounts the node reported;
- be in the groups the node reported, the from-group being the signer's.

The script can only spend what it approves, and a script's unapproved spare assets go back to
the caller, so with these checks the wallet's exposure is the approvals plus the gas fee.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from predmarket.alephium.constants import MAX_GAS_PER_TX, MIN_GAS_PRICE, MINIMAL_GAS
from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.lockup import P2PK, P2PKH, LockupScript, group_of, output_hint
from predmarket.alephium.script import encode_script
from predmarket.alephium.tx import (
    P2PKHUnlock,
    P2PKUnlock,
    SameAsPrevious,
    UnlockScript,
    UnsignedTx,
    decode_unsigned_tx,
    from_group,
    output_rule_violations,
    to_group,
    tx_id,
)
from predmarket.node.models import BuildResult
from predmarket.tx.errors import BuildMismatch

#: The highest gas price a build may ask: 100 times the chain's minimum (1e13 attoALPH per gas).
MAX_GAS_PRICE: Final = 100 * MIN_GAS_PRICE


@dataclass(frozen=True, slots=True)
class Intent:
    """What the service asked the node to build."""

    script: bytes
    signer: LockupScript
    public_key: bytes


@dataclass(frozen=True, slots=True)
class ChainFacts:
    network_id: int
    groups: int


def _mismatch(reason: str) -> BuildMismatch:
    return BuildMismatch(details={"reason": reason})


def _first_unlock(intent: Intent) -> UnlockScript:
    if isinstance(intent.signer, P2PKH):
        return P2PKHUnlock(intent.public_key)
    if isinstance(intent.signer, P2PK):
        return P2PKUnlock()
    raise ValueError("the signer is a P2PKH or P2PK lockup")


def check_build(build: BuildResult, intent: Intent, chain: ChainFacts) -> UnsignedTx:
    """The decoded transaction, or :class:`BuildMismatch` naming the first thing that is off."""
    try:
        tx = decode_unsigned_tx(build.unsigned_tx)
    except AlephiumError:
        raise _mismatch("unsignedTx does not decode") from None
    if tx_id(tx).hex() != build.tx_id.lower():
        raise _mismatch("txId is not the hash of unsignedTx")
    if tx.network_id != chain.network_id:
        raise _mismatch(f"network id {tx.network_id}, expected {chain.network_id}")
    if tx.script is None or encode_script(tx.script) != intent.script:
        raise _mismatch("the script is not the requested call")
    _check_inputs(tx, intent)
    _check_outputs(tx, intent)
    _check_gas(tx, build)
    _check_groups(tx, build, intent, chain)
    return tx


def _check_inputs(tx: UnsignedTx, intent: Intent) -> None:
    if not tx.inputs:
        raise _mismatch("no inputs")
    hint = output_hint(intent.signer)
    first = _first_unlock(intent)
    for index, inp in enumerate(tx.inputs):
        if inp.hint != hint:
            raise _mismatch(f"input {index} is not the signer's")
        allowed = inp.unlock == first or (index > 0 and isinstance(inp.unlock, SameAsPrevious))
        if not allowed:
            raise _mismatch(f"input {index} is not unlocked by the signer")


def _check_outputs(tx: UnsignedTx, intent: Intent) -> None:
    for index, out in enumerate(tx.fixed_outputs):
        if out.lockup != intent.signer:
            raise _mismatch(f"fixed output {index} pays someone other than the signer")
        if out.lock_time or out.additional_data:
            raise _mismatch(f"fixed output {index} is time-locked or carries data")
    problems = output_rule_violations(tx)
    if problems:
        raise _mismatch(problems[0])


def _check_gas(tx: UnsignedTx, build: BuildResult) -> None:
    if tx.gas_amount != build.gas_amount or tx.gas_price != build.gas_price:
        raise _mismatch("gas differs from what the node reported")
    if not MINIMAL_GAS <= tx.gas_amount <= MAX_GAS_PER_TX:
        raise _mismatch(f"gas {tx.gas_amount} outside {MINIMAL_GAS}..{MAX_GAS_PER_TX}")
    if not MIN_GAS_PRICE <= tx.gas_price <= MAX_GAS_PRICE:
        raise _mismatch(f"gas price {tx.gas_price} outside {MIN_GAS_PRICE}..{MAX_GAS_PRICE}")


def _check_groups(tx: UnsignedTx, build: BuildResult, intent: Intent, chain: ChainFacts) -> None:
    source, target = from_group(tx, chain.groups), to_group(tx, chain.groups)
    if source != group_of(intent.signer, chain.groups):
        raise _mismatch(f"from-group {source} is not the signer's")
    if (build.from_group, build.to_group) != (source, target):
        raise _mismatch(
            f"groups ({build.from_group}, {build.to_group}) reported, ({source}, {target}) built"
        )
