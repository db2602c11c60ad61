"""Helpers of the transaction-builder tests: a devnet on a loopback port, markets created with
its operator key, wallets funded by its faucet, and read-model rows written the way the indexer
writes them (from the contract's own events).

The service under test reaches the devnet only over HTTP (its ``node_url``). Test set-up (the
operator's market creation, the faucet, resolving) goes through the devnet's facade in-process;
what a wallet does with a build — sign it with ``predmarket.alephium.signing`` and submit it —
goes over HTTP like any wallet's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.auth import KeyType as KeyTypeName
from helpers.auth import SignerKey
from predmarket.alephium.address import KeyType, format_address, lockup_from_public_key
from predmarket.alephium.lockup import LockupScript
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id
from predmarket.alephium.tx import decode_unsigned_tx, tx_id
from predmarket.devnet import calls
from predmarket.devnet.abi import MARKET, MARKET_REGISTRY, decode_event
from predmarket.devnet.node import DevnetNode
from predmarket.devnet.server import DevnetServer, run_devnet_in_thread
from predmarket.devnet.wallet import DevnetWallet
from predmarket.exchange import Resolution
from predmarket.store.tables.market import market as market_table
from predmarket.store.tables.order import order as order_table

#: ``async with service(node_url, sign_in=...) as client`` (the ``service`` fixture).
ClientFactory = Callable[..., AbstractAsyncContextManager[httpx.AsyncClient]]

DAY_MS = 86_400_000
SHARE = 10**18
SIDES = ("buy", "sell")
OUTCOMES = ("yes", "no")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@dataclass(frozen=True)
class CreatedMarket:
    """A market contract on the devnet, as its MarketCreated event tells."""

    ref: calls.MarketRef
    registry_address: str
    index: int
    question: str
    category: str
    close_time_ms: int
    creator: str
    tx_id: str
    block_hash: str
    timestamp_ms: int

    @property
    def address(self) -> str:
        return self.ref.address


class Chain:
    """A running devnet: the facade for set-up, the URL for everything under test."""

    def __init__(self, data_dir: Path) -> None:
        self.node = DevnetNode.open(data_dir, faucet_cooldown_ms=0)
        try:
            self.server: DevnetServer = run_devnet_in_thread(self.node)
        except BaseException:
            self.node.close()
            raise
        self.operator = DevnetWallet(self.node.config.operator_private_key)

    @property
    def url(self) -> str:
        return self.server.url

    def close(self) -> None:
        self.server.stop()
        self.node.close()

    @property
    def collateral_id(self) -> bytes:
        return self.node.config.collateral_token_id

    @property
    def registry_address(self) -> str:
        return self.node.config.registry_address

    def create_market(
        self, question: str = "Will it rain tomorrow?", *, close_in_ms: int = DAY_MS
    ) -> CreatedMarket:
        call = calls.create_market(
            self.node.config.registry_id, question, "weather", now_ms() + close_in_ms, b"{}"
        )
        sent = self.operator.call(self.node, call)
        details = self.node.tx_details(sent.tx_id)
        (event,) = [
            e
            for e in details["events"]  # type: ignore[union-attr]
            if e["contractAddress"] == self.registry_address
        ]
        named = decode_event(MARKET_REGISTRY, 0, event["fields"])
        ref = calls.MarketRef.from_event(event["fields"], self.collateral_id)
        return CreatedMarket(
            ref=ref,
            registry_address=self.registry_address,
            index=int(named["index"]),
            question=question,
            category="weather",
            close_time_ms=int(named["closeTimeMs"]),
            creator=str(named["creator"]),
            tx_id=sent.tx_id.hex(),
            block_hash=str(details["blockHash"]),
            timestamp_ms=int(details["timestamp"]),  # type: ignore[arg-type]
        )

    def resolve(self, created: CreatedMarket, resolution: Resolution = Resolution.YES) -> None:
        self.operator.call(self.node, calls.resolve(created.ref, resolution))

    def fund(self, wallet: Wallet) -> None:
        self.node.faucet(wallet.address)

    def resting_orders(self, created: CreatedMarket) -> list[dict[str, object]]:
        return self.node.market_orders(created.address)

    def order_placed(self, sent_tx_id: str, created: CreatedMarket) -> dict[str, Any]:
        """The OrderPlaced event a mined transaction logged on ``created``."""
        details = self.node.tx_details(bytes.fromhex(sent_tx_id))
        (event,) = [
            e
            for e in details["events"]  # type: ignore[union-attr]
            if e["contractAddress"] == created.address and e["eventIndex"] == 0
        ]
        named = decode_event(MARKET, 0, event["fields"])
        named["blockHash"] = details["blockHash"]
        named["timestamp"] = details["timestamp"]
        return named


#: Every wallet made by the tests, by the address it signs builds as.
KNOWN_WALLETS: dict[str, Wallet] = {}


def signer_key(address: str) -> SignerKey | None:
    """The key to sign in with for a build naming ``address`` (``helpers.auth.auto_sign_in``)."""
    wallet = KNOWN_WALLETS.get(address)
    if wallet is None:
        return None
    key_type: KeyTypeName = "gl-secp256k1" if wallet.key_type == KeyType.GL_SECP256K1 else "default"
    return wallet.private_key, key_type, wallet.signer_address


@dataclass(frozen=True)
class Wallet:
    """A key and the address a client would send as ``signerAddress``."""

    private_key: bytes
    key_type: str = KeyType.DEFAULT
    #: Group of a groupless wallet's lockup (the group it is funded and trades in).
    group: int = 0
    #: For groupless wallets: send the address with its ``:N`` suffix (else bare).
    explicit_group: bool = True

    def __post_init__(self) -> None:
        # Known to the test clients, which sign in as the wallet a build names (helpers.auth).
        KNOWN_WALLETS[self.signer_address] = self

    @classmethod
    def generate(cls, key_type: str = KeyType.DEFAULT, *, explicit_group: bool = True) -> Wallet:
        return cls(generate_private_key(), key_type, 0, explicit_group)

    @cached_property
    def public_key(self) -> bytes:
        return public_key_from_private(self.private_key)

    @cached_property
    def lockup(self) -> LockupScript:
        group = None if self.key_type == KeyType.DEFAULT else self.group
        return lockup_from_public_key(self.public_key, self.key_type, group)

    @property
    def address(self) -> str:
        """The lockup's address as the node writes it (groupless: ``…:N``)."""
        return format_address(self.lockup)

    @property
    def signer_address(self) -> str:
        return format_address(self.lockup, explicit_group=self.explicit_group)

    def signer(self, *, with_key_type: bool = True) -> dict[str, str]:
        body = {"signerAddress": self.signer_address, "signerPublicKey": self.public_key.hex()}
        if with_key_type:
            body["signerKeyType"] = str(self.key_type)
        return body

    def order(self, side: str, outcome: str, price: int, quantity: int) -> dict[str, Any]:
        return {
            **self.signer(),
            "side": side,
            "outcome": outcome,
            "price": price,
            "quantity": str(quantity),
        }

    def sign(self, build: dict[str, Any]) -> str:
        """Sign a build after recomputing its txId from the bytes (what a careful wallet does)."""
        unsigned = decode_unsigned_tx(build["unsignedTx"])
        assert tx_id(unsigned).hex() == build["txId"]
        return sign_tx_id(self.private_key, bytes.fromhex(build["txId"]))

    def submit(self, chain: Chain, build: dict[str, Any]) -> str:
        """Sign and submit over the node's HTTP API; the node's txId must be the built one."""
        signature = self.sign(build)
        with httpx.Client(base_url=chain.url, timeout=30) as http:
            r = http.post(
                "/transactions/submit",
                json={"unsignedTx": build["unsignedTx"], "signature": signature},
            )
            assert r.status_code == 200, r.text
            assert r.json()["txId"] == build["txId"]
            status = http.get("/transactions/status", params={"txId": build["txId"]}).json()
            assert status["type"] == "Confirmed", status
        return str(build["txId"])


