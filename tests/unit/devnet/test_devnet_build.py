"""Building: UTXO selection, change outputs, gas estimates and the script simulation."""

from __future__ import annotations

import pytest
from devnet_harness import DUST, Harness, expect_error

from predmarket.alephium.constants import MIN_GAS_PRICE, ONE_ALPH
from predmarket.alephium.lockup import group_of
from predmarket.alephium.script import (
    Method,
    TxScript,
    ValU256,
    build_contract_call,
    encode_script,
)
from predmarket.alephium.tx import AssetOutput, Token, decode_unsigned_tx
from predmarket.devnet import calls
from predmarket.devnet.abi import ORDER_DEPOSIT
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.node import Destination
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Side, buy_lock

SHARE = 10**18


@pytest.fixture
def m(harness: Harness) -> MarketRef:
    return harness.create_market()


def test_place_order_build(harness: Harness, m: MarketRef) -> None:
    h = harness
    alice = h.wallet()
    before = h.snapshot(alice)
    call = calls.place_order(m, Side.BUY, Outcome.YES, 600, SHARE)
    doc = alice.build_call(h.node, call.script, alph=call.alph, tokens=call.tokens)
    assert h.snapshot(alice) == before  # building and simulating change nothing
    tx = decode_unsigned_tx(str(doc["unsignedTx"]))
    utxos = {u["ref"]["key"]: u for u in h.node.utxos(alice.address)["utxos"]}
    # the collateral output is selected first, then ALPH; both are spent
    assert [i.key.hex() for i in tx.inputs] and set(utxos) == {i.key.hex() for i in tx.inputs}
    assert utxos[tx.inputs[0].key.hex()]["tokens"]
    lock = buy_lock(600, SHARE)
    have_alph = sum(int(u["amount"]) for u in utxos.values())
    gas = 1_000 + 2 * 2_000 + 2 * 4_500 + 80_000
    assert doc["gasAmount"] == gas and doc["gasPrice"] == str(MIN_GAS_PRICE)
    assert tx.fixed_outputs == (
        AssetOutput(DUST, alice.lockup, tokens=(Token(m.collateral_id, 10_000 * SHARE - lock),)),
        AssetOutput(have_alph - ORDER_DEPOSIT - gas * MIN_GAS_PRICE - DUST, alice.lockup),
    )
    assert doc["simulationResult"] == {
        "contractInputs": [{"address": m.address, "attoAlphAmount": str(10**17), "tokens": []}],
        "generatedOutputs": [
            {
                "address": m.address,
                "attoAlphAmount": str(10**17 + ORDER_DEPOSIT),
                "tokens": [{"id": m.collateral_id.hex(), "amount": str(lock)}],
            }
        ],
    }
    assert set(doc) == {
        "unsignedTx",
        "gasAmount",
        "gasPrice",
        "txId",
        "fromGroup",
        "toGroup",
        "simulationResult",
    }
    alice.submit_built(h.node, doc)


def test_simulation_shows_generated_outputs(harness: Harness, m: MarketRef) -> None:
    h = harness
    alice, bob = h.wallet(), h.wallet()
    h.place(alice, m, Side.BUY, Outcome.YES, 600, SHARE)
    call = calls.place_order(m, Side.BUY, Outcome.NO, 400, SHARE)
    doc = bob.build_call(h.node, call.script, alph=call.alph, tokens=call.tokens)
    generated = doc["simulationResult"]["generatedOutputs"]
    by_address: dict[str, list[dict[str, object]]] = {}
    for out in generated:
        by_address.setdefault(str(out["address"]), []).append(out)
    assert {
        "address": alice.address,
        "attoAlphAmount": str(DUST),
        "tokens": [{"id": m.yes_id.hex(), "amount": str(SHARE)}],
    } in by_address[alice.address]
    assert {
        "address": bob.address,
        "attoAlphAmount": str(DUST),
        "tokens": [{"id": m.no_id.hex(), "amount": str(SHARE)}],
    } in by_address[bob.address]
    # the simulated outputs are the mined ones
    sent = bob.submit_built(h.node, doc)
    mined = h.node.tx_details(sent.tx_id)["generatedOutputs"]
    assert [{k: o[k] for k in ("address", "attoAlphAmount", "tokens")} for o in mined] == [
        o for o in generated if o["address"] not in (m.address,)
    ]


def test_gas_options(harness: Harness, m: MarketRef) -> None:
    h = harness
    alice = h.wallet()
    call = calls.place_order(m, Side.BUY, Outcome.YES, 600, SHARE)
    script = encode_script(call.script)

    def build(**kw: object) -> dict[str, object]:
        return h.node.build_execute_script(
            from_public_key=alice.public_key,
            bytecode=script,
            atto_alph_amount=call.alph,
            tokens=call.tokens,
            **kw,  # type: ignore[arg-type]
        )

    base = 94_000
    assert build()["gasAmount"] == base
    assert build(gas_estimation_multiplier=1.5)["gasAmount"] == base * 3 // 2
    assert build(gas_amount=200_000)["gasAmount"] == 200_000
    expect_error(lambda: build(gas_estimation_multiplier=2.5), 400, "gasEstimationMultiplier")
    expect_error(lambda: build(gas_estimation_multiplier=1.234), 400, "gasEstimationMultiplier")
    expect_error(
        lambda: build(gas_amount=200_000, gas_estimation_multiplier=1.5), 400, "simultaneously"
    )
    expect_error(lambda: build(gas_amount=50_000), 400, "OutOfGas")
    expect_error(lambda: build(gas_price=MIN_GAS_PRICE - 1), 400, "InvalidGasPrice")


