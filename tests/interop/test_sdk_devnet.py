"""The official SDK against a running devnet: it must not tell the devnet from a full node.

``js/devnet_client.js`` drives ``@alephium/web3`` 3.0.5 (``NodeProvider`` set with
``web3.setCurrentNodeProvider(url)``) and ``@alephium/web3-wallet`` 3.0.4 (``PrivateKeyWallet``)
against a devnet served on a loopback port, for both key types:

- ``signAndSubmitTransferTx`` of a transfer;
- a ``placeOrder`` script (bytecode from our ``build_contract_call`` with the method index the
  devnet publishes) through ``signAndSubmitExecuteScriptTx`` -- the SDK calls execute-script,
  signs and submits -- and through ``signAndSubmitUnsignedTx`` of a transaction our side built
  with execute-script, the way the service hands one to a wallet;
- then balances (the SDK's ``getBalance`` and our HTTP agree) and contract events read as expected.

Every HTTP call the SDK makes is recorded; each must have succeeded. Node availability and the
SDK install are checked by the ``oracle`` fixture of conftest.py, which this module depends on.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from devnet_sdk import DevnetClient

from predmarket.alephium.address import (
    KeyType,
    address_from_public_key,
    contract_id_from_address,
    format_address,
    lockup_from_public_key,
)
from predmarket.alephium.script import (
    Approvals,
    TxScript,
    ValByteVec,
    ValU256,
    build_contract_call,
    encode_script,
)
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id
from predmarket.devnet.server import DevnetOptions, DevnetServer, run_devnet_in_thread

pytestmark = pytest.mark.interop

#: Seconds to wait for one answer; an SDK round trip with a few HTTP calls takes milliseconds.
KEY_TYPES = ["default", "gl-secp256k1"]
SHARE = 10**18
#: The endpoints the SDK may call for these flows (seen in the recorded requests).
NODE_PATHS = (
    "/infos/",
    "/addresses/",
    "/transactions/build",
    "/transactions/submit",
    "/transactions/status",
    "/contracts/unsigned-tx/execute-script",
    "/contracts/",
    "/events/contract/",
)


@pytest.fixture(scope="module")
def sdk(oracle: object) -> Iterator[DevnetClient]:
    # ``oracle`` has found node, installed the pinned SDK and checked both work (or skipped).
    del oracle
    node = shutil.which("node")
    assert node is not None
    client = DevnetClient(node)
    try:
        yield client
    finally:
        client.close()
    failed = [r for r in client.requests if not r.endswith(("-> 200", "-> 404"))]
    assert not failed, f"SDK requests that failed: {failed}"


@pytest.fixture(scope="module")
def devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevnetServer]:
    options = DevnetOptions(tmp_path_factory.mktemp("sdk") / "devnet", faucet_cooldown_ms=0)
    with run_devnet_in_thread(options) as server:
        yield server


class Http:
    """Our side of the test: plain HTTP to the devnet."""

    def __init__(self, server: DevnetServer) -> None:
        self.server = server
        self.client = httpx.Client(base_url=server.url, timeout=30)
        self.config: dict[str, Any] = self.ok(self.client.get("/devnet/config"))

    def ok(self, response: httpx.Response) -> Any:
        assert response.status_code == 200, response.text
        return response.json()

    def get(self, path: str, **params: Any) -> Any:
        return self.ok(self.client.get(path, params=params))

    def post(self, path: str, body: Any) -> Any:
        return self.ok(self.client.post(path, json=body))

    def method_index(self, contract: str, method: str) -> int:
        (c,) = [c for c in self.config["abi"]["contracts"] if c["name"] == contract]
        (m,) = [m for m in c["methods"] if m["name"] == method]
        return int(m["index"])

    def amount(self, name: str) -> int:
        return int(self.config["abi"]["amounts"][name])

    @property
    def collateral_id(self) -> bytes:
        return bytes.fromhex(self.config["collateralToken"]["tokenId"])

    def balance(self, address: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.get(f"/addresses/{address}/balance")
        return doc

    def token(self, address: str, token_id: bytes) -> int:
        tokens = self.balance(address).get("tokenBalances", [])
        return sum(int(t["amount"]) for t in tokens if t["id"] == token_id.hex())

    def execute(self, private_key: bytes, script: TxScript, alph: int) -> str:
        """Build with execute-script, sign with our code, submit; returns the txId."""
        build = self.post(
            "/contracts/unsigned-tx/execute-script",
            {
                "fromPublicKey": public_key_from_private(private_key).hex(),
                "bytecode": encode_script(script).hex(),
                "attoAlphAmount": str(alph),
            },
        )
        signature = sign_tx_id(private_key, bytes.fromhex(build["txId"]))
        self.post(
            "/transactions/submit", {"unsignedTx": build["unsignedTx"], "signature": signature}
        )
        tx_id: str = build["txId"]
        return tx_id

    def create_market(self) -> tuple[str, bytes]:
        """As the operator (its devnet test key); returns the market address and id."""
        deposit = self.amount("marketCreationDeposit")
        registry = self.config["marketRegistry"]
        script = build_contract_call(
            bytes.fromhex(registry["contractId"]),
            self.method_index("MarketRegistry", "createMarket"),
            [
                ValByteVec(b"Will the SDK accept the devnet?"),
                ValByteVec(b"interop"),
                ValU256(self.config["genesisTimestamp"] + 10 * 365 * 86_400_000),
                ValByteVec(b"{}"),
            ],
            caller_approvals=Approvals(deposit),
        )
        tx = self.execute(self.server.node.config.operator_private_key, script, deposit)
        events = self.get(f"/events/contract/{registry['address']}", start=0)["events"]
        (created,) = [e for e in events if e["txId"] == tx]
        address: str = created["fields"][1]["value"]
        return address, contract_id_from_address(address)

    def place_order_script(self, market_id: bytes, price: int, quantity: int) -> TxScript:
        lock = -(-price * quantity * 1025 // 1_000_000)  # buy: price * quantity / 1000 * 1.025
        return build_contract_call(
            market_id,
            self.method_index("Market", "placeOrder"),
            [ValU256(0), ValU256(0), ValU256(price), ValU256(quantity)],  # buy YES
            caller_approvals=Approvals(self.amount("orderDeposit"), ((self.collateral_id, lock),)),
        )


@pytest.fixture(scope="module")
def http(devnet: DevnetServer) -> Iterator[Http]:
    client = Http(devnet)
    try:
        yield client
    finally:
        client.client.close()


@pytest.fixture(scope="module")
def market(http: Http) -> tuple[str, bytes]:
    return http.create_market()


def _wallet(sdk: DevnetClient, http: Http, key_type: str) -> dict[str, Any]:
    """A fresh SDK wallet, funded by the faucet in its default group and in the contracts'
    group 0: the SDK builds a groupless call in the called contract's group, so a groupless
    key whose default group is not 0 is picked to exercise that path every time."""
    private_key = generate_private_key()
    while key_type != "default" and public_key_from_private(private_key)[-1] % 4 == 0:
        private_key = generate_private_key()
    account = sdk.ok("account", privateKey=private_key.hex(), keyType=key_type)
    public_key = public_key_from_private(private_key)
    assert account["publicKey"] == public_key.hex()
    assert account["address"] == address_from_public_key(public_key, key_type)
    node_address = format_address(lockup_from_public_key(public_key, key_type))
    http.post("/devnet/faucet", {"address": account["address"]})
    if key_type == KeyType.GL_SECP256K1 and account["group"] != 0:
        http.post("/devnet/faucet", {"address": f"{account['address']}:0"})
    return {**account, "privateKey": private_key.hex(), "nodeAddress": node_address}


def test_sdk_reads_the_node_infos(sdk: DevnetClient, devnet: DevnetServer) -> None:
    infos = sdk.ok("infos", url=devnet.url)
    assert infos["chainParams"]["networkId"] == 4 and infos["chainParams"]["groups"] == 4
    assert infos["selfClique"]["synced"] is True
    assert infos["node"]["buildInfo"]["releaseVersion"] == infos["version"]["version"]


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_transfer(sdk: DevnetClient, devnet: DevnetServer, http: Http, key_type: str) -> None:
    wallet = _wallet(sdk, http, key_type)
    recipient = address_from_public_key(public_key_from_private(generate_private_key()))
    before = int(http.balance(wallet["address"])["balance"])
    sent = sdk.ok(
        "transfer",
        url=devnet.url,
        privateKey=wallet["privateKey"],
        keyType=key_type,
        to=recipient,
        attoAlphAmount=str(3 * 10**18),
    )
    status = sdk.ok("waitConfirmed", url=devnet.url, txId=sent["txId"])
    assert status["type"] == "Confirmed"
    fee = int(sent["gasAmount"]) * int(sent["gasPrice"])
    assert http.balance(recipient)["balance"] == str(3 * 10**18)
    assert int(http.balance(wallet["address"])["balance"]) == before - 3 * 10**18 - fee
    for address in (recipient, wallet["address"]):
        assert sdk.ok("balance", url=devnet.url, address=address) == http.balance(address)
    assert "POST /transactions/build -> 200" in sdk.requests
    assert "POST /transactions/submit -> 200" in sdk.requests


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_place_order_with_execute_script(
    sdk: DevnetClient,
    devnet: DevnetServer,
    http: Http,
    market: tuple[str, bytes],
    key_type: str,
) -> None:
    market_address, market_id = market
    wallet = _wallet(sdk, http, key_type)
    price, quantity = 420, 2 * SHARE
    lock = -(-price * quantity * 1025 // 1_000_000)
    deposit = http.amount("orderDeposit")
    script = http.place_order_script(market_id, price, quantity)
    payer = wallet["nodeAddress"] if key_type == "default" else f"{wallet['address']}:0"
    alph_before = int(http.balance(payer)["balance"])
    collateral_before = http.token(payer, http.collateral_id)

    sent = sdk.ok(
        "executeScript",
        url=devnet.url,
        privateKey=wallet["privateKey"],
        keyType=key_type,
        bytecode=encode_script(script).hex(),
        attoAlphAmount=str(deposit),
        tokens=[{"id": http.collateral_id.hex(), "amount": str(lock)}],
    )
    assert "POST /contracts/unsigned-tx/execute-script -> 200" in sdk.requests
    assert sdk.ok("waitConfirmed", url=devnet.url, txId=sent["txId"])["type"] == "Confirmed"
    fee = int(sent["gasAmount"]) * int(sent["gasPrice"])
    assert int(http.balance(payer)["balance"]) == alph_before - deposit - fee
    assert http.token(payer, http.collateral_id) == collateral_before - lock
    assert deposit + fee <= 220 * 10**15  # "about 0.21 ALPH" per order

    # The SDK reads the event: OrderPlaced(orderId, owner, side, outcome, price, quantity, ...).
    count = sdk.ok("eventCount", url=devnet.url, contractAddress=market_address)["count"]
    page = sdk.ok("events", url=devnet.url, contractAddress=market_address, start=count - 1)
    assert page["nextStart"] == count
    (placed,) = [e for e in page["events"] if e["txId"] == sent["txId"]]
    assert placed["eventIndex"] == 0
    fields = placed["fields"]
    assert fields[1] == {"type": "Address", "value": payer}
    assert [f["value"] for f in fields[2:6]] == ["0", "0", str(price), str(quantity)]
    orders = http.get(f"/devnet/markets/{market_address}/orders")["orders"]
    assert any(o["owner"] == payer and o["price"] == price for o in orders)


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_sign_and_submit_unsigned_tx_built_by_our_side(
    sdk: DevnetClient,
    devnet: DevnetServer,
    http: Http,
    market: tuple[str, bytes],
    key_type: str,
) -> None:
    market_address, market_id = market
    wallet = _wallet(sdk, http, key_type)
    price, quantity = 150, SHARE
    lock = -(-price * quantity * 1025 // 1_000_000)
    script = http.place_order_script(market_id, price, quantity)
    body: dict[str, Any] = {
        "fromPublicKey": wallet["publicKey"],
        "fromPublicKeyType": key_type,
        "bytecode": encode_script(script).hex(),
        "attoAlphAmount": str(http.amount("orderDeposit")),
        "tokens": [{"id": http.collateral_id.hex(), "amount": str(lock)}],
    }
    if key_type != "default":
        body["group"] = 0
    build = http.post("/contracts/unsigned-tx/execute-script", body)
    sent = sdk.ok(
        "signAndSubmitUnsigned",
        url=devnet.url,
        privateKey=wallet["privateKey"],
        keyType=key_type,
        unsignedTx=build["unsignedTx"],
    )
    assert sent["txId"] == build["txId"]
    status = http.get("/transactions/status", txId=build["txId"])
    assert status["type"] == "Confirmed"
    events = http.get(f"/events/contract/{market_address}", start=0)["events"]
    assert any(e["txId"] == build["txId"] and e["eventIndex"] == 0 for e in events)


def test_the_sdk_used_only_node_endpoints(sdk: DevnetClient) -> None:
    paths = {r.split()[1] for r in sdk.requests}
    assert paths, "no SDK request was recorded"
    assert all(p.startswith(NODE_PATHS) for p in paths), sorted(paths)