# -- the read model, as the indexer writes it ---------------------------------------------------


async def insert_market(
    engine: AsyncEngine,
    created: CreatedMarket,
    *,
    status: str = "open",
    close_at: datetime | None = None,
) -> int:
    now = datetime.now(UTC)
    async with engine.begin() as conn:
        result = await conn.execute(
            insert(market_table)
            .values(
                market_address=created.address,
                contract_id=created.ref.market_id.hex(),
                registry_address=created.registry_address,
                registry_index=created.index,
                yes_token_id=created.ref.yes_id.hex(),
                no_token_id=created.ref.no_id.hex(),
                question=created.question,
                category=created.category,
                creator=created.creator,
                close_at=close_at or utc(created.close_time_ms),
                created_at=utc(created.timestamp_ms),
                created_block_hash=created.block_hash,
                created_tx_id=created.tx_id,
                status=status,
                resolution="yes" if status == "resolved" else None,
                updated_at=now,
            )
            .returning(market_table.c.id)
        )
        return int(result.scalar_one())


async def insert_order(
    engine: AsyncEngine,
    market_id: int,
    placed: dict[str, Any],
    *,
    tx: str,
    owner: str | None = None,
    status: str = "open",
) -> None:
    """An order row from its OrderPlaced event (``owner`` overrides it: a wrong read model)."""
    at = utc(int(placed["timestamp"]))
    async with engine.begin() as conn:
        await conn.execute(
            insert(order_table).values(
                market_id=market_id,
                chain_order_id=int(placed["orderId"]),
                owner=owner or str(placed["owner"]),
                side=SIDES[int(placed["side"])],
                outcome=OUTCOMES[int(placed["outcome"])],
                price=int(placed["price"]),
                quantity=int(placed["quantity"]),
                remaining=int(placed["remaining"]),
                deposit=int(placed["deposit"]),
                status=status,
                placed_tx_id=tx,
                placed_block_hash=str(placed["blockHash"]),
                created_at=at,
                updated_at=at,
            )
        )


async def set_market(engine: AsyncEngine, market_id: int, **values: Any) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            update(market_table).where(market_table.c.id == market_id).values(**values)
        )


def far_past() -> datetime:
    return datetime.now(UTC) - timedelta(minutes=1)
