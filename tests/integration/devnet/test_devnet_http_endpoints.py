"""Every endpoint of the devnet over real HTTP: status and JSON shape as the node gives them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from devnet_http import Devnet, Market, Wallet

from predmarket.alephium.address import contract_address, is_valid_address
from predmarket.alephium.constants import DUST_AMOUNT
from predmarket.alephium.tx import decode_unsigned_tx, unsigned_tx_to_api_json

HEX32 = re.compile(r"^[0-9a-f]{64}$")
DECIMAL = re.compile(r"^(0|[1-9][0-9]*)$")


def _is_amount(value: object) -> bool:
    return isinstance(value, str) and DECIMAL.match(value) is not None


def _is_hash(value: object) -> bool:
    return isinstance(value, str) and HEX32.match(value) is not None


def _is_val(value: Any) -> bool:
    kind = value.get("type")
    if kind in ("U256", "I256"):
        return isinstance(value["value"], str)
    if kind == "Bool":
        return isinstance(value["value"], bool)
    if kind == "ByteVec":
        return isinstance(value["value"], str)
    if kind == "Address":
        return is_valid_address(value["value"])
    return False


class TestInfos:
    def test_node(self, devnet: Devnet) -> None:
        info = devnet.get_ok("/infos/node")
        assert set(info) >= {"buildInfo", "upnp"}
        assert set(info["buildInfo"]) == {"releaseVersion", "commit"}
        assert info["upnp"] is False

    def test_version(self, devnet: Devnet) -> None:
        assert isinstance(devnet.get_ok("/infos/version")["version"], str)

    def test_chain_params(self, devnet: Devnet) -> None:
        params = devnet.get_ok("/infos/chain-params")
        assert params == {
            "networkId": 4,
            "numZerosAtLeastInHash": params["numZerosAtLeastInHash"],
            "groupNumPerBroker": 4,
            "groups": 4,
        }

    def test_self_clique_reports_the_serving_port(self, devnet: Devnet) -> None:
        clique = devnet.get_ok("/infos/self-clique")
        assert clique["synced"] is True and clique["selfReady"] is True
        assert isinstance(clique["cliqueId"], str)
        (peer,) = clique["nodes"]
        assert peer["restPort"] == devnet.server.port
        assert set(peer) == {"address", "restPort", "wsPort", "minerApiPort"}


class TestAddresses:
    def test_balance_of_a_funded_wallet(self, devnet: Devnet, funded: Wallet) -> None:
        balance = devnet.balance(funded.address)
        assert _is_amount(balance["balance"]) and int(balance["balance"]) > 0
        assert balance["balanceHint"].endswith(" ALPH")
        assert balance["lockedBalance"] == "0"
        assert isinstance(balance["utxoNum"], int) and balance["utxoNum"] >= 2
        (token,) = balance["tokenBalances"]
        assert token == {
            "id": devnet.collateral_id.hex(),
            "amount": devnet.config["faucet"]["collateralAmount"],
        }

    def test_balance_of_an_unknown_address_is_zero(self, devnet: Devnet) -> None:
        balance = devnet.balance(Wallet.generate().address)
        assert balance["balance"] == "0" and balance["utxoNum"] == 0
        assert "tokenBalances" not in balance

    def test_balance_with_mempool_flag(self, devnet: Devnet, funded: Wallet) -> None:
        plain = devnet.balance(funded.address)
        assert devnet.get_ok(f"/addresses/{funded.address}/balance", mempool="true") == plain
        assert devnet.get_ok(f"/addresses/{funded.address}/balance", mempool="false") == plain

    def test_utxos(self, devnet: Devnet, funded: Wallet) -> None:
        utxos = devnet.get_ok(f"/addresses/{funded.address}/utxos")["utxos"]
        assert len(utxos) == devnet.balance(funded.address)["utxoNum"]
        for utxo in utxos:
            assert isinstance(utxo["ref"]["hint"], int) and _is_hash(utxo["ref"]["key"])
            assert _is_amount(utxo["amount"])
            assert utxo["lockTime"] == 0 and utxo["additionalData"] == ""
        assert sum(int(u["amount"]) for u in utxos) == devnet.alph(funded.address)

    def test_groupless_address(self, devnet: Devnet) -> None:
        wallet = Wallet.generate("gl-secp256k1")
        assert wallet.address[-2] == ":"
        devnet.faucet(wallet.address)
        # The faucet's ALPH, plus the dust riding with the collateral token output.
        faucet_alph = int(devnet.config["faucet"]["attoAlphAmount"])
        assert devnet.alph(wallet.address) == faucet_alph + DUST_AMOUNT
        assert devnet.token(wallet.address, devnet.collateral_id) > 0


class TestTransactions:
    def test_build_transfer(self, devnet: Devnet, funded: Wallet) -> None:
        to = Wallet.generate().address
        build = funded.build_transfer(devnet, to, 10**18)
        assert set(build) == {"unsignedTx", "gasAmount", "gasPrice", "txId", "fromGroup", "toGroup"}
        assert isinstance(build["gasAmount"], int) and _is_amount(build["gasPrice"])
        assert _is_hash(build["txId"])
        assert 0 <= build["fromGroup"] < 4 and 0 <= build["toGroup"] < 4

    def test_decode_unsigned_tx_matches_our_codec(self, devnet: Devnet, funded: Wallet) -> None:
        build = funded.build_transfer(devnet, Wallet.generate().address, 10**18)
        decoded = devnet.post_ok(
            "/transactions/decode-unsigned-tx", {"unsignedTx": build["unsignedTx"]}
        )
        assert decoded["fromGroup"] == build["fromGroup"]
        assert decoded["toGroup"] == build["toGroup"]
        ours = unsigned_tx_to_api_json(decode_unsigned_tx(bytes.fromhex(build["unsignedTx"])))
        assert decoded["unsignedTx"] == ours

    def test_submit_status_details(self, devnet: Devnet, funded: Wallet) -> None:
        to = Wallet.generate().address
        sent = funded.transfer(devnet, to, 2 * 10**18)
        assert set(sent.submit) == {"txId", "fromGroup", "toGroup"}
        status = devnet.status(sent.tx_id)
        assert status["type"] == "Confirmed"
        assert _is_hash(status["blockHash"]) and status["txIndex"] == 0
        for key in ("chainConfirmations", "fromGroupConfirmations", "toGroupConfirmations"):
            assert status[key] >= 1
        with_groups = devnet.get_ok(
            "/transactions/status",
            txId=sent.tx_id,
            fromGroup=sent.submit["fromGroup"],
            toGroup=sent.submit["toGroup"],
        )
        assert with_groups == status
        details = devnet.get_ok(f"/transactions/details/{sent.tx_id}")
        assert details["txId"] == sent.tx_id and details["blockHash"] == status["blockHash"]
        assert devnet.alph(to) == 2 * 10**18

    def test_confirmations_grow(self, devnet: Devnet, funded: Wallet) -> None:
        first = funded.transfer(devnet, Wallet.generate().address, 10**18)
        before = devnet.status(first.tx_id)["chainConfirmations"]
        funded.transfer(devnet, Wallet.generate().address, 10**18)
        assert devnet.status(first.tx_id)["chainConfirmations"] == before + 1

    def test_unknown_tx(self, devnet: Devnet) -> None:
        assert devnet.status("00" * 32) == {"type": "TxNotFound"}
        response = devnet.get(f"/transactions/details/{'00' * 32}")
        assert response.status_code == 404 and isinstance(response.json()["detail"], str)


class TestContracts:
    def test_execute_script_place_order(
        self, devnet: Devnet, funded: Wallet, market: Market
    ) -> None:
        script, alph, tokens = devnet.place_order_call(
            market, side=0, outcome=0, price=400, quantity=5 * 10**18
        )
        build = funded.build_call(devnet, script, alph=alph, tokens=tokens)
        assert set(build) == {
            "fromGroup",
            "toGroup",
            "unsignedTx",
            "gasAmount",
            "gasPrice",
            "txId",
            "simulationResult",
        }
        simulation = build["simulationResult"]
        assert set(simulation) == {"contractInputs", "generatedOutputs"}
        inputs = {s["address"] for s in simulation["contractInputs"]}
        assert market.address in inputs
        for state in simulation["contractInputs"] + simulation["generatedOutputs"]:
            assert is_valid_address(state["address"]) and _is_amount(state["attoAlphAmount"])
        # The order deposit plus gas is about 0.21 ALPH.
        cost = alph + int(build["gasAmount"]) * int(build["gasPrice"])
        assert 200 * 10**15 <= cost <= 220 * 10**15

    def test_contract_state(self, devnet: Devnet, market: Market) -> None:
        state = devnet.get_ok(f"/contracts/{market.address}/state")
        assert state["address"] == market.address
        assert set(state) >= {"bytecode", "codeHash", "immFields", "mutFields", "asset"}
        assert _is_hash(state["codeHash"])
        assert all(_is_val(v) for v in state["immFields"] + state["mutFields"])
        assert _is_amount(state["asset"]["attoAlphAmount"])

    def test_unknown_contract_state_is_404(self, devnet: Devnet) -> None:
        address = contract_address(bytes(31) + b"\x00")
        response = devnet.get(f"/contracts/{address}/state")
        assert response.status_code == 404
        assert set(response.json()) == {"detail", "resource"}


class TestEvents:
    def test_events_and_count(self, devnet: Devnet, funded: Wallet, market: Market) -> None:
        response = devnet.get(f"/events/contract/{market.address}", start=0)
        assert response.status_code == 404  # nothing emitted yet, like the node
        assert response.json()["detail"] == f"Contract events of {market.address} not found"
        assert devnet.get(f"/events/contract/{market.address}/current-count").status_code == 404

        sent = funded.place(devnet, market, side=0, outcome=0, price=400, quantity=10**18)
        page = devnet.get_ok(f"/events/contract/{market.address}", start=0)
        assert page["nextStart"] == 1
        (event,) = page["events"]
        assert event["txId"] == sent.tx_id and event["contractAddress"] == market.address
        assert event["eventIndex"] == 0 and isinstance(event["timestamp"], int)
        assert event["blockHash"] == devnet.status(sent.tx_id)["blockHash"]
        assert all(_is_val(v) for v in event["fields"])
        assert devnet.get_ok(f"/events/contract/{market.address}/current-count") == 1
        # Polling from nextStart with nothing new: same nextStart, no events.
        assert devnet.get_ok(f"/events/contract/{market.address}", start=1) == {
            "events": [],
            "nextStart": 1,
        }

    def test_limit_counts_batches(self, devnet: Devnet, funded: Wallet, market: Market) -> None:
        for price in (100, 200, 300):
            funded.place(devnet, market, side=0, outcome=0, price=price, quantity=10**18)
        page = devnet.get_ok(f"/events/contract/{market.address}", start=1, limit=1, group=0)
        assert page["nextStart"] == 2 and len(page["events"]) == 1
        assert devnet.get_ok(f"/events/contract/{market.address}", start=0)["nextStart"] == 3


class TestBlockflow:
    def test_is_block_in_main_chain(self, devnet: Devnet, funded: Wallet) -> None:
        sent = funded.transfer(devnet, Wallet.generate().address, 10**18)
        block = devnet.status(sent.tx_id)["blockHash"]
        assert devnet.get_ok("/blockflow/is-block-in-main-chain", blockHash=block) is True
        unknown = devnet.get("/blockflow/is-block-in-main-chain", blockHash="11" * 32)
        assert unknown.status_code == 404


class TestDevnetExtras:
    def test_config(self, devnet: Devnet) -> None:
        config = devnet.config
        assert config["networkId"] == 4 and config["groups"] == 4
        assert config["automine"] is True
        for key in ("collateralToken", "marketRegistry"):
            assert is_valid_address(config[key]["address"])
        assert "privateKey" not in config["operator"] and "privateKey" not in config["faucet"]
        names = {c["name"] for c in config["abi"]["contracts"]}
        assert {"CollateralToken", "MarketRegistry", "Market"} <= names

    def test_tip_and_market_orders(self, devnet: Devnet, funded: Wallet, market: Market) -> None:
        height = devnet.tip()["height"]
        sent = funded.place(devnet, market, side=0, outcome=1, price=250, quantity=10**18)
        tip = devnet.tip()
        assert tip["height"] == height + 1 and tip["txIds"] == [sent.tx_id]
        (order,) = devnet.get_ok(f"/devnet/markets/{market.address}/orders")["orders"]
        assert order["owner"] == funded.address and order["price"] == 250

    def test_mine_with_empty_mempool(self, devnet: Devnet) -> None:
        assert devnet.post_ok("/devnet/mine", {}) == {"txs": 0}


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/nope"), ("POST", "/infos/node"), ("DELETE", "/transactions/submit")],
)
def test_unknown_routes_answer_in_the_node_error_shape(
    devnet: Devnet, method: str, path: str
) -> None:
    response = devnet.http.request(method, path)
    assert response.status_code in (404, 405)
    assert isinstance(response.json()["detail"], str)