def test_build_failures(harness: Harness, m: MarketRef) -> None:
    h = harness
    alice = h.wallet()
    poor = DevnetWallet.generate()
    node = h.node
    call = calls.place_order(m, Side.BUY, Outcome.YES, 600, SHARE)
    script = encode_script(call.script)
    before = h.snapshot(alice)

    def build(wallet: DevnetWallet = alice, **kw: object) -> object:
        args: dict[str, object] = {
            "from_public_key": wallet.public_key,
            "bytecode": script,
            "atto_alph_amount": call.alph,
            "tokens": call.tokens,
        }
        args.update(kw)
        return node.build_execute_script(**args)  # type: ignore[arg-type]

    expect_error(lambda: build(poor), 400, "Not enough balance for token")
    expect_error(lambda: build(poor, tokens=()), 400, "Not enough balance: got 0")
    expect_error(lambda: build(atto_alph_amount=1_000 * ONE_ALPH), 400, "Not enough balance")
    expect_error(lambda: build(from_public_key=b"\x02" + b"\x00" * 32), 400, "Invalid public key")
    expect_error(lambda: build(from_public_key_type="bip340-schnorr"), 400, "Unsupported")
    expect_error(lambda: build(group=(group_of(alice.lockup) + 1) % 4), 400, "group")
    expect_error(lambda: build(bytecode=b"\x01\x02"), 400, "Invalid bytecode")
    # approvals the transaction does not provide
    expect_error(lambda: build(atto_alph_amount=ORDER_DEPOSIT - 1), 400, "NotEnoughApprovedBalance")
    # a script that is not one contract call, an unknown contract, method, or argument type
    two_calls = TxScript((call.script.methods[0], call.script.methods[0]))
    expect_error(lambda: build(bytecode=encode_script(two_calls)), 400, "UnsupportedScript")
    unknown = build_contract_call(bytes(31) + b"\x00", 0, ())
    expect_error(lambda: build(bytecode=encode_script(unknown), tokens=()), 400, "NonExistContract")
    method9 = build_contract_call(m.market_id, 9, ())
    expect_error(
        lambda: build(bytecode=encode_script(method9), tokens=()), 400, "InvalidMethodIndex"
    )
    bad_args = build_contract_call(m.market_id, 1, (ValU256(1), ValU256(2)))
    expect_error(
        lambda: build(bytecode=encode_script(bad_args), tokens=()), 400, "InvalidMethodArgLength"
    )
    not_public = TxScript(
        (Method(True, True, False, False, 0, 0, 0, call.script.methods[0].instrs[:3]),)
    )
    expect_error(lambda: build(bytecode=encode_script(not_public)), 400, "UnsupportedScript")
    assert h.snapshot(alice) == before


def test_groupless_builds_in_its_group(harness: Harness, m: MarketRef) -> None:
    h = harness
    gl = h.wallet("gl-secp256k1", group=1)
    call = calls.place_order(m, Side.BUY, Outcome.YES, 600, SHARE)
    sent = gl.call(h.node, call)
    assert sent.build["fromGroup"] == 1
    assert h.node.market_orders(m.address)[0]["owner"] == gl.address
    # the same key in another group has nothing
    other = DevnetWallet(gl.private_key, "gl-secp256k1", 2)
    expect_error(lambda: other.call(h.node, call), 400, "Not enough balance")


def test_transfer_destinations(harness: Harness) -> None:
    h = harness
    alice = h.wallet()
    node = h.node
    bob = DevnetWallet.generate()

    def build(*dests: Destination) -> object:
        return node.build_transfer(from_public_key=alice.public_key, destinations=list(dests))

    expect_error(lambda: build(), 400, "at least one")
    expect_error(lambda: build(Destination(h.config.registry_address, ONE_ALPH)), 400, "contract")
    expect_error(lambda: build(Destination("not-an-address", ONE_ALPH)), 400, "Invalid address")
    expect_error(
        lambda: build(Destination(bob.address, DUST + 1, [(h.collateral, 1)])), 400, "dust"
    )
    expect_error(lambda: build(Destination(bob.address, ONE_ALPH, [(h.collateral, 0)])), 400)
    expect_error(lambda: build(Destination(bob.address, ONE_ALPH, (), None, b"x" * 257)), 400)
    doc = node.build_transfer(
        from_public_key=alice.public_key,
        destinations=[Destination(bob.address, DUST + ONE_ALPH, [(h.collateral, 7)], None, b"hi")],
    )
    tx = decode_unsigned_tx(str(doc["unsignedTx"]))
    assert tx.fixed_outputs[:2] == (
        AssetOutput(DUST, bob.lockup, 0, (Token(h.collateral, 7),), b"hi"),
        AssetOutput(ONE_ALPH, bob.lockup, 0, (), b"hi"),
    )
    alice.submit_built(node, doc)
    assert h.token(bob, h.collateral) == 7 and h.alph(bob) == DUST + ONE_ALPH
