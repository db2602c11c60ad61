"""Running a decoded contract call against native (Python) contracts.

A submitted script is recognised by :func:`predmarket.alephium.script.parse_contract_call` as
``approvals + args + contract id + method index``; :func:`execute_call` checks it against the
ABI, hands the contract a :class:`CallContext`, and turns what the contract did into the
transaction's generated outputs, contract outputs and events.

Assets during a call (the node's model, simplified):

- the transaction's *spare* assets (inputs - fixed outputs - gas) are what the script may use;
  the call *approves* part of them (``ApproveAlph``/``ApproveToken``); the rest is returned to the
  caller unchanged;
- the contract takes approved assets into its balance, pays assets out of its balance, creates
  contracts and issues or burns tokens; approved assets it leaves are returned to the caller;
- everything paid to an address becomes generated asset outputs, one per token plus one for the
  ALPH (node rules: a token output carries exactly the dust amount, an ALPH output at least it).
  The ALPH of a token output is part of what the recipient receives: a contract pays it with the
  tokens. When the caller's ALPH change would end below the dust amount it stays with the called
  contract (it cannot form an output).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, NoReturn, Protocol, Self

from predmarket.alephium.address import contract_address, format_address
from predmarket.alephium.constants import DUST_AMOUNT
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import LockupScript, encode_lockup
from predmarket.alephium.script import ContractCall, Val, encode_vals
from predmarket.alephium.tx import AssetOutput, Token
from predmarket.devnet.abi import ERROR_CODES, ContractAbi, MethodAbi, val_type
from predmarket.devnet.errors import ContractRevert, DevnetStateError, ScriptFailure
from predmarket.devnet.ledger import ContractRecord, Ledger


def self_funding(alph: int, token_count: int) -> bool:
    """Whether ``alph`` pays the dust of ``token_count`` token outputs and leaves either nothing
    or a valid ALPH output."""
    rest = alph - DUST_AMOUNT * token_count
    return rest == 0 or rest >= DUST_AMOUNT


class NativeContract(ABC):
    """A contract implemented in Python. Subclasses set ``abi`` and implement the methods."""

    abi: ClassVar[ContractAbi]
    #: Set when the contract is created: :meth:`state_hash` of its initial fields.
    initial_state_hash: bytes = bytes(32)

    @abstractmethod
    def clone(self) -> Self:
        """An independent copy (simulations and the mempool's pending view work on copies)."""

    @abstractmethod
    def imm_fields(self) -> tuple[Val, ...]: ...

    @abstractmethod
    def mut_fields(self) -> tuple[Val, ...]: ...

    @abstractmethod
    def call(self, ctx: CallContext, method: MethodAbi, args: tuple[Val, ...]) -> None:
        """Run ``method`` (the VM has checked its index and argument types): check everything
        first (``ctx.revert``), change the native last."""

    @classmethod
    def bytecode(cls) -> bytes:
        """Stand-in for compiled code (natives have none): identifies the implementation."""
        return f"predmarket-devnet-native:{cls.abi.name}:v1".encode()

    @classmethod
    def code_hash(cls) -> bytes:
        return blake2b256(cls.bytecode())

    def state_hash(self) -> bytes:
        """blake2b(bytecode ‖ immFields ‖ mutFields): the initial state hash at creation."""
        return blake2b256(
            self.bytecode() + encode_vals(self.imm_fields()) + encode_vals(self.mut_fields())
        )


class IssuedToken(Protocol):
    """A token contract: who may issue it, and its supply."""

    issuer: bytes
    total_supply: int


@dataclass(frozen=True, slots=True)
class Event:
    contract_id: bytes
    index: int
    fields: tuple[Val, ...]


@dataclass(slots=True)
class _Pot:
    lockup: LockupScript
    alph: int = 0
    tokens: dict[bytes, int] = field(default_factory=dict)


class OutputSet:
    """What a call pays to addresses, merged per recipient until it becomes outputs."""

    __slots__ = ("_pots",)

    def __init__(self) -> None:
        self._pots: dict[bytes, _Pot] = {}

    def _pot(self, lockup: LockupScript) -> _Pot:
        key = encode_lockup(lockup)
        pot = self._pots.get(key)
        if pot is None:
            pot = self._pots[key] = _Pot(lockup)
        return pot

    def add_alph(self, lockup: LockupScript, amount: int) -> None:
        if amount:
            self._pot(lockup).alph += amount

    def take_alph(self, lockup: LockupScript, amount: int) -> None:
        pot = self._pot(lockup)
        if amount > pot.alph:
            raise DevnetStateError("taking more ALPH from an output than it holds")
        pot.alph -= amount

    def add_token(self, lockup: LockupScript, token_id: bytes, amount: int) -> None:
        if amount:
            tokens = self._pot(lockup).tokens
            tokens[token_id] = tokens.get(token_id, 0) + amount

    def recipients(self) -> list[LockupScript]:
        return [p.lockup for p in self._pots.values()]

    def alph(self, lockup: LockupScript) -> int:
        pot = self._pots.get(encode_lockup(lockup))
        return 0 if pot is None else pot.alph

    def shortfall(self, lockup: LockupScript) -> int:
        """ALPH the recipient's outputs lack: dust for each token output, and enough to turn an
        ALPH remainder below the dust amount into a valid output."""
        pot = self._pots.get(encode_lockup(lockup))
        if pot is None:
            return 0
        rest = pot.alph - DUST_AMOUNT * len(pot.tokens)
        if rest < 0:
            return -rest
        return DUST_AMOUNT - rest if 0 < rest < DUST_AMOUNT else 0

    def sub_dust(self, lockup: LockupScript) -> int:
        """The ALPH remainder below the dust amount that cannot form an output, else 0."""
        pot = self._pots.get(encode_lockup(lockup))
        if pot is None:
            return 0
        rest = pot.alph - DUST_AMOUNT * len(pot.tokens)
        return rest if 0 < rest < DUST_AMOUNT else 0

    def to_outputs(self) -> list[AssetOutput]:
        """Per recipient (first-paid first): one output per token, then the ALPH left."""
        outputs: list[AssetOutput] = []
        for pot in self._pots.values():
            if not self_funding(pot.alph, len(pot.tokens)):
                raise DevnetStateError(
                    f"outputs to {format_address(pot.lockup)} do not carry their dust: "
                    f"{pot.alph} attoALPH for {len(pot.tokens)} token outputs"
                )
            for token_id, amount in pot.tokens.items():
                outputs.append(
                    AssetOutput(DUST_AMOUNT, pot.lockup, tokens=(Token(token_id, amount),))
                )
            rest = pot.alph - DUST_AMOUNT * len(pot.tokens)
            if rest:
                outputs.append(AssetOutput(rest, pot.lockup))
        return outputs


@dataclass(frozen=True, slots=True)
class AssetState:
    """A contract's assets at one moment (for contract inputs/outputs and the simulation)."""

    contract_id: bytes
    alph: int
    tokens: tuple[tuple[bytes, int], ...]

    @classmethod
    def of(cls, record: ContractRecord) -> AssetState:
        return cls(record.id, record.alph, tuple(sorted(record.tokens.items())))


@dataclass(frozen=True, slots=True)
class CallResult:
    outputs: tuple[AssetOutput, ...]
    #: Assets of the existing contracts whose balance the call changed, before it.
    contract_inputs: tuple[AssetState, ...]
    #: Assets of those contracts and of the contracts it created, after it.
    contract_outputs: tuple[AssetState, ...]
    events: tuple[Event, ...]


class CallContext:
    """What a native contract sees and does during one call."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        contract_id: bytes,
        caller: LockupScript,
        tx_id: bytes,
        block_timestamp: int,
        approved_alph: int,
        approved_tokens: Mapping[bytes, int],
    ) -> None:
        self.ledger = ledger
        self.self_id = contract_id
        self.caller = caller
        self.caller_address = format_address(caller)
        self.tx_id = tx_id
        self.block_timestamp = block_timestamp
        self._approved_alph = approved_alph
        self._approved_tokens = dict(approved_tokens)
        self.outputs = OutputSet()
        self.events: list[Event] = []
        self._before: dict[bytes, AssetState] = {}
        self._created: list[bytes] = []

    # -- failing -------------------------------------------------------------------------------

    @property
    def self_address(self) -> str:
        return contract_address(self.self_id)

    def revert(self, name: str, message: str = "") -> NoReturn:
        """``assert!(false, ERROR_CODES[name])``: the call fails with that code."""
        raise ContractRevert(self.self_address, ERROR_CODES[name], name, message)

    # -- contracts -----------------------------------------------------------------------------

    def record(self, contract_id: bytes | None = None) -> ContractRecord:
        """A contract (default: the called one) for changing; its assets are tracked."""
        cid = self.self_id if contract_id is None else contract_id
        record = self.ledger.contract_mut(cid)
        if record is None:
            raise ScriptFailure(f"NonExistContract({contract_address(cid)})")
        if cid not in self._before and cid not in self._created:
            self._before[cid] = AssetState.of(record)
        return record

    def read(self, contract_id: bytes) -> ContractRecord | None:
        return self.ledger.contract(contract_id)

    def create_contract(self, contract_id: bytes, native: NativeContract, alph: int) -> None:
        """Create a contract holding ``alph`` of the caller's approved ALPH (its deposit)."""
        if self.ledger.contract(contract_id) is not None:
            raise ScriptFailure(f"ContractAlreadyExists({contract_address(contract_id)})")
        self._use_approved_alph(alph)
        native.initial_state_hash = native.state_hash()
        self.ledger.add_contract(ContractRecord(contract_id, native, alph))
        self._created.append(contract_id)

    # -- approved assets -----------------------------------------------------------------------

    @property
    def approved_alph(self) -> int:
        return self._approved_alph

    def approved_token(self, token_id: bytes) -> int:
        return self._approved_tokens.get(token_id, 0)

    def approved_token_ids(self) -> tuple[bytes, ...]:
        return tuple(self._approved_tokens)

    def _use_approved_alph(self, amount: int) -> None:
        if amount > self._approved_alph:
            raise DevnetStateError("a contract used more approved ALPH than it checked for")
        self._approved_alph -= amount

    def _use_approved_token(self, token_id: bytes, amount: int) -> None:
        if not amount:
            return
        left = self._approved_tokens.get(token_id, 0) - amount
        if left < 0:
            raise DevnetStateError("a contract used more of an approved token than it checked for")
        if left:
            self._approved_tokens[token_id] = left
        else:
            del self._approved_tokens[token_id]

    def take_approved_alph(self, amount: int) -> None:
        """Move approved ALPH into the called contract's balance."""
        self._use_approved_alph(amount)
        self.record().alph += amount

    def take_approved_token(self, token_id: bytes, amount: int) -> None:
        """Move approved tokens into the called contract's balance."""
        self._use_approved_token(token_id, amount)
        self.record().add_token(token_id, amount)

    def give_approved_alph(self, to: LockupScript, amount: int) -> None:
        """Pay approved ALPH straight to an address (e.g. the dust of an output)."""
        self._use_approved_alph(amount)
        self.outputs.add_alph(to, amount)

    def return_unused_approvals(self) -> None:
        """Give what the call left of the approved assets back to the caller."""
        self.outputs.add_alph(self.caller, self._approved_alph)
        self._approved_alph = 0
        for token_id, amount in self._approved_tokens.items():
            self.outputs.add_token(self.caller, token_id, amount)
        self._approved_tokens = {}

    # -- paying out ----------------------------------------------------------------------------

    def pay_alph(self, to: LockupScript, amount: int) -> None:
        """Pay ALPH from the called contract's balance to an address."""
        if not amount:
            return
        record = self.record()
        if amount > record.alph:
            raise DevnetStateError("a contract paid more ALPH than it holds")
        record.alph -= amount
        self.outputs.add_alph(to, amount)

    def pay_token(self, to: LockupScript, token_id: bytes, amount: int) -> None:
        """Pay tokens from the called contract's balance to an address."""
        if not amount:
            return
        self.record().take_token(token_id, amount)
        self.outputs.add_token(to, token_id, amount)

    # -- tokens --------------------------------------------------------------------------------

    def _token(self, token_id: bytes) -> IssuedToken:
        native = self.record(token_id).native
        if getattr(native, "issuer", None) != self.self_id:
            raise ScriptFailure(f"NotTokenIssuer({contract_address(token_id)})")
        return native  # type: ignore[return-value]  # checked: it has an issuer attribute

    def issue_token(self, token_id: bytes, amount: int) -> None:
        """Issue new tokens into the called contract's balance (it must be their issuer)."""
        if amount:
            self._token(token_id).total_supply += amount
            self.record().add_token(token_id, amount)

    def burn_token(self, token_id: bytes, amount: int) -> None:
        """Destroy tokens held by the called contract (it must be their issuer)."""
        if amount:
            token = self._token(token_id)
            self.record().take_token(token_id, amount)
            token.total_supply -= amount

    # -- events --------------------------------------------------------------------------------

    def emit(self, event_index: int, *fields: Val) -> None:
        self.events.append(Event(self.self_id, event_index, tuple(fields)))

    # -- the end of the call -------------------------------------------------------------------

    def contract_states(self) -> tuple[tuple[AssetState, ...], tuple[AssetState, ...]]:
        before: list[AssetState] = []
        after: list[AssetState] = []
        for cid, state in self._before.items():
            record = self.ledger.contract(cid)
            assert record is not None
            now = AssetState.of(record)
            if now != state:
                before.append(state)
                after.append(now)
        for cid in self._created:
            record = self.ledger.contract(cid)
            assert record is not None
            after.append(AssetState.of(record))
        return tuple(before), tuple(after)


def _check_args(method: MethodAbi, args: tuple[Val, ...]) -> None:
    if len(args) != len(method.args):
        raise ScriptFailure(f"InvalidMethodArgLength({len(method.args)}, {len(args)})")
    for spec, arg in zip(method.args, args, strict=True):
        if val_type(arg) != spec.type:
            raise ScriptFailure(f"InvalidType({spec.name}: expected {spec.type})")


def _sub(spare: Mapping[bytes, int], used: Mapping[bytes, int]) -> dict[bytes, int]:
    out = {t: a - used.get(t, 0) for t, a in spare.items()}
    return {t: a for t, a in out.items() if a}


def execute_call(
    ledger: Ledger,
    call: ContractCall,
    *,
    caller: LockupScript,
    spare_alph: int,
    spare_tokens: Mapping[bytes, int],
    tx_id: bytes,
    block_timestamp: int,
) -> CallResult:
    """Run ``call`` in ``ledger`` (a layer the caller commits or drops).

    Raises :class:`ScriptFailure` (or :class:`ContractRevert`) when the call fails; a contract
    fails before it changes its native, so dropping the layer undoes everything.
    """
    record = ledger.contract(call.contract_id)
    if record is None or not isinstance(record.native, NativeContract):
        raise ScriptFailure(f"NonExistContract({contract_address(call.contract_id)})")
    abi = record.native.abi
    try:
        method = abi.method(call.method_index)
    except KeyError:
        raise ScriptFailure(f"InvalidMethodIndex({call.method_index})") from None
    _check_args(method, call.args)
    if call.returns:
        raise ScriptFailure(f"InvalidReturnLength({call.returns})")
    approvals = call.approvals
    approved_tokens = dict(approvals.tokens)
    if approvals.alph > spare_alph or any(
        amount > spare_tokens.get(t, 0) for t, amount in approved_tokens.items()
    ):
        raise ScriptFailure("NotEnoughApprovedBalance")
    leftover_alph = spare_alph - approvals.alph
    leftover_tokens = _sub(spare_tokens, approved_tokens)
    # Both parts must be able to go back to the caller on their own: the leftover after any
    # call, the approvals if the call fails when mined.
    if not self_funding(leftover_alph, len(leftover_tokens)) or not self_funding(
        approvals.alph, len(approved_tokens)
    ):
        raise ScriptFailure(
            f"InvalidOutputBalances(the ALPH spared and approved must pay {DUST_AMOUNT} "
            "attoALPH of dust per token output returned to the caller)"
        )
    ctx = CallContext(
        ledger,
        contract_id=call.contract_id,
        caller=caller,
        tx_id=tx_id,
        block_timestamp=block_timestamp,
        approved_alph=approvals.alph,
        approved_tokens=approved_tokens,
    )
    native = ctx.record().native
    assert isinstance(native, NativeContract)
    native.call(ctx, method, call.args)
    ctx.return_unused_approvals()
    ctx.outputs.add_alph(caller, leftover_alph)
    for token_id, amount in leftover_tokens.items():
        ctx.outputs.add_token(caller, token_id, amount)
    stranded = ctx.outputs.sub_dust(caller)
    if stranded:
        ctx.outputs.take_alph(caller, stranded)
        ctx.record().alph += stranded
    outputs = ctx.outputs.to_outputs()
    inputs, contract_outputs = ctx.contract_states()
    return CallResult(tuple(outputs), inputs, contract_outputs, tuple(ctx.events))


def refund_outputs(
    caller: LockupScript, alph: int, tokens: Mapping[bytes, int]
) -> tuple[AssetOutput, ...]:
    """The outputs returning a failed script's spare assets to the caller."""
    outputs = OutputSet()
    outputs.add_alph(caller, alph)
    for token_id, amount in tokens.items():
        outputs.add_token(caller, token_id, amount)
    return tuple(outputs.to_outputs())
