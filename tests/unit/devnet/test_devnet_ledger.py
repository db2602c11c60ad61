"""The ledger's rules: every rejection with the node's status and detail, and state unchanged."""

from __future__ import annotations

import dataclasses
import secrets

import pytest
from devnet_harness import DUST, Harness, expect_error

from predmarket.alephium.constants import (
    MAX_GAS_PER_TX,
    MIN_GAS_PRICE,
    ONE_ALPH,
    SECP256K1_N,
)
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import output_hint
from predmarket.alephium.tx import (
    SAME_AS_PREVIOUS,
    AssetOutput,
    Input,
    P2PKHUnlock,
    P2PKUnlock,
    Token,
    UnsignedTx,
    decode_unsigned_tx,
    encode_unsigned_tx,
    from_group,
    to_group,
    tx_id,
    unsigned_tx_to_api_json,
)
from predmarket.devnet.node import Destination, DevnetNode
from predmarket.devnet.wallet import DevnetWallet


def build_transfer(h: Harness, sender: DevnetWallet, to: str, amount: int) -> UnsignedTx:
    doc = h.node.build_transfer(
        from_public_key=sender.public_key,
        from_public_key_type=sender.key_type,
        destinations=[Destination(to, amount)],
        group=sender.group,
    )
    return decode_unsigned_tx(str(doc["unsignedTx"]))


def submit(h: Harness, tx: UnsignedTx, signer: DevnetWallet) -> dict[str, object]:
    raw = encode_unsigned_tx(tx)
    return h.node.submit(raw, signer.sign(blake2b256(raw)))


def flip_s(signature: str) -> str:
    r, s = signature[:64], int(signature[64:], 16)
    return r + (SECP256K1_N - s).to_bytes(32, "big").hex()


@pytest.fixture
def alice(harness: Harness) -> DevnetWallet:
    return harness.wallet()


@pytest.fixture
def bob(harness: Harness) -> DevnetWallet:
    return harness.wallet()


