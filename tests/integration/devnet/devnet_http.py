"""Helpers of the devnet HTTP tests: a devnet on a loopback port and clients of it over HTTP.

Transactions are built by the devnet (``/transactions/build``, ``execute-script``), checked and
signed with ``predmarket.alephium`` (the txId is recomputed from the bytes before signing), and
submitted with ``/transactions/submit``: the path a wallet takes. Scripts are built with
``build_contract_call`` from the method indexes the devnet publishes in ``GET /devnet/config``.
Nothing of ours is mocked.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx

from predmarket.alephium.address import KeyType, format_address, lockup_from_public_key
from predmarket.alephium.lockup import LockupScript
from predmarket.alephium.script import (
    Approvals,
    TxScript,
    Val,
    ValByteVec,
    ValU256,
    build_contract_call,
    encode_script,
)
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id
from predmarket.alephium.tx import decode_unsigned_tx, tx_id
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.server import DevnetServer, run_devnet_in_thread

DAY_MS = 86_400_000
#: Share base units in one share (18 decimals); quantities are multiples of 10**7.
SHARE = 10**18


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Sent:
    """A transaction submitted over HTTP: its id, the build and the submit responses."""

    tx_id: str
    build: dict[str, Any]
    submit: dict[str, Any]

    @property
    def fee(self) -> int:
        return int(self.build["gasAmount"]) * int(self.build["gasPrice"])


class Devnet:
    """A running devnet and an HTTP client of it."""

    def __init__(self, server: DevnetServer, data_dir: Path) -> None:
        self.server = server
        self.data_dir = data_dir
        self.http = httpx.Client(base_url=server.url, timeout=30)

    @property
    def url(self) -> str:
        return self.server.url

    def close(self) -> None:
        self.http.close()

    # -- raw calls ------------------------------------------------------------------------------

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params=params)

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.http.post(path, json=body)

    def ok(self, response: httpx.Response) -> Any:
        assert response.status_code == 200, (response.request.url, response.text)
        return response.json()

    def get_ok(self, path: str, **params: Any) -> Any:
        return self.ok(self.get(path, **params))

    def post_ok(self, path: str, body: Any) -> Any:
        return self.ok(self.post(path, body))

    # -- devnet facts ---------------------------------------------------------------------------

    @cached_property
    def config(self) -> dict[str, Any]:
        doc: dict[str, Any] = self.get_ok("/devnet/config")
        return doc

    def method_index(self, contract: str, method: str) -> int:
        for c in self.config["abi"]["contracts"]:
            if c["name"] == contract:
                for m in c["methods"]:
                    if m["name"] == method:
                        return int(m["index"])
        raise KeyError(f"{contract}.{method}")

    def error_code(self, name: str) -> int:
        for e in self.config["abi"]["errorCodes"]:
            if e["name"] == name:
                return int(e["code"])
        raise KeyError(name)

    def amount(self, name: str) -> int:
        return int(self.config["abi"]["amounts"][name])

    @property
    def collateral_id(self) -> bytes:
        return bytes.fromhex(self.config["collateralToken"]["tokenId"])

    @property
    def registry_id(self) -> bytes:
        return bytes.fromhex(self.config["marketRegistry"]["contractId"])

    @property
    def operator(self) -> Wallet:
        """The operator's devnet test key, read from the data dir's ``devnet.json``."""
        return Wallet(self.server.node.config.operator_private_key)

    # -- reads ----------------------------------------------------------------------------------

    def faucet(self, address: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.post_ok("/devnet/faucet", {"address": address})
        return doc

    def balance(self, address: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.get_ok(f"/addresses/{address}/balance")
        return doc

    def alph(self, address: str) -> int:
        return int(self.balance(address)["balance"])

    def token(self, address: str, token_id: bytes) -> int:
        tokens = self.balance(address).get("tokenBalances", [])
        return sum(int(t["amount"]) for t in tokens if t["id"] == token_id.hex())

    def events(self, address: str) -> list[dict[str, Any]]:
        """Every event of a contract, paging with ``nextStart``; [] before the first one."""
        first = self.get(f"/events/contract/{address}", start=0)
        if first.status_code == 404:
            return []
        page = self.ok(first)
        out: list[dict[str, Any]] = list(page["events"])
        start = 0
        while page["nextStart"] != start:
            start = page["nextStart"]
            page = self.get_ok(f"/events/contract/{address}", start=start)
            out += page["events"]
        return out

    def status(self, tx: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.get_ok("/transactions/status", txId=tx)
        return doc

    def tip(self) -> dict[str, Any]:
        doc: dict[str, Any] = self.get_ok("/devnet/tip")
        return doc

    def snapshot(self, addresses: Sequence[str], contracts: Sequence[str] = ()) -> dict[str, Any]:
        """Everything a rejected transaction must leave as it was, read over HTTP."""
        doc: dict[str, Any] = {"tip": self.tip()}
        for address in addresses:
            doc[address] = (
                self.get_ok(f"/addresses/{address}/balance", mempool="true"),
                self.get_ok(f"/addresses/{address}/utxos"),
            )
        for address in contracts:
            doc[address] = (
                self.get_ok(f"/contracts/{address}/state"),
                self.events(address),
            )
        return doc

    # -- markets --------------------------------------------------------------------------------

    def create_market(self, question: str = "Will it rain tomorrow?") -> Market:
        script = build_contract_call(
            self.registry_id,
            self.method_index("MarketRegistry", "createMarket"),
            [
                ValByteVec(question.encode()),
                ValByteVec(b"weather"),
                ValU256(now_ms() + DAY_MS),
                ValByteVec(b"{}"),
            ],
            caller_approvals=Approvals(self.amount("marketCreationDeposit")),
        )
        sent = self.operator.call(self, script, alph=self.amount("marketCreationDeposit"))
        registry = self.config["marketRegistry"]["address"]
        created = [e for e in self.events(registry) if e["txId"] == sent.tx_id]
        assert len(created) == 1, created
        fields = created[0]["fields"]
        return Market(
            address=fields[1]["value"],
            market_id=_contract_id(fields[1]["value"]),
            yes_id=bytes.fromhex(fields[2]["value"]),
            no_id=bytes.fromhex(fields[3]["value"]),
        )

    def place_order_call(
        self,
        market: Market,
        *,
        side: int,
        outcome: int,
        price: int,
        quantity: int,
        lock: int | None = None,
    ) -> tuple[TxScript, int, tuple[tuple[bytes, int], ...]]:
        """A ``placeOrder`` script and its approvals: the order deposit, and the buy's collateral
        lock (``price * quantity / 1000 * 1.025``) or the sell's shares."""
        if lock is None:
            lock = buy_lock(price, quantity) if side == 0 else quantity
        token = self.collateral_id if side == 0 else (market.yes_id, market.no_id)[outcome]
        deposit = self.amount("orderDeposit")
        tokens = ((token, lock),) if lock else ()
        args: list[Val] = [ValU256(side), ValU256(outcome), ValU256(price), ValU256(quantity)]
        script = build_contract_call(
            market.market_id,
            self.method_index("Market", "placeOrder"),
            args,
            caller_approvals=Approvals(deposit, tokens),
        )
        return script, deposit, tokens

    def cancel_order_call(self, market: Market, order_id: int) -> TxScript:
        return build_contract_call(
            market.market_id, self.method_index("Market", "cancelOrder"), [ValU256(order_id)]
        )


