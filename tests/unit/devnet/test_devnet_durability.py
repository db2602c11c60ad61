"""Durability: stop and re-open the devnet and everything observable is still there."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from devnet_harness import Clock, Harness, expect_error

from predmarket.alephium.address import contract_address
from predmarket.alephium.constants import ONE_ALPH
from predmarket.devnet.calls import MarketRef
from predmarket.devnet.errors import DevnetStateError
from predmarket.devnet.node import Destination, DevnetNode
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Resolution, Side

SHARE = 10**18
BUY, SELL, YES, NO = Side.BUY, Side.SELL, Outcome.YES, Outcome.NO


def everything(h: Harness, wallets: list[DevnetWallet], tx_ids: list[bytes]) -> dict[str, Any]:
    node = h.node
    cfg = node.config
    addresses = [w.address for w in wallets] + [cfg.operator_address, cfg.faucet_address]
    contracts = [cfg.registry_address, cfg.collateral_token_address]
    for m in h.markets:
        contracts += [m.address, contract_address(m.yes_id), contract_address(m.no_id)]
    return {
        "tip": node.tip(),
        "totals": node.ledger_totals(),
        "balances": {a: node.balance(a) for a in addresses},
        "utxos": {a: node.utxos(a) for a in addresses},
        "contracts": {a: node.contract_state(a) for a in contracts},
        "events": {a: h.events(a) for a in contracts},
        "counts": {a: h.events(a) and node.event_count(a) for a in contracts},
        "orders": {m.address: node.market_orders(m.address) for m in h.markets},
        "status": {t.hex(): node.tx_status(t) for t in tx_ids},
        "details": {t.hex(): node.tx_details(t) for t in tx_ids},
    }


def reopen(h: Harness, **kw: Any) -> None:
    h.node.close()
    h.node = DevnetNode.open(h.data_dir, clock_ms=h.clock, faucet_cooldown_ms=0, **kw)


def test_everything_survives_a_restart(harness: Harness) -> None:
    h = harness
    alice, bob, carol = h.wallet(), h.wallet(), h.wallet("gl-secp256k1", 3)
    m = h.create_market()
    other = h.create_market("Another?")
    sent = [
        h.place(alice, m, BUY, YES, 600, 3 * SHARE),
        h.place(bob, m, BUY, NO, 400, SHARE),  # mint, alice keeps 2 resting
        h.place(carol, m, BUY, NO, 300, SHARE),
        h.place(carol, other, BUY, YES, 10, SHARE),
        h.cancel(carol, m, 3),
        h.place(bob, m, SELL, NO, 450, SHARE // 2),
        alice.transfer(h.node, [Destination(carol.address, ONE_ALPH)]),
        h.resolve(other, Resolution.NO),
    ]
    tx_ids = [s.tx_id for s in sent]
    before = everything(h, [alice, bob, carol], tx_ids)

    reopen(h)
    assert everything(h, [alice, bob, carol], tx_ids) == before

    # the reopened chain goes on where it stopped: carol's NO buy mints against alice's YES
    # bid (NO at 400), cheaper than bob's NO ask at 450
    h.place(carol, m, BUY, NO, 460, SHARE // 2)
    assert h.token(carol, m.no_id) == SHARE // 2
    orders = h.node.market_orders(m.address)
    assert [(o["orderId"], o["remaining"]) for o in orders] == [
        (1, str(3 * SHARE // 2)),
        (4, str(SHARE // 2)),
    ]
    after = everything(h, [alice, bob, carol], tx_ids)
    reopen(h)
    assert everything(h, [alice, bob, carol], tx_ids) == after


def test_the_config_and_its_test_keys_persist(harness: Harness, tmp_path: Path) -> None:
    h = harness
    config = h.node.config
    doc = json.loads((h.data_dir / "devnet.json").read_text())
    assert "devnet-only test keys" in doc["warning"]
    assert doc["operator"]["privateKey"] == config.operator_private_key.hex()
    assert doc["marketRegistry"]["address"] == config.registry_address
    assert "privateKey" not in json.dumps(config.to_json())
    reopen(h)
    assert h.node.config == config
    h.node.close()
    with pytest.raises(ValueError, match="network id 4"):
        DevnetNode.open(h.data_dir, network_id=5)
    # another data dir on the same network id has the same contract ids, other keys
    fresh = DevnetNode.open(tmp_path / "other")
    try:
        assert fresh.config.registry_id == config.registry_id
        assert fresh.config.operator_private_key != config.operator_private_key
    finally:
        fresh.close()
    h.node = DevnetNode.open(h.data_dir, clock_ms=h.clock)


def test_mined_failures_replay_and_the_mempool_is_lost(interval: Harness) -> None:
    h = interval
    m = h.create_market(close_in_ms=10_000)
    alice = DevnetWallet.generate()
    h.node.faucet(alice.address)
    h.node.mine()
    failing = h.place(alice, m, BUY, YES, 600, SHARE)
    h.clock.advance(10_000)
    assert h.node.mine() == 1
    assert h.node.tx_details(failing.tx_id)["scriptExecutionOk"] is False
    pending = alice.transfer(h.node, [Destination(alice.address, ONE_ALPH)])
    assert h.node.tx_status(pending.tx_id) == {"type": "MemPooled"}
    before = everything(h, [alice], [failing.tx_id])

    reopen(h, automine=False)
    assert everything(h, [alice], [failing.tx_id]) == before
    assert h.node.tx_status(pending.tx_id) == {"type": "TxNotFound"}
    # the lost transaction can simply be submitted again
    h.node.submit(bytes.fromhex(str(pending.build["unsignedTx"])), alice.sign(pending.tx_id))
    assert h.node.mine() == 1


def test_a_log_that_does_not_replay_is_refused(harness: Harness) -> None:
    h = harness
    alice = h.wallet()
    alice.transfer(h.node, [Destination(alice.address, ONE_ALPH)])
    h.node.close()
    db = sqlite3.connect(h.data_dir / "chain.sqlite3")
    db.execute("UPDATE block SET timestamp = timestamp + 1 WHERE height = 2")
    db.commit()
    db.close()
    with pytest.raises(DevnetStateError, match="block 2"):
        DevnetNode.open(h.data_dir, clock_ms=h.clock)
    h.node = DevnetNode.open(h.data_dir / "unused", clock_ms=h.clock)


def test_closed_node_refuses_calls(tmp_path: Path) -> None:
    node = DevnetNode.open(tmp_path / "d", clock_ms=Clock())
    node.close()
    node.close()  # idempotent
    expect_error(lambda: node.balance(node.config.faucet_address), 503, "closed")


def test_market_ref_survives(harness: Harness) -> None:
    h = harness
    m = h.create_market()
    reopen(h)
    events = h.node.events(h.config.registry_address, 0)["events"]
    assert isinstance(events, list)
    assert MarketRef.from_event(events[0]["fields"], h.collateral) == m


def test_a_block_that_cannot_be_written_stops_the_node(harness: Harness) -> None:
    h = harness
    alice = h.wallet()
    m = h.create_market()
    before = everything(h, [alice], [])
    h.node._log.close()  # the disk goes away under the node
    expect_error(lambda: h.place(alice, m, BUY, YES, 600, SHARE), 500, "writing block")
    expect_error(lambda: h.node.balance(alice.address), 500, "must be reopened")
    # nothing of the unwritten block survives: the reopened node replays what was written
    h.node = DevnetNode.open(h.data_dir, clock_ms=h.clock, faucet_cooldown_ms=0)
    assert everything(h, [alice], []) == before
    h.place(alice, m, BUY, YES, 600, SHARE)


def test_concurrent_callers(harness: Harness) -> None:
    h = harness
    wallets = [h.wallet() for _ in range(6)]
    m = h.create_market()
    errors: list[BaseException] = []

    def trade(w: DevnetWallet, i: int) -> None:
        try:
            for k in range(5):
                side_outcome = (BUY, YES) if (i + k) % 2 else (BUY, NO)
                h.place(w, m, *side_outcome, 480 + 10 * k, SHARE // 10)
                h.node.balance(w.address)
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=trade, args=(w, i)) for i, w in enumerate(wallets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # 6 faucet blocks, the market, then one block per order
    assert h.node.tip()["height"] == 6 + 1 + 6 * 5
    totals = h.node.ledger_totals()
    assert int(str(totals["genesisAlph"])) == sum(
        int(str(totals[k])) for k in ("walletsAlph", "contractsAlph", "gasFees")
    )
