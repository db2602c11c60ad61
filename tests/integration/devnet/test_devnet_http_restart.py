"""Durability over HTTP: stop the server and the node, reopen the data dir, serve again.

Balances, UTXOs, resting orders, contract states, events, event counts, transaction statuses and
the tip read the same on the new server, and trading carries on from there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from devnet_http import Devnet, Market, Wallet, close_devnet, open_devnet

SHARE = 10**18


def _everything(dn: Devnet, wallets: list[Wallet], market: Market, txs: list[str]) -> Any:
    contracts = [
        market.address,
        dn.config["marketRegistry"]["address"],
        dn.config["collateralToken"]["address"],
    ]
    doc = dn.snapshot([w.address for w in wallets], contracts)
    doc["orders"] = dn.get_ok(f"/devnet/markets/{market.address}/orders")
    doc["counts"] = [dn.get_ok(f"/events/contract/{c}/current-count") for c in contracts]
    doc["statuses"] = [dn.status(t) for t in txs]
    doc["details"] = [dn.get_ok(f"/transactions/details/{t}") for t in txs]
    doc["config"] = dn.config
    return doc


def test_restart_keeps_everything(tmp_path: Path) -> None:
    data_dir = tmp_path / "devnet"
    dn = open_devnet(data_dir)
    alice, bob = Wallet.generate(), Wallet.generate("gl-secp256k1")
    try:
        for wallet in (alice, bob):
            dn.faucet(wallet.address)
        market = dn.create_market()
        txs = [
            # Alice buys YES at 0.40 and Bob buys NO at 0.60: a mint trade.
            alice.place(dn, market, side=0, outcome=0, price=400, quantity=3 * SHARE).tx_id,
            bob.place(dn, market, side=0, outcome=1, price=600, quantity=2 * SHARE).tx_id,
            # Two resting orders, one of them cancelled.
            alice.place(dn, market, side=0, outcome=0, price=100, quantity=SHARE).tx_id,
            bob.place(dn, market, side=1, outcome=1, price=900, quantity=SHARE).tx_id,
        ]
        orders = dn.get_ok(f"/devnet/markets/{market.address}/orders")["orders"]
        cheapest = min(orders, key=lambda o: o["price"])
        cancel = dn.cancel_order_call(market, cheapest["orderId"])
        txs.append(alice.call(dn, cancel).tx_id)
        txs.append(alice.transfer(dn, bob.address, 5 * 10**18).tx_id)
        before = _everything(dn, [alice, bob], market, txs)
        assert len(before["orders"]["orders"]) == 2
        assert {e["eventIndex"] for e in before[market.address][1]} >= {0, 1, 2}
    finally:
        close_devnet(dn)

    again = open_devnet(data_dir)
    try:
        assert _everything(again, [alice, bob], market, txs) == before
        # Trading continues on the reopened chain: a new order and a cancel of an old one.
        new = bob.place(again, market, side=0, outcome=1, price=550, quantity=SHARE)
        assert again.status(new.tx_id)["type"] == "Confirmed"
        old = next(o for o in before["orders"]["orders"] if o["owner"] == bob.address)
        bob.call(again, again.cancel_order_call(market, old["orderId"]))
        remaining = again.get_ok(f"/devnet/markets/{market.address}/orders")["orders"]
        assert old["orderId"] not in {o["orderId"] for o in remaining}
        assert again.status(txs[0])["chainConfirmations"] == (
            before["statuses"][0]["chainConfirmations"] + 2
        )
    finally:
        close_devnet(again)

    third = open_devnet(data_dir)
    try:
        assert third.get_ok(f"/devnet/markets/{market.address}/orders") == {"orders": remaining}
    finally:
        close_devnet(third)
