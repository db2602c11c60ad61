"""The check of a node-built transaction against the intent (tx/verify.py): a faithful build
passes, and each way a node could build something else is refused."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable

import pytest

from predmarket.alephium.constants import DUST_AMOUNT, MAX_GAS_PER_TX, MIN_GAS_PRICE, ONE_ALPH
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import (
    P2PK,
    P2PKH,
    KeyKind,
    LockupScript,
    PublicKeyLike,
    group_of,
    output_hint,
)
from predmarket.alephium.script import encode_script
from predmarket.alephium.signing import generate_private_key, public_key_from_private
from predmarket.alephium.tx import (
    SAME_AS_PREVIOUS,
    AssetOutput,
    Input,
    P2PKHUnlock,
    P2PKUnlock,
    Token,
    UnsignedTx,
    encode_unsigned_tx,
    from_group,
    to_group,
    tx_id,
)
from predmarket.devnet import calls
from predmarket.exchange import Outcome, Side, buy_lock
from predmarket.node.models import BuildResult
from predmarket.tx.errors import BuildMismatch
from predmarket.tx.verify import MAX_GAS_PRICE, ChainFacts, Intent, check_build

CHAIN = ChainFacts(network_id=4, groups=4)
COLLATERAL = secrets.token_bytes(32)
MARKET_REF = calls.MarketRef(
    secrets.token_bytes(31) + b"\x00", COLLATERAL, secrets.token_bytes(32), secrets.token_bytes(32)
)
CALL = calls.place_order(MARKET_REF, Side.BUY, Outcome.YES, 640, 10**18)
LOCK = buy_lock(640, 10**18)


def key() -> bytes:
    return public_key_from_private(generate_private_key())


def default_signer(public_key: bytes) -> LockupScript:
    return P2PKH(blake2b256(public_key))


def groupless_signer(public_key: bytes) -> LockupScript:
    return P2PK(PublicKeyLike(KeyKind.SECP256K1, public_key), 0)


def faithful(public_key: bytes, signer: LockupScript) -> UnsignedTx:
    """What an honest node builds: the signer's two outputs in, change to the signer out."""
    first = P2PKHUnlock(public_key) if isinstance(signer, P2PKH) else P2PKUnlock()
    hint = output_hint(signer)
    return UnsignedTx(
        version=0,
        network_id=CHAIN.network_id,
        script=CALL.script,
        gas_amount=94_000,
        gas_price=MIN_GAS_PRICE,
        inputs=(
            Input(hint, secrets.token_bytes(32), first),
            Input(hint, secrets.token_bytes(32), SAME_AS_PREVIOUS),
        ),
        fixed_outputs=(
            AssetOutput(DUST_AMOUNT, signer, tokens=(Token(COLLATERAL, 10**22 - LOCK),)),
            AssetOutput(99 * ONE_ALPH, signer),
        ),
    )


def intent(signer: LockupScript, public_key: bytes) -> Intent:
    return Intent(encode_script(CALL.script), signer, public_key)


def reported(tx: UnsignedTx, **changes: object) -> BuildResult:
    """The node's answer for ``tx`` (fields overridable: a node that misreports)."""
    fields: dict[str, object] = {
        "unsigned_tx": encode_unsigned_tx(tx).hex(),
        "gas_amount": tx.gas_amount,
        "gas_price": tx.gas_price,
        "tx_id": tx_id(tx).hex(),
        "from_group": from_group(tx, CHAIN.groups) if tx.inputs else 0,
        "to_group": to_group(tx, CHAIN.groups) if tx.inputs else 0,
    }
    fields.update(changes)
    return BuildResult.model_validate(fields)


SIGNERS = [
    pytest.param(default_signer, id="default"),
    pytest.param(groupless_signer, id="gl-secp256k1"),
]


@pytest.mark.parametrize("make_signer", SIGNERS)
def test_a_faithful_build_passes(make_signer: Callable[[bytes], LockupScript]) -> None:
    public_key = key()
    signer = make_signer(public_key)
    tx = faithful(public_key, signer)
    assert check_build(reported(tx), intent(signer, public_key), CHAIN) == tx


