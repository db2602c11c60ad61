"""The world state: unspent asset outputs and contracts, in layers that commit or vanish.

The base :class:`Ledger` holds the chain's state. :meth:`Ledger.fork` opens a layer on top of it:
reads fall through to the parent, writes stay in the layer until :meth:`Ledger.commit` pushes them
down, and a layer that is dropped leaves the parent untouched. Transactions are applied in such a
layer, so nothing partial ever reaches the chain.

Contracts keep their Python state in a *native* object. A layer that ``clone_natives`` (the
mempool's pending view, a build's simulation) works on private clones of the natives it touches.
A plain layer (a transaction being applied to the chain) copies only a contract's asset balances
and shares its native: cloning an order book per transaction would cost O(book). The contracts
keep that safe by checking everything before they change their native, and changing it last.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, Self

from predmarket.alephium.lockup import encode_lockup
from predmarket.alephium.tx import AssetOutput


class Native(Protocol):
    """What the ledger needs of a contract's Python state."""

    def clone(self) -> Self: ...


@dataclass(frozen=True, slots=True)
class Utxo:
    """An unspent asset output: its reference (``hint``, ``key``) and the output itself."""

    key: bytes
    hint: int
    output: AssetOutput
    #: The binary lockup script: the index key of the owner's outputs.
    lockup_key: bytes

    @classmethod
    def of(cls, key: bytes, hint: int, output: AssetOutput) -> Utxo:
        return cls(key, hint, output, encode_lockup(output.lockup))


@dataclass(slots=True)
class ContractRecord:
    """A contract: its id, native state and asset balance (ALPH and tokens)."""

    id: bytes
    native: Native
    alph: int
    tokens: dict[bytes, int] = field(default_factory=dict)

    def copy(self, *, clone_native: bool) -> ContractRecord:
        native = self.native.clone() if clone_native else self.native
        return ContractRecord(self.id, native, self.alph, dict(self.tokens))

    def add_token(self, token_id: bytes, amount: int) -> None:
        if amount:
            self.tokens[token_id] = self.tokens.get(token_id, 0) + amount

    def take_token(self, token_id: bytes, amount: int) -> None:
        """Remove ``amount`` of a token; the caller has checked the balance."""
        left = self.tokens.get(token_id, 0) - amount
        if left < 0:
            raise AssertionError(f"contract token balance would go negative ({left})")
        if left:
            self.tokens[token_id] = left
        else:
            self.tokens.pop(token_id, None)


class Ledger:
    """One layer of world state (the base when ``parent`` is None)."""

    __slots__ = ("_by_lockup", "_contracts", "_spent", "_utxos", "clone_natives", "parent")

    def __init__(self, parent: Ledger | None = None, *, clone_natives: bool = False) -> None:
        self.parent = parent
        self.clone_natives = clone_natives
        self._utxos: dict[bytes, Utxo] = {}
        #: Keys of the parent's outputs this layer spends (always empty in the base).
        self._spent: set[bytes] = set()
        self._by_lockup: dict[bytes, dict[bytes, None]] = {}
        self._contracts: dict[bytes, ContractRecord] = {}

    def fork(self, *, clone_natives: bool = False) -> Ledger:
        return Ledger(self, clone_natives=clone_natives)

    # -- outputs -------------------------------------------------------------------------------

    def utxo(self, key: bytes) -> Utxo | None:
        layer: Ledger | None = self
        while layer is not None:
            found = layer._utxos.get(key)
            if found is not None:
                return found
            if key in layer._spent:
                return None
            layer = layer.parent
        return None

    def spend(self, key: bytes) -> None:
        """Spend an existing unspent output (the caller has looked it up)."""
        own = self._utxos.pop(key, None)
        if own is not None:
            keys = self._by_lockup[own.lockup_key]
            del keys[key]
            if not keys:
                del self._by_lockup[own.lockup_key]
        elif self.parent is None:
            raise KeyError(key.hex())
        else:
            self._spent.add(key)

    def add_utxo(self, utxo: Utxo) -> None:
        self._utxos[utxo.key] = utxo
        self._by_lockup.setdefault(utxo.lockup_key, {})[utxo.key] = None

    def utxos_of(self, lockup_key: bytes) -> list[Utxo]:
        """Every unspent output locked by ``lockup_key``, oldest layer first."""
        inherited = [] if self.parent is None else self.parent.utxos_of(lockup_key)
        if self._spent:
            inherited = [u for u in inherited if u.key not in self._spent]
        own = self._by_lockup.get(lockup_key)
        if own:
            inherited.extend(self._utxos[k] for k in own)
        return inherited

    def own_utxos(self) -> Iterator[Utxo]:
        """The outputs this layer added (all outputs, in the base)."""
        return iter(self._utxos.values())

    # -- contracts -----------------------------------------------------------------------------

    def contract(self, contract_id: bytes) -> ContractRecord | None:
        """A contract for reading (never mutate what this returns)."""
        layer: Ledger | None = self
        while layer is not None:
            found = layer._contracts.get(contract_id)
            if found is not None:
                return found
            layer = layer.parent
        return None

    def contract_mut(self, contract_id: bytes) -> ContractRecord | None:
        """A contract this layer may change: copied into the layer on first use."""
        own = self._contracts.get(contract_id)
        if own is not None or self.parent is None:
            return own
        if self.clone_natives:
            source = self.parent.contract(contract_id)
        else:
            # Share the native of the nearest layer that owns one (a clone, or the base).
            source = self.parent.contract_mut(contract_id)
        if source is None:
            return None
        own = source.copy(clone_native=self.clone_natives)
        self._contracts[contract_id] = own
        return own

    def add_contract(self, record: ContractRecord) -> None:
        self._contracts[record.id] = record

    def own_contracts(self) -> Iterator[ContractRecord]:
        """The contracts this layer changed or created (all contracts, in the base)."""
        return iter(self._contracts.values())

    # -- layers --------------------------------------------------------------------------------

    def commit(self) -> None:
        """Push this layer's changes into its parent and empty it."""
        parent = self.parent
        if parent is None:
            raise AssertionError("the base ledger has no parent to commit into")
        for key in self._spent:
            parent.spend(key)
        for utxo in self._utxos.values():
            parent.add_utxo(utxo)
        parent._contracts.update(self._contracts)
        self._spent = set()
        self._utxos = {}
        self._by_lockup = {}
        self._contracts = {}