def buy_lock(price: int, quantity: int) -> int:
    """Collateral a buy locks, computed independently of the exchange package (spec 2.4)."""
    return -(-price * quantity * 1025 // 1_000_000)


def _contract_id(address: str) -> bytes:
    from predmarket.alephium.address import contract_id_from_address

    return contract_id_from_address(address)


@dataclass(frozen=True)
class Market:
    address: str
    market_id: bytes
    yes_id: bytes
    no_id: bytes


@dataclass(frozen=True)
class Wallet:
    """A key that builds through the devnet's HTTP API, checks, signs and submits."""

    private_key: bytes
    key_type: str = KeyType.DEFAULT

    @classmethod
    def generate(cls, key_type: str = KeyType.DEFAULT) -> Wallet:
        return cls(generate_private_key(), key_type)

    @cached_property
    def public_key(self) -> bytes:
        return public_key_from_private(self.private_key)

    @cached_property
    def lockup(self) -> LockupScript:
        return lockup_from_public_key(self.public_key, self.key_type)

    @property
    def address(self) -> str:
        """As the node renders it: groupless addresses carry ``:N``."""
        return format_address(self.lockup)

    def sign(self, build: dict[str, Any]) -> str:
        """Sign a build response after checking its txId against the bytes."""
        unsigned = decode_unsigned_tx(bytes.fromhex(build["unsignedTx"]))
        assert tx_id(unsigned).hex() == build["txId"]
        return sign_tx_id(self.private_key, bytes.fromhex(build["txId"]))

    def request_call(
        self,
        dn: Devnet,
        script: TxScript,
        *,
        alph: int = 0,
        tokens: Sequence[tuple[bytes, int]] = (),
    ) -> httpx.Response:
        body: dict[str, Any] = {
            "fromPublicKey": self.public_key.hex(),
            "fromPublicKeyType": str(self.key_type),
            "bytecode": encode_script(script).hex(),
            "attoAlphAmount": str(alph),
        }
        if tokens:
            body["tokens"] = [{"id": t.hex(), "amount": str(a)} for t, a in tokens]
        return dn.post("/contracts/unsigned-tx/execute-script", body)

    def build_call(
        self,
        dn: Devnet,
        script: TxScript,
        *,
        alph: int = 0,
        tokens: Sequence[tuple[bytes, int]] = (),
    ) -> dict[str, Any]:
        build: dict[str, Any] = dn.ok(self.request_call(dn, script, alph=alph, tokens=tokens))
        return build

    def build_transfer(
        self, dn: Devnet, to: str, amount: int, tokens: Sequence[tuple[bytes, int]] = ()
    ) -> dict[str, Any]:
        destination: dict[str, Any] = {"address": to, "attoAlphAmount": str(amount)}
        if tokens:
            destination["tokens"] = [{"id": t.hex(), "amount": str(a)} for t, a in tokens]
        build: dict[str, Any] = dn.post_ok(
            "/transactions/build",
            {
                "fromPublicKey": self.public_key.hex(),
                "fromPublicKeyType": str(self.key_type),
                "destinations": [destination],
            },
        )
        return build

    def submit(self, dn: Devnet, build: dict[str, Any]) -> Sent:
        result = dn.post_ok(
            "/transactions/submit",
            {"unsignedTx": build["unsignedTx"], "signature": self.sign(build)},
        )
        assert result["txId"] == build["txId"]
        return Sent(build["txId"], build, result)

    def call(
        self,
        dn: Devnet,
        script: TxScript,
        *,
        alph: int = 0,
        tokens: Sequence[tuple[bytes, int]] = (),
    ) -> Sent:
        return self.submit(dn, self.build_call(dn, script, alph=alph, tokens=tokens))

    def transfer(self, dn: Devnet, to: str, amount: int) -> Sent:
        return self.submit(dn, self.build_transfer(dn, to, amount))

    def place(
        self, dn: Devnet, market: Market, *, side: int, outcome: int, price: int, quantity: int
    ) -> Sent:
        script, alph, tokens = dn.place_order_call(
            market, side=side, outcome=outcome, price=price, quantity=quantity
        )
        return self.call(dn, script, alph=alph, tokens=tokens)


def open_devnet(data_dir: Path, **options: Any) -> Devnet:
    """Open the node in ``data_dir`` (faucet cooldown off unless given) and serve it."""
    options.setdefault("faucet_cooldown_ms", 0)
    node = DevnetNode.open(data_dir, **options)
    try:
        server = run_devnet_in_thread(node)
    except BaseException:
        node.close()
        raise
    return Devnet(server, data_dir)


def close_devnet(dn: Devnet) -> None:
    dn.close()
    dn.server.stop()
    dn.server.node.close()