def _replace_input(tx: UnsignedTx, index: int, **changes: object) -> UnsignedTx:
    inputs = list(tx.inputs)
    inputs[index] = dataclasses.replace(inputs[index], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(tx, inputs=tuple(inputs))


def _replace_output(tx: UnsignedTx, index: int, **changes: object) -> UnsignedTx:
    outputs = list(tx.fixed_outputs)
    outputs[index] = dataclasses.replace(outputs[index], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(tx, fixed_outputs=tuple(outputs))


STRANGER = default_signer(key())
OTHER_CALL = calls.place_order(MARKET_REF, Side.BUY, Outcome.YES, 641, 10**18)

# (what a dishonest or broken node does, the reason's start)
TAMPERED: list[tuple[str, Callable[[UnsignedTx], UnsignedTx], str]] = [
    ("another network", lambda tx: dataclasses.replace(tx, network_id=0), "network id"),
    ("another call", lambda tx: dataclasses.replace(tx, script=OTHER_CALL.script), "the script"),
    ("no script", lambda tx: dataclasses.replace(tx, script=None), "the script"),
    ("no inputs", lambda tx: dataclasses.replace(tx, inputs=()), "no inputs"),
    ("a stranger's input", lambda tx: _replace_input(tx, 1, hint=tx.inputs[1].hint ^ 2), "input 1"),
    (
        "another key unlocks",
        lambda tx: _replace_input(tx, 0, unlock=P2PKHUnlock(key())),
        "input 0 is not unlocked",
    ),
    (
        "first input SameAsPrevious",
        lambda tx: _replace_input(tx, 0, unlock=SAME_AS_PREVIOUS),
        "input 0 is not unlocked",
    ),
    (
        "change to a stranger",
        lambda tx: _replace_output(tx, 1, lockup=STRANGER),
        "fixed output 1 pays",
    ),
    ("time-locked change", lambda tx: _replace_output(tx, 1, lock_time=1), "fixed output 1 is"),
    ("change with data", lambda tx: _replace_output(tx, 1, additional_data=b"x"), "fixed output 1"),
    (
        "change below dust",
        lambda tx: _replace_output(tx, 1, amount=DUST_AMOUNT - 1),
        "fixed output 1:",
    ),
    ("gas too high", lambda tx: dataclasses.replace(tx, gas_amount=MAX_GAS_PER_TX + 1), "gas"),
    ("gas too low", lambda tx: dataclasses.replace(tx, gas_amount=19_999), "gas"),
    ("gas price too high", lambda tx: dataclasses.replace(tx, gas_price=MAX_GAS_PRICE + 1), "gas"),
    ("gas price too low", lambda tx: dataclasses.replace(tx, gas_price=MIN_GAS_PRICE - 1), "gas"),
]


@pytest.mark.parametrize("make_signer", SIGNERS)
@pytest.mark.parametrize(
    ("tamper", "reason"), [(t, r) for _, t, r in TAMPERED], ids=[i for i, _, _ in TAMPERED]
)
def test_a_build_that_does_something_else_is_refused(
    make_signer: Callable[[bytes], LockupScript],
    tamper: Callable[[UnsignedTx], UnsignedTx],
    reason: str,
) -> None:
    public_key = key()
    signer = make_signer(public_key)
    tx = tamper(faithful(public_key, signer))
    with pytest.raises(BuildMismatch) as caught:
        check_build(reported(tx), intent(signer, public_key), CHAIN)
    error = caught.value
    assert (error.status, error.code) == (502, "UPSTREAM_ERROR")
    assert str(error.details["reason"]).startswith(reason), error.details


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"unsigned_tx": "00ff"}, "unsignedTx does not decode"),
        ({"tx_id": "00" * 32}, "txId is not the hash"),
        ({"gas_amount": 94_001}, "gas differs"),
        ({"gas_price": MIN_GAS_PRICE * 2}, "gas differs"),
        ({"from_group": 3, "to_group": 3}, "groups"),
    ],
)
def test_a_node_that_misreports_its_build_is_refused(
    changes: dict[str, object], reason: str
) -> None:
    public_key = key()
    signer = default_signer(public_key)
    tx = faithful(public_key, signer)
    if "from_group" in changes and from_group(tx, CHAIN.groups) == 3:
        changes = {"from_group": 2, "to_group": 2}
    with pytest.raises(BuildMismatch) as caught:
        check_build(reported(tx, **changes), intent(signer, public_key), CHAIN)
    assert str(caught.value.details["reason"]).startswith(reason)


def test_a_groupless_signer_must_be_in_its_build_group() -> None:
    public_key = key()
    built_in_0 = groupless_signer(public_key)
    tx = faithful(public_key, built_in_0)
    asked_in_2 = P2PK(PublicKeyLike(KeyKind.SECP256K1, public_key), 2)
    assert group_of(asked_in_2) == 2
    with pytest.raises(BuildMismatch):
        check_build(reported(tx), intent(asked_in_2, public_key), CHAIN)
