"""NodeClient against a real node over HTTP: the embedded devnet on a loopback port.

Nothing is mocked: the devnet serves the Alephium node's REST paths and JSON shapes, checks
signatures and balances, and answers errors as the node does (``{"detail": ...}``). Wallet keys
are generated per test; transactions are built by the node, signed with our own code and
submitted through the client.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from predmarket.alephium.address import contract_address, contract_id_from_address
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.script import encode_script
from predmarket.devnet import calls
from predmarket.devnet.abi import MARKET, MARKET_REGISTRY, decode_event
from predmarket.devnet.calls import Call, MarketRef
from predmarket.devnet.server import DevnetOptions, DevnetServer, run_devnet_in_thread
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Outcome, Side
from predmarket.node import NodeClient, NodeRejected
from predmarket.node.models import Destination

HOUR_MS = 3_600_000


@pytest.fixture
def devnet(tmp_path: Path) -> Iterator[DevnetServer]:
    """A fresh devnet per test (events start from nothing), faucet cooldown off."""
    with run_devnet_in_thread(DevnetOptions(tmp_path / "devnet", faucet_cooldown_ms=0)) as server:
        yield server


@pytest.fixture
async def node(devnet: DevnetServer) -> AsyncIterator[NodeClient]:
    async with NodeClient(devnet.url, timeout_s=10) as client:
        yield client


def faucet(devnet: DevnetServer, address: str) -> None:
    response = httpx.post(f"{devnet.url}/devnet/faucet", json={"address": address}, timeout=30)
    assert response.status_code == 200, response.text


async def run_call(node: NodeClient, wallet: DevnetWallet, call: Call) -> str:
    """Build ``call`` with the node, sign the txId with our key, submit; returns the tx id."""
    built = await node.execute_script(
        from_public_key=wallet.public_key,
        bytecode=encode_script(call.script),
        atto_alph_amount=call.alph,
        tokens=list(call.tokens),
    )
    # The txId is the hash of the unsigned bytes: never sign what you did not check.
    assert blake2b256(bytes.fromhex(built.unsigned_tx)).hex() == built.tx_id
    submitted = await node.submit(built.unsigned_tx, wallet.sign(bytes.fromhex(built.tx_id)))
    assert submitted.tx_id == built.tx_id
    return built.tx_id


async def create_market(node: NodeClient, devnet: DevnetServer, question: str) -> MarketRef:
    config = devnet.node.config
    operator = DevnetWallet(config.operator_private_key)
    close_ms = int(time.time() * 1000) + HOUR_MS
    call = calls.create_market(config.registry_id, question, "weather", close_ms, b'{"tags":[]}')
    await run_call(node, operator, call)
    page = await node.contract_events(config.registry_address, 0)
    fields = [dict(f) for f in page.events[-1].fields]
    return MarketRef.from_event(fields, bytes(config.collateral_token_id))


class TestInfos:
    async def test_node_chain_and_clique(self, node: NodeClient, devnet: DevnetServer) -> None:
        info = await node.node_info()
        assert info.build_info.release_version
        params = await node.chain_params()
        assert (params.network_id, params.groups) == (
            devnet.node.config.network_id,
            devnet.node.config.groups,
        )
        clique = await node.self_clique()
        assert clique.synced and clique.self_ready
        assert clique.nodes[0].rest_port == devnet.port


class TestEvents:
    async def test_a_contract_without_events_is_an_empty_page(
        self, node: NodeClient, devnet: DevnetServer
    ) -> None:
        registry = devnet.node.config.registry_address
        # The node answers 404 "Contract events of <address> not found" here.
        raw = httpx.get(f"{devnet.url}/events/contract/{registry}", params={"start": 0})
        assert raw.status_code == 404
        page = await node.contract_events(registry, 0)
        assert (page.start, page.events, page.next_start) == (0, (), 0)
        assert page.batches() == ()
        assert await node.events_current_count(registry) == 0

    async def test_events_follow_the_counter(self, node: NodeClient, devnet: DevnetServer) -> None:
        registry = devnet.node.config.registry_address
        first = await create_market(node, devnet, "Will it rain?")
        second = await create_market(node, devnet, "Will it snow?")
        assert await node.events_current_count(registry) == 2
        page = await node.contract_events(registry, 0)
        assert page.next_start == 2
        batches = page.batches()
        assert [b.counter for b in batches] == [0, 1]
        named = [decode_event(MARKET_REGISTRY, e.event_index, e.fields) for e in page.events]
        assert [n["market"] for n in named] == [first.address, second.address]
        assert named[1]["question"] == b"Will it snow?"
        # Polling from nextStart: nothing new yet.
        tail = await node.contract_events(registry, page.next_start)
        assert (tail.events, tail.next_start) == ((), 2)
        # A page of one batch starting at 1.
        one = await node.contract_events(registry, 1, limit=1)
        assert [b.counter for b in one.batches()] == [1]
        assert one.events[0].tx_id == batches[1].events[0].tx_id

    async def test_one_block_one_batch_of_several_events(
        self, node: NodeClient, devnet: DevnetServer
    ) -> None:
        market = await create_market(node, devnet, "Will it hail?")
        maker, taker = DevnetWallet.generate(), DevnetWallet.generate()
        faucet(devnet, maker.address)
        faucet(devnet, taker.address)
        quantity = 10**18
        await run_call(node, maker, calls.place_order(market, Side.BUY, Outcome.YES, 600, quantity))
        # The crossing buy of NO mints: OrderPlaced then Trade, in one block.
        tx = await run_call(
            node, taker, calls.place_order(market, Side.BUY, Outcome.NO, 400, quantity)
        )
        page = await node.contract_events(market.address, 0)
        batches = page.batches()
        assert [len(b.events) for b in batches] == [1, 2]
        last = batches[-1]
        assert {e.tx_id for e in last.events} == {tx}
        names = [MARKET.event(e.event_index).name for e in last.events]
        assert names == ["OrderPlaced", "Trade"]
        trade = decode_event(MARKET, last.events[1].event_index, last.events[1].fields)
        assert trade["kind"] == 1 and trade["quantity"] == quantity  # mint
        status = await node.tx_status(tx)
        assert status.confirmed and status.block_hash == last.block_hash
        assert await node.is_block_in_main_chain(last.block_hash) is True

        state = await node.contract_state(market.address)
        assert state.address == market.address
        assert len(state.mut_fields) == len(MARKET.mut_fields)
        assert contract_id_from_address(state.address) == market.market_id


class TestTransactions:
    async def test_transfer_build_decode_sign_submit_status(
        self, node: NodeClient, devnet: DevnetServer
    ) -> None:
        sender, receiver = DevnetWallet.generate(), DevnetWallet.generate()
        faucet(devnet, sender.address)
        balance = await node.balance(sender.address)
        assert balance.balance > 0 and balance.utxo_num >= 1
        collateral = bytes(devnet.node.config.collateral_token_id).hex()
        assert balance.token(collateral) > 0
        utxos = await node.utxos(sender.address)
        assert sum(u.amount for u in utxos) == balance.balance

        amount = 10**18
        built = await node.build_transfer(
            from_public_key=sender.public_key,
            destinations=[Destination(address=receiver.address, atto_alph_amount=amount)],
        )
        decoded = await node.decode_unsigned_tx(built.unsigned_tx)
        assert decoded.unsigned_tx.tx_id == built.tx_id
        assert any(
            o.address == receiver.address and o.atto_alph_amount == amount
            for o in decoded.unsigned_tx.fixed_outputs
        )
        assert (await node.tx_status(built.tx_id)).type == "TxNotFound"
        submitted = await node.submit(built.unsigned_tx, sender.sign(bytes.fromhex(built.tx_id)))
        assert submitted.tx_id == built.tx_id
        status = await node.tx_status(built.tx_id, from_group=submitted.from_group)
        assert status.confirmed and status.chain_confirmations and status.chain_confirmations >= 1
        assert (await node.balance(receiver.address)).balance == amount

    async def test_execute_script_reports_its_simulation(
        self, node: NodeClient, devnet: DevnetServer
    ) -> None:
        market = await create_market(node, devnet, "Will it be sunny?")
        wallet = DevnetWallet.generate()
        faucet(devnet, wallet.address)
        call = calls.place_order(market, Side.BUY, Outcome.YES, 250, 10**18)
        built = await node.execute_script(
            from_public_key=wallet.public_key,
            bytecode=encode_script(call.script),
            atto_alph_amount=call.alph,
            tokens=list(call.tokens),
        )
        assert built.gas_amount > 0 and built.gas_price > 0
        assert built.simulation_result is not None
        assert any(i.address == market.address for i in built.simulation_result.contract_inputs)


class TestRejections:
    async def test_400_carries_the_nodes_detail(self, node: NodeClient) -> None:
        with pytest.raises(NodeRejected) as info:
            await node.tx_status("not-a-tx-id")
        assert info.value.status == 400
        assert "txId" in info.value.detail
        assert info.value.detail in str(info.value)

    async def test_a_bad_signature_is_rejected_not_retried(
        self, node: NodeClient, devnet: DevnetServer
    ) -> None:
        sender, other = DevnetWallet.generate(), DevnetWallet.generate()
        faucet(devnet, sender.address)
        built = await node.build_transfer(
            from_public_key=sender.public_key,
            destinations=[Destination(address=other.address, atto_alph_amount=10**18)],
        )
        wrong = other.sign(bytes.fromhex(built.tx_id))
        with pytest.raises(NodeRejected) as info:
            await node.submit(built.unsigned_tx, wrong)
        assert info.value.status == 400 and info.value.detail

    async def test_a_missing_contract_is_a_404_not_an_empty_result(self, node: NodeClient) -> None:
        missing = contract_address(blake2b256(b"no such contract"))
        with pytest.raises(NodeRejected) as info:
            await node.contract_state(missing)
        assert info.value.status == 404 and "not found" in info.value.detail

    async def test_a_wrong_base_url_is_not_read_as_no_events(self, devnet: DevnetServer) -> None:
        registry = devnet.node.config.registry_address
        async with NodeClient(f"{devnet.url}/not-the-node") as wrong:
            with pytest.raises(NodeRejected) as info:
                await wrong.contract_events(registry, 0)
        assert info.value.status == 404 and "events" not in info.value.detail
