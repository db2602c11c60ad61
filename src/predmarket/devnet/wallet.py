"""A key that builds, signs and submits through a :class:`DevnetNode`, like an SDK wallet.

For tests and the service's demo seeding (with the operator key of ``devnet.json``); it goes
through the node's public facade only: build (``/transactions/build`` or ``execute-script``),
sign the txId, submit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from predmarket.alephium.address import KeyType, format_address, lockup_from_public_key
from predmarket.alephium.lockup import LockupScript
from predmarket.alephium.script import TxScript, encode_script
from predmarket.alephium.signing import generate_private_key, public_key_from_private, sign_tx_id
from predmarket.devnet.calls import Call
from predmarket.devnet.node import Destination, DevnetNode


@dataclass(frozen=True, slots=True)
class Sent:
    """A submitted transaction: its id, the build response and the submit response."""

    tx_id: bytes
    build: dict[str, object]
    submit: dict[str, object]


@dataclass(frozen=True)
class DevnetWallet:
    private_key: bytes
    key_type: str = KeyType.DEFAULT
    #: The group of a groupless (``gl-secp256k1``) address; None is the key's default group.
    group: int | None = None

    @classmethod
    def generate(cls, key_type: str = KeyType.DEFAULT, group: int | None = None) -> DevnetWallet:
        return cls(generate_private_key(), key_type, group)

    @cached_property
    def public_key(self) -> bytes:
        return public_key_from_private(self.private_key)

    @cached_property
    def lockup(self) -> LockupScript:
        return lockup_from_public_key(self.public_key, self.key_type, self.group)

    @property
    def address(self) -> str:
        """The address as the node renders it (groupless ones with ``:N``)."""
        return format_address(self.lockup)

    def sign(self, tx_id: bytes) -> str:
        return sign_tx_id(self.private_key, tx_id)

    def _group(self) -> int | None:
        return self.group if self.key_type != KeyType.DEFAULT else None

    def submit_built(self, node: DevnetNode, build: dict[str, object]) -> Sent:
        """Sign a build response's txId and submit its unsigned transaction."""
        tx_id = bytes.fromhex(str(build["txId"]))
        result = node.submit(bytes.fromhex(str(build["unsignedTx"])), self.sign(tx_id))
        return Sent(tx_id, build, result)

    def build_call(
        self,
        node: DevnetNode,
        script: TxScript,
        *,
        alph: int = 0,
        tokens: Sequence[tuple[bytes, int]] = (),
        gas_amount: int | None = None,
    ) -> dict[str, object]:
        return node.build_execute_script(
            from_public_key=self.public_key,
            from_public_key_type=self.key_type,
            bytecode=encode_script(script),
            atto_alph_amount=alph,
            tokens=tokens,
            gas_amount=gas_amount,
            group=self._group(),
        )

    def call(self, node: DevnetNode, call: Call) -> Sent:
        """Build, sign and submit a contract call with the approvals it declares."""
        build = self.build_call(node, call.script, alph=call.alph, tokens=call.tokens)
        return self.submit_built(node, build)

    def transfer(self, node: DevnetNode, destinations: Sequence[Destination]) -> Sent:
        build = node.build_transfer(
            from_public_key=self.public_key,
            from_public_key_type=self.key_type,
            destinations=destinations,
            group=self._group(),
        )
        return self.submit_built(node, build)