class TestTransfer:
    def test_moves_exactly_the_amount_and_burns_the_fee(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        before_a, before_b = harness.alph(alice), harness.alph(bob)
        sent = alice.transfer(harness.node, [Destination(bob.address, 3 * ONE_ALPH)])
        assert sent.build["gasAmount"] == 20_000  # 1 input, 2 outputs: the minimum
        assert harness.alph(alice) == before_a - 3 * ONE_ALPH - 20_000 * MIN_GAS_PRICE
        assert harness.alph(bob) == before_b + 3 * ONE_ALPH
        status = harness.node.tx_status(sent.tx_id)
        assert status["type"] == "Confirmed" and status["chainConfirmations"] == 1
        alice.transfer(harness.node, [Destination(bob.address, ONE_ALPH)])
        assert harness.node.tx_status(sent.tx_id)["chainConfirmations"] == 2
        assert harness.node.is_block_in_main_chain(bytes.fromhex(str(status["blockHash"])))

    def test_tokens_travel_one_per_output_with_dust(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        c = harness.collateral
        before = harness.token(bob, c), harness.alph(bob)
        doc = harness.node.build_transfer(
            from_public_key=alice.public_key,
            destinations=[Destination(bob.address, 0, [(c, 5 * 10**18)])],
        )
        tx = decode_unsigned_tx(str(doc["unsignedTx"]))
        to_bob = [o for o in tx.fixed_outputs if o.lockup == bob.lockup]
        assert to_bob == [AssetOutput(DUST, bob.lockup, tokens=(Token(c, 5 * 10**18),))]
        alice.submit_built(harness.node, doc)
        assert (harness.token(bob, c), harness.alph(bob)) == (
            before[0] + 5 * 10**18,
            before[1] + DUST,
        )

    def test_groupless_key_spends_several_inputs_with_same_as_previous(
        self, harness: Harness, alice: DevnetWallet
    ) -> None:
        gl = DevnetWallet.generate("gl-secp256k1", group=2)
        for _ in range(3):
            alice.transfer(harness.node, [Destination(gl.address, 2 * ONE_ALPH)])
        assert gl.address.endswith(":2")
        sent = gl.transfer(harness.node, [Destination(alice.address, 5 * ONE_ALPH)])
        tx = decode_unsigned_tx(str(sent.build["unsignedTx"]))
        assert [i.unlock for i in tx.inputs] == [
            tx.inputs[0].unlock,
            SAME_AS_PREVIOUS,
            SAME_AS_PREVIOUS,
        ]
        assert isinstance(tx.inputs[0].unlock, P2PKUnlock)
        assert sent.submit["fromGroup"] == 2
        assert harness.alph(gl) == 6 * ONE_ALPH - 5 * ONE_ALPH - harness.fee(sent)

    def test_decode_matches_the_codec(self, harness: Harness, alice: DevnetWallet) -> None:
        tx = build_transfer(harness, alice, alice.address, ONE_ALPH)
        doc = harness.node.decode_unsigned_tx(encode_unsigned_tx(tx))
        assert doc["unsignedTx"] == unsigned_tx_to_api_json(tx)
        assert (doc["fromGroup"], doc["toGroup"]) == (from_group(tx), to_group(tx))
        assert harness.node.submit(encode_unsigned_tx(tx), alice.sign(tx_id(tx)))["fromGroup"] == (
            from_group(tx)
        )


class TestRejections:
    """Each bad transaction: status 400, the node's reason, and nothing changed."""

    def check(
        self,
        h: Harness,
        tx: UnsignedTx,
        signature: str,
        reason: str,
        *wallets: DevnetWallet,
    ) -> None:
        before = h.snapshot(*wallets)
        raw = encode_unsigned_tx(tx)
        expect_error(
            lambda: h.node.submit(raw, signature),
            400,
            f"Failed in validating tx {blake2b256(raw).hex()}: {reason}",
        )
        assert h.snapshot(*wallets) == before
        if reason != "TxAlreadyExisted":
            assert h.node.tx_status(blake2b256(raw)) == {"type": "TxNotFound"}

    def test_bad_signature(self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        signature = bob.sign(blake2b256(encode_unsigned_tx(tx)))
        self.check(harness, tx, signature, "InvalidSignature", alice, bob)

    def test_signature_over_another_message(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        signature = alice.sign(blake2b256(b"something else"))
        self.check(harness, tx, signature, "InvalidSignature", alice, bob)

    def test_high_s_signature(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        good = alice.sign(blake2b256(encode_unsigned_tx(tx)))
        self.check(harness, tx, flip_s(good), "InvalidSignature", alice, bob)
        # the same transaction with the low-s signature is fine
        harness.node.submit(encode_unsigned_tx(tx), good)

    def test_wrong_network_id(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        tx = dataclasses.replace(
            build_transfer(harness, alice, bob.address, ONE_ALPH), network_id=0
        )
        signature = alice.sign(blake2b256(encode_unsigned_tx(tx)))
        self.check(harness, tx, signature, "InvalidNetworkId", alice, bob)

    def test_unknown_input(self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        inp = tx.inputs[0]
        tx = dataclasses.replace(tx, inputs=(Input(inp.hint, secrets.token_bytes(32), inp.unlock),))
        signature = alice.sign(blake2b256(encode_unsigned_tx(tx)))
        self.check(harness, tx, signature, "NonExistInput", alice, bob)

    def test_input_of_another_owner(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        mine = build_transfer(harness, alice, bob.address, ONE_ALPH)
        theirs = build_transfer(harness, bob, alice.address, ONE_ALPH).inputs[0]
        # Alice's key cannot unlock Bob's output...
        tx = dataclasses.replace(
            mine, inputs=(Input(theirs.hint, theirs.key, P2PKHUnlock(alice.public_key)),)
        )
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidPublicKeyHash",
            alice,
            bob,
        )
        # ...and naming Bob's key does not help without Bob's signature.
        tx = dataclasses.replace(mine, inputs=(theirs,))
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidSignature",
            alice,
            bob,
        )
        # A second input of another owner cannot ride on the first one's signature.
        tx = dataclasses.replace(
            mine,
            inputs=(mine.inputs[0], Input(theirs.hint, theirs.key, SAME_AS_PREVIOUS)),
        )
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidUnlockScript",
            alice,
            bob,
        )

    def test_double_spend_in_one_tx(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        dup = Input(tx.inputs[0].hint, tx.inputs[0].key, SAME_AS_PREVIOUS)
        tx = dataclasses.replace(tx, inputs=(tx.inputs[0], dup))
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "DuplicatedInputs",
            alice,
            bob,
        )

    def test_double_spend_across_txs(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        first = build_transfer(harness, alice, bob.address, ONE_ALPH)
        second = build_transfer(harness, alice, bob.address, 2 * ONE_ALPH)
        assert first.inputs == second.inputs
        submit(harness, first, alice)
        self.check(
            harness,
            second,
            alice.sign(blake2b256(encode_unsigned_tx(second))),
            "DoubleSpending",
            alice,
            bob,
        )

    def test_insufficient_funds(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        before = harness.snapshot(alice, bob)
        expect_error(
            lambda: build_transfer(harness, alice, bob.address, 1_000 * ONE_ALPH),
            400,
            "Not enough balance",
        )
        assert harness.snapshot(alice, bob) == before
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        first = tx.fixed_outputs[0]
        tx = dataclasses.replace(
            tx,
            fixed_outputs=(
                dataclasses.replace(first, amount=1_000 * ONE_ALPH),
                *tx.fixed_outputs[1:],
            ),
        )
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidAlphBalance",
            alice,
            bob,
        )

    def test_unbalanced_tx(self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        first = tx.fixed_outputs[0]
        tx = dataclasses.replace(
            tx,
            fixed_outputs=(
                dataclasses.replace(first, amount=first.amount - 1),
                *tx.fixed_outputs[1:],
            ),
        )
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidAlphBalance",
            alice,
            bob,
        )

    def test_tokens_out_of_nothing(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        change = tx.fixed_outputs[-1]
        # Alice's ALPH-only input cannot pay an output of collateral she does not spend.
        tx = dataclasses.replace(
            tx,
            inputs=tx.inputs[:1],
            fixed_outputs=(
                *tx.fixed_outputs[:-1],
                dataclasses.replace(change, amount=change.amount - DUST),
                AssetOutput(DUST, bob.lockup, tokens=(Token(harness.collateral, 1),)),
            ),
        )
        tx = dataclasses.replace(tx, gas_amount=tx.gas_amount)
        reason = "InvalidTokenBalance"
        self.check(harness, tx, alice.sign(blake2b256(encode_unsigned_tx(tx))), reason, alice, bob)

    def test_below_dust_output(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        expect_error(lambda: build_transfer(harness, alice, bob.address, DUST - 1), 400, "dust")
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        first, change = tx.fixed_outputs
        tx = dataclasses.replace(
            tx,
            fixed_outputs=(
                dataclasses.replace(first, amount=DUST - 1),
                dataclasses.replace(change, amount=change.amount + ONE_ALPH - DUST + 1),
            ),
        )
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidOutputStats",
            alice,
            bob,
        )

    def test_two_tokens_in_one_output(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        c = harness.collateral
        other = blake2b256(b"another token")
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        first, *rest = tx.fixed_outputs
        two = dataclasses.replace(first, amount=DUST, tokens=(Token(c, 1), Token(other, 1)))
        tx = dataclasses.replace(tx, fixed_outputs=(two, *rest))
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "InvalidOutputStats (fixed output 0: 2 tokens",
            alice,
            bob,
        )

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            ({"gas_price": MIN_GAS_PRICE - 1}, "InvalidGasPrice"),
            ({"gas_amount": 19_999}, "InvalidStartGas"),
            ({"gas_amount": MAX_GAS_PER_TX + 1}, "InvalidStartGas"),
            ({"version": 1}, "InvalidTxVersion"),
        ],
    )
    def test_gas_and_version(
        self,
        harness: Harness,
        alice: DevnetWallet,
        bob: DevnetWallet,
        change: dict[str, int],
        reason: str,
    ) -> None:
        tx = dataclasses.replace(build_transfer(harness, alice, bob.address, ONE_ALPH), **change)
        self.check(harness, tx, alice.sign(blake2b256(encode_unsigned_tx(tx))), reason, alice, bob)

    def test_not_enough_gas_for_the_tx(self, harness: Harness, alice: DevnetWallet) -> None:
        dests = [Destination(alice.address, ONE_ALPH) for _ in range(5)]
        doc = harness.node.build_transfer(from_public_key=alice.public_key, destinations=dests)
        tx = decode_unsigned_tx(str(doc["unsignedTx"]))
        assert tx.gas_amount == 1_000 + 2_000 + 6 * 4_500  # 6 outputs: the estimate
        tx = dataclasses.replace(tx, gas_amount=20_000)
        tx = dataclasses.replace(
            tx,
            fixed_outputs=(
                *tx.fixed_outputs[:-1],
                dataclasses.replace(
                    tx.fixed_outputs[-1],
                    amount=tx.fixed_outputs[-1].amount + 10_000 * MIN_GAS_PRICE,
                ),
            ),
        )
        self.check(harness, tx, alice.sign(blake2b256(encode_unsigned_tx(tx))), "OutOfGas", alice)

    def test_resubmitting_a_mined_tx(
        self, harness: Harness, alice: DevnetWallet, bob: DevnetWallet
    ) -> None:
        tx = build_transfer(harness, alice, bob.address, ONE_ALPH)
        submit(harness, tx, alice)
        self.check(
            harness,
            tx,
            alice.sign(blake2b256(encode_unsigned_tx(tx))),
            "TxAlreadyExisted",
            alice,
            bob,
        )

    def test_undecodable_and_non_canonical_bytes(
        self, harness: Harness, alice: DevnetWallet
    ) -> None:
        raw = encode_unsigned_tx(build_transfer(harness, alice, alice.address, ONE_ALPH))
        before = harness.snapshot(alice)
        sig = alice.sign(blake2b256(raw))
        expect_error(lambda: harness.node.submit(raw[:-1], sig), 400, "Failed in decoding")
        expect_error(lambda: harness.node.submit(raw + b"\x00", sig), 400, "Failed in decoding")
        expect_error(lambda: harness.node.decode_unsigned_tx(b"\x00"), 400, "Failed in decoding")
        assert harness.snapshot(alice) == before


class TestLockTime:
    def test_locked_outputs_cannot_be_spent_until_their_time(
        self, harness: Harness, alice: DevnetWallet
    ) -> None:
        carol = DevnetWallet.generate()
        unlock_at = harness.clock.now + 60_000
        alice.transfer(harness.node, [Destination(carol.address, 5 * ONE_ALPH, (), unlock_at)])
        balance = harness.node.balance(carol.address)
        assert balance["balance"] == balance["lockedBalance"] == str(5 * ONE_ALPH)
        assert harness.node.utxos(carol.address)["utxos"][0]["lockTime"] == unlock_at
        expect_error(
            lambda: build_transfer(harness, carol, alice.address, ONE_ALPH),
            400,
            "Not enough balance",
        )
        # a hand-made spend of the locked output is refused
        utxo = harness.node.utxos(carol.address)["utxos"][0]
        out = AssetOutput(5 * ONE_ALPH - 20_000 * MIN_GAS_PRICE, alice.lockup)
        tx = UnsignedTx(
            0,
            harness.config.network_id,
            None,
            20_000,
            MIN_GAS_PRICE,
            (
                Input(
                    utxo["ref"]["hint"],
                    bytes.fromhex(utxo["ref"]["key"]),
                    P2PKHUnlock(carol.public_key),
                ),
            ),
            (out,),
        )
        raw = encode_unsigned_tx(tx)
        expect_error(
            lambda: harness.node.submit(raw, carol.sign(blake2b256(raw))), 400, "TimeLockedTx"
        )
        harness.clock.advance(60_000)
        assert harness.node.balance(carol.address)["lockedBalance"] == "0"
        harness.node.submit(raw, carol.sign(blake2b256(raw)))
        assert harness.alph(carol) == 0


class TestMempool:
    def test_interval_mode_mempools_then_confirms(self, interval: Harness) -> None:
        h = interval
        alice = DevnetWallet.generate()
        faucet = h.node.faucet(alice.address)
        assert h.node.tx_status(bytes.fromhex(str(faucet["txId"]))) == {"type": "MemPooled"}
        assert h.node.balance(alice.address)["balance"] == "0"
        assert int(str(h.node.balance(alice.address, mempool=True)["balance"])) > 0
        # the faucet output is spendable from the mempool view already
        bob = DevnetWallet.generate()
        sent = alice.transfer(h.node, [Destination(bob.address, ONE_ALPH)])
        assert h.node.mine() == 2
        assert h.node.mine() == 0
        status = h.node.tx_status(sent.tx_id)
        assert status["type"] == "Confirmed" and status["txIndex"] == 1
        assert h.alph(bob) == ONE_ALPH

    def test_conflict_with_the_mempool(self, interval: Harness) -> None:
        h = interval
        alice = DevnetWallet.generate()
        h.node.faucet(alice.address)
        h.node.mine()
        bob = DevnetWallet.generate()
        first = build_transfer(h, alice, bob.address, ONE_ALPH)
        second = build_transfer(h, alice, bob.address, 2 * ONE_ALPH)
        submit(h, first, alice)
        raw = encode_unsigned_tx(second)
        before = (h.node.balance(alice.address, mempool=True), h.node.tip())
        expect_error(
            lambda: h.node.submit(raw, alice.sign(blake2b256(raw))),
            400,
            "DoubleSpending",
            "mempool tx",
        )
        assert (h.node.balance(alice.address, mempool=True), h.node.tip()) == before
        assert h.node.mine() == 1
        assert h.alph(bob) == ONE_ALPH


def test_status_of_unknown_tx(harness: Harness) -> None:
    assert harness.node.tx_status(bytes(32)) == {"type": "TxNotFound"}
    expect_error(lambda: harness.node.tx_details(bytes(32)), 404, "not found")
    expect_error(lambda: harness.node.is_block_in_main_chain(bytes(32)), 404, "not found")


def test_faucet_is_rate_limited(harness: Harness) -> None:
    h = harness
    node = h.node
    reopened_cooldown = 30_000
    # the harness node has no cooldown; a per-address cooldown applies when configured
    node.close()
    limited = DevnetNode.open(h.data_dir, clock_ms=h.clock, faucet_cooldown_ms=reopened_cooldown)
    h.node = limited
    w = DevnetWallet.generate()
    first = limited.faucet(w.address)
    assert first["attoAlphAmount"] == str(100 * ONE_ALPH)
    assert first["tokens"] == [{"id": h.collateral.hex(), "amount": str(10_000 * 10**18)}]
    before = h.snapshot(w)
    expect_error(lambda: limited.faucet(w.address), 429, "retry in 30 s")
    assert h.snapshot(w) == before
    limited.faucet(DevnetWallet.generate().address)  # another address is not limited
    h.clock.advance(reopened_cooldown)
    limited.faucet(w.address)
    assert h.alph(w) == 2 * (100 * ONE_ALPH + DUST)
    assert h.token(w, h.collateral) == 2 * 10_000 * 10**18
    expect_error(lambda: limited.faucet(h.config.registry_address), 400, "contracts")


def test_genesis_hint_and_outputs(harness: Harness) -> None:
    utxos = harness.node.utxos(harness.config.operator_address)["utxos"]
    assert len(utxos) == 4
    assert all(u["ref"]["hint"] == output_hint(harness.config.operator_lockup) for u in utxos)
