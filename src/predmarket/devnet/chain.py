"""The chain: transaction validation and application, blocks, the mempool, building.

One deterministic path applies a transaction, whether it is being admitted, mined, simulated for a
build or replayed from the block log: :meth:`Chain._apply`. It checks the node's rules in order,
then applies the transaction in a ledger layer that the caller commits or drops:

1. stateless: version, network id, gas amount and price, input/output counts, output rules (dust,
   one token per output, data size), duplicate inputs;
2. inputs: each exists and is unspent (else ``DoubleSpending`` when the chain or the mempool
   spent it, ``NonExistInput`` otherwise), is not time-locked, and belongs to the single signer:
   the first input unlocks with the signer's public key (P2PKH) or ``05`` (groupless P2PK, the key
   is in the lockup), every later one with ``SameAsPrevious`` and the same lockup;
3. the one signature over the txId (low-s only);
4. balances: inputs = fixed outputs + gasAmount * gasPrice (+ the spare assets a script uses);
5. gas: at least the transaction's own gas plus the called method's;
6. the script, if any, in a nested layer: at admission a failure rejects the transaction; when a
   transaction is mined its failure is recorded (``scriptExecutionOk = false``: inputs spent,
   fixed outputs created, gas charged, the spare assets returned, contract effects dropped).

Blocks: hash = blake2b of a deterministic header (parent, height, timestamp, tx ids). One chain:
confirmations are the height difference plus one.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from predmarket.alephium.constants import (
    DEFAULT_TX_VERSION,
    DUST_AMOUNT,
    GAS_PER_INPUT,
    GAS_PER_OUTPUT,
    GAS_TX_BASE,
    MAX_GAS_PER_TX,
    MAX_TX_INPUTS,
    MAX_TX_OUTPUTS,
    MIN_GAS_PRICE,
    MINIMAL_GAS,
)
from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import (
    P2PK,
    P2PKH,
    KeyKind,
    LockupScript,
    encode_lockup,
    output_hint,
)
from predmarket.alephium.script import ContractCall, TxScript, parse_contract_call
from predmarket.alephium.signing import verify_hash
from predmarket.alephium.tx import (
    SAME_AS_PREVIOUS,
    AssetOutput,
    Input,
    P2PKHUnlock,
    P2PKUnlock,
    SameAsPrevious,
    Token,
    UnlockScript,
    UnsignedTx,
    decode_unsigned_tx,
    encode_unsigned_tx,
    from_group,
    output_ref_key,
    output_rule_violations,
    to_group,
)
from predmarket.devnet.errors import (
    DevnetStateError,
    NodeError,
    ScriptFailure,
    bad_request,
)
from predmarket.devnet.genesis import GENESIS_SUPPLY, DevnetConfig, genesis_ledger
from predmarket.devnet.ledger import Ledger, Utxo
from predmarket.devnet.vm import (
    AssetState,
    Event,
    NativeContract,
    execute_call,
    refund_outputs,
)

ZERO_HASH: Final = bytes(32)


class Mode(enum.Enum):
    #: Admission to the mempool or an automined block: any failure rejects the transaction.
    ADMIT = enum.auto()
    #: Mining an admitted transaction: a script failure is recorded, not rejected.
    MINE = enum.auto()
    #: Replaying the block log: like MINE, without re-checking signatures.
    REPLAY = enum.auto()
    #: A build's simulation: unsigned, and failures are rejected as execution errors.
    SIMULATE = enum.auto()


class InvalidTx(Exception):
    """A rule the transaction breaks: ``code`` is the node's name of it."""

    def __init__(self, code: str, explanation: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.explanation = explanation

    def detail(self, tx_id: bytes) -> str:
        text = f"Failed in validating tx {tx_id.hex()}: {self.code}"
        return f"{text} ({self.explanation})" if self.explanation else text


def block_hash(parent: bytes, height: int, timestamp: int, tx_ids: Sequence[bytes]) -> bytes:
    header = (
        b"predmarket-devnet-block"
        + parent
        + height.to_bytes(8, "big")
        + timestamp.to_bytes(8, "big")
        + len(tx_ids).to_bytes(4, "big")
        + b"".join(tx_ids)
    )
    return blake2b256(header)


@dataclass(frozen=True, slots=True)
class Block:
    height: int
    hash: bytes
    parent: bytes
    timestamp: int
    tx_ids: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Applied:
    """A transaction applied in a layer (not yet part of a block)."""

    tx_id: bytes
    raw: bytes
    signature: str
    unsigned: UnsignedTx
    signer: LockupScript
    script_ok: bool
    generated: tuple[AssetOutput, ...]
    contract_inputs: tuple[AssetState, ...]
    contract_outputs: tuple[AssetState, ...]
    events: tuple[Event, ...]
    failure: str | None
    fee: int


@dataclass(frozen=True, slots=True)
class MinedTx:
    tx_id: bytes
    block_height: int
    tx_index: int
    #: None for the synthetic genesis transaction.
    applied: Applied | None
    generated: tuple[AssetOutput, ...]


@dataclass(frozen=True, slots=True)
class EventBatch:
    """One contract's events of one block: the node's event counter counts these."""

    block_hash: bytes
    timestamp: int
    entries: tuple[tuple[bytes, Event], ...]


@dataclass(frozen=True, slots=True)
class PendingTx:
    tx_id: bytes
    raw: bytes
    signature: str
    unsigned: UnsignedTx


@dataclass(slots=True)
class PreparedBlock:
    """A block whose transactions are applied in ``layer``; commit it once it is persisted."""

    block: Block
    applied: list[Applied]
    layer: Ledger


@dataclass(frozen=True, slots=True)
class Built:
    """An unsigned transaction a build produced, with its simulation (scripts only)."""

    unsigned: UnsignedTx
    raw: bytes
    tx_id: bytes
    simulation: Applied | None


@dataclass(slots=True)
class _Sums:
    alph: int = 0
    tokens: dict[bytes, int] = field(default_factory=dict)

    def add(self, output: AssetOutput) -> None:
        self.alph += output.amount
        for token in output.tokens:
            self.tokens[token.id] = self.tokens.get(token.id, 0) + token.amount


def tx_gas(n_inputs: int, n_outputs: int, method_gas: int) -> int:
    """The gas a transaction needs: base + per input + per fixed output + the method's."""
    total = GAS_TX_BASE + GAS_PER_INPUT * n_inputs + GAS_PER_OUTPUT * n_outputs + method_gas
    return max(MINIMAL_GAS, total)


def _select_tokens(candidates: Sequence[Utxo], needed: Mapping[bytes, int]) -> list[Utxo]:
    """Outputs holding each needed token, largest holding first, until its amount is covered."""
    selected: list[Utxo] = []
    for token_id, amount in needed.items():

        def held(utxo: Utxo, token_id: bytes = token_id) -> int:
            return sum(t.amount for t in utxo.output.tokens if t.id == token_id)

        have = sum(held(u) for u in selected)
        for utxo in sorted(candidates, key=lambda u: (-held(u), u.key)):
            if have >= amount or not held(utxo):
                break
            if utxo not in selected:
                selected.append(utxo)
                have += held(utxo)
        if have < amount:
            raise bad_request(
                f"Not enough balance for token {token_id.hex()}: got {have}, expected {amount}"
            )
    return selected


def rejection(tx_id: bytes, error: InvalidTx | ScriptFailure) -> NodeError:
    """The node's 400 for a transaction refused at admission."""
    if isinstance(error, InvalidTx):
        return bad_request(error.detail(tx_id))
    return bad_request(
        f"Failed in validating tx {tx_id.hex()}: TxScriptExeFailed({error.explained})"
    )


def decode_raw(raw: bytes) -> UnsignedTx:
    try:
        unsigned = decode_unsigned_tx(raw)
    except AlephiumError as e:
        raise bad_request(f"Failed in decoding unsigned tx: {e}") from None
    if encode_unsigned_tx(unsigned) != raw:
        raise bad_request("Failed in decoding unsigned tx: non-canonical encoding")
    return unsigned


class Chain:
    """The devnet's chain state (not thread-safe: the node serializes calls)."""

    def __init__(self, config: DevnetConfig) -> None:
        self.config = config
        self.network_id = config.network_id
        self.groups = config.groups
        self.base, genesis_outputs = genesis_ledger(config)
        genesis_id = config.genesis_tx_id
        ts = config.genesis_timestamp
        genesis = Block(
            0, block_hash(ZERO_HASH, 0, ts, (genesis_id,)), ZERO_HASH, ts, (genesis_id,)
        )
        self.blocks: list[Block] = [genesis]
        self.blocks_by_hash: dict[bytes, Block] = {genesis.hash: genesis}
        self.txs: dict[bytes, MinedTx] = {
            genesis_id: MinedTx(genesis_id, 0, 0, None, genesis_outputs)
        }
        self.events: dict[bytes, list[EventBatch]] = {}
        #: Spent output key -> the mined transaction that spent it (better double-spend errors).
        self.spent_by: dict[bytes, bytes] = {}
        self.mempool: dict[bytes, PendingTx] = {}
        self._mempool_spent: dict[bytes, bytes] = {}
        #: The state with the mempool applied (private copies of the natives it touched).
        self._pending: Ledger | None = None
        self.gas_fees = 0
        self.genesis_supply = GENESIS_SUPPLY

    @property
    def tip(self) -> Block:
        return self.blocks[-1]

    def next_timestamp(self, now: int) -> int:
        return max(now, self.tip.timestamp)

    def view(self, *, mempool: bool) -> Ledger:
        """The confirmed state, or the state with the mempool applied."""
        if mempool and self._pending is not None:
            return self._pending
        return self.base

    # -- applying ------------------------------------------------------------------------------

    def _check_stateless(self, tx: UnsignedTx) -> None:
        if tx.version != DEFAULT_TX_VERSION:
            raise InvalidTx("InvalidTxVersion", f"version {tx.version}")
        if tx.network_id != self.network_id:
            raise InvalidTx(
                "InvalidNetworkId", f"got {tx.network_id}, this network is {self.network_id}"
            )
        if not tx.inputs:
            raise InvalidTx("NoInputs")
        if len(tx.inputs) > MAX_TX_INPUTS:
            raise InvalidTx("TooManyInputs", f"{len(tx.inputs)} > {MAX_TX_INPUTS}")
        if len(tx.fixed_outputs) > MAX_TX_OUTPUTS:
            raise InvalidTx("TooManyOutputs", f"{len(tx.fixed_outputs)} > {MAX_TX_OUTPUTS}")
        if not MINIMAL_GAS <= tx.gas_amount <= MAX_GAS_PER_TX:
            raise InvalidTx(
                "InvalidStartGas", f"{tx.gas_amount} not in {MINIMAL_GAS}..{MAX_GAS_PER_TX}"
            )
        if tx.gas_price < MIN_GAS_PRICE:
            raise InvalidTx("InvalidGasPrice", f"{tx.gas_price} < {MIN_GAS_PRICE}")
        problems = output_rule_violations(tx)
        if problems:
            raise InvalidTx("InvalidOutputStats", "; ".join(problems))
        if len({inp.key for inp in tx.inputs}) != len(tx.inputs):
            raise InvalidTx("DuplicatedInputs")
        for out in tx.fixed_outputs:
            if isinstance(out.lockup, P2PK) and out.lockup.group >= self.groups:
                raise InvalidTx("InvalidOutputGroupIndex", f"group {out.lockup.group}")

    def _missing_input(self, key: bytes) -> InvalidTx:
        spender = self.spent_by.get(key)
        if spender is not None:
            return InvalidTx("DoubleSpending", f"input {key.hex()} was spent by tx {spender.hex()}")
        spender = self._mempool_spent.get(key)
        if spender is not None:
            return InvalidTx(
                "DoubleSpending", f"input {key.hex()} is spent by mempool tx {spender.hex()}"
            )
        return InvalidTx("NonExistInput", f"input {key.hex()}")

    def _inputs(
        self, layer: Ledger, tx: UnsignedTx, timestamp: int
    ) -> tuple[LockupScript, bytes, list[Utxo]]:
        """The spent outputs, the signer's lockup and the key that must sign."""
        utxos: list[Utxo] = []
        signer: LockupScript | None = None
        public_key = b""
        for index, inp in enumerate(tx.inputs):
            utxo = layer.utxo(inp.key)
            if utxo is None or utxo.hint != inp.hint:
                raise self._missing_input(inp.key)
            if utxo.output.lock_time > timestamp:
                raise InvalidTx(
                    "TimeLockedTx", f"input {inp.key.hex()} is locked until {utxo.output.lock_time}"
                )
            lockup = utxo.output.lockup
            unlock = inp.unlock
            if index == 0:
                if isinstance(unlock, P2PKHUnlock):
                    if lockup != P2PKH(blake2b256(unlock.public_key)):
                        raise InvalidTx("InvalidPublicKeyHash", f"input {inp.key.hex()}")
                    public_key = unlock.public_key
                elif isinstance(unlock, P2PKUnlock):
                    if not isinstance(lockup, P2PK) or lockup.public_key.kind != KeyKind.SECP256K1:
                        raise InvalidTx("InvalidUnlockScript", "05 unlocks a secp256k1 P2PK output")
                    public_key = lockup.public_key.key
                else:
                    raise InvalidTx(
                        "UnsupportedUnlockScript", f"{type(unlock).__name__} is not supported here"
                    )
                signer = lockup
            elif not isinstance(unlock, SameAsPrevious) or lockup != signer:
                raise InvalidTx(
                    "InvalidUnlockScript",
                    "one signer per tx: later inputs must be SameAsPrevious of the same lockup",
                )
            utxos.append(utxo)
        assert signer is not None
        return signer, public_key, utxos

    def _method_gas(self, layer: Ledger, call: ContractCall | None) -> int:
        if call is None:
            return 0
        record = layer.contract(call.contract_id)
        if record is None or not isinstance(record.native, NativeContract):
            return 0
        try:
            return record.native.abi.method(call.method_index).gas
        except KeyError:
            return 0

    def _apply(
        self,
        layer: Ledger,
        tx: UnsignedTx,
        *,
        tx_id: bytes,
        raw: bytes,
        signature: str,
        timestamp: int,
        mode: Mode,
    ) -> Applied:
        """Validate ``tx`` and apply it in ``layer``; raises :class:`InvalidTx` or
        :class:`ScriptFailure` (admission and simulation), leaving ``layer`` to be dropped."""
        self._check_stateless(tx)
        signer, public_key, utxos = self._inputs(layer, tx, timestamp)
        if mode in (Mode.ADMIT, Mode.MINE) and not verify_hash(tx_id, signature, public_key):
            raise InvalidTx("InvalidSignature")

        inputs = _Sums()
        for utxo in utxos:
            inputs.add(utxo.output)
        outputs = _Sums()
        for out in tx.fixed_outputs:
            outputs.add(out)
        fee = tx.gas_amount * tx.gas_price
        spare_alph = inputs.alph - outputs.alph - fee
        spare_tokens = {t: a - outputs.tokens.get(t, 0) for t, a in inputs.tokens.items()}
        if spare_alph < 0:
            raise InvalidTx(
                "InvalidAlphBalance",
                f"inputs {inputs.alph} < outputs {outputs.alph} + gas fee {fee}",
            )
        for token_id in outputs.tokens:
            if spare_tokens.get(token_id, 0) < 0 or token_id not in inputs.tokens:
                raise InvalidTx("InvalidTokenBalance", f"token {token_id.hex()}")
        spare_tokens = {t: a for t, a in spare_tokens.items() if a}
        call: ContractCall | None = None
        if tx.script is None:
            if spare_alph:
                raise InvalidTx(
                    "InvalidAlphBalance", f"inputs exceed outputs + gas fee by {spare_alph}"
                )
            if spare_tokens:
                raise InvalidTx("InvalidTokenBalance", "inputs carry tokens no output takes")
        else:
            call = parse_contract_call(tx.script)
        needed = tx_gas(len(tx.inputs), len(tx.fixed_outputs), self._method_gas(layer, call))
        if tx.gas_amount < needed:
            raise InvalidTx("OutOfGas", f"gasAmount {tx.gas_amount} < {needed} needed")

        for inp in tx.inputs:
            layer.spend(inp.key)
        for index, out in enumerate(tx.fixed_outputs):
            layer.add_utxo(Utxo.of(output_ref_key(tx_id, index), output_hint(out.lockup), out))

        script_ok = True
        failure: str | None = None
        generated: tuple[AssetOutput, ...] = ()
        contract_inputs: tuple[AssetState, ...] = ()
        contract_outputs: tuple[AssetState, ...] = ()
        events: tuple[Event, ...] = ()
        if tx.script is not None:
            script_layer = layer.fork()
            try:
                if call is None:
                    raise ScriptFailure(
                        "UnsupportedScript(only a single contract call is supported)"
                    )
                result = execute_call(
                    script_layer,
                    call,
                    caller=signer,
                    spare_alph=spare_alph,
                    spare_tokens=spare_tokens,
                    tx_id=tx_id,
                    block_timestamp=timestamp,
                )
            except ScriptFailure as e:
                if mode in (Mode.ADMIT, Mode.SIMULATE):
                    raise
                script_ok = False
                failure = e.explained
                generated = refund_outputs(signer, spare_alph, spare_tokens)
            else:
                script_layer.commit()
                generated = result.outputs
                contract_inputs = result.contract_inputs
                contract_outputs = result.contract_outputs
                events = result.events
            first = len(tx.fixed_outputs)
            for index, out in enumerate(generated, start=first):
                key = output_ref_key(tx_id, index)
                layer.add_utxo(Utxo.of(key, output_hint(out.lockup), out))
        return Applied(
            tx_id=tx_id,
            raw=raw,
            signature=signature,
            unsigned=tx,
            signer=signer,
            script_ok=script_ok,
            generated=generated,
            contract_inputs=contract_inputs,
            contract_outputs=contract_outputs,
            events=events,
            failure=failure,
            fee=fee,
        )

    # -- admission and blocks ------------------------------------------------------------------

    def check_new(self, tx_id: bytes) -> None:
        if tx_id in self.txs or tx_id in self.mempool:
            raise bad_request(f"Failed in validating tx {tx_id.hex()}: TxAlreadyExisted")

    def prepare_block(
        self, txs: Iterable[PendingTx], timestamp: int, *, mode: Mode
    ) -> PreparedBlock:
        """Apply ``txs`` in a new layer over the chain. At admission a bad transaction raises
        :class:`NodeError`; when mining it is left out (it cannot happen: the mempool admitted
        it against a state at least as old)."""
        block_layer = self.base.fork()
        applied: list[Applied] = []
        for pending in txs:
            tx_layer = block_layer.fork()
            try:
                result = self._apply(
                    tx_layer,
                    pending.unsigned,
                    tx_id=pending.tx_id,
                    raw=pending.raw,
                    signature=pending.signature,
                    timestamp=timestamp,
                    mode=mode,
                )
            except InvalidTx as e:
                if mode is Mode.ADMIT:
                    raise rejection(pending.tx_id, e) from None
                if mode is Mode.REPLAY:
                    raise DevnetStateError(
                        f"block log does not replay: {e.detail(pending.tx_id)}"
                    ) from None
                continue
            except ScriptFailure as e:  # raised at admission only (recorded when mined)
                raise rejection(pending.tx_id, e) from None
            tx_layer.commit()
            applied.append(result)
        tip = self.tip
        tx_ids = tuple(a.tx_id for a in applied)
        height = tip.height + 1
        block = Block(
            height, block_hash(tip.hash, height, timestamp, tx_ids), tip.hash, timestamp, tx_ids
        )
        return PreparedBlock(block, applied, block_layer)

    def commit_block(self, prepared: PreparedBlock) -> None:
        """Make a prepared (and persisted) block part of the chain."""
        block = prepared.block
        if block.parent != self.tip.hash:
            raise DevnetStateError("a prepared block no longer extends the tip")
        prepared.layer.commit()
        self.blocks.append(block)
        self.blocks_by_hash[block.hash] = block
        batches: dict[bytes, list[tuple[bytes, Event]]] = {}
        for index, applied in enumerate(prepared.applied):
            self.txs[applied.tx_id] = MinedTx(
                applied.tx_id, block.height, index, applied, applied.generated
            )
            for inp in applied.unsigned.inputs:
                self.spent_by[inp.key] = applied.tx_id
            self.gas_fees += applied.fee
            for event in applied.events:
                batches.setdefault(event.contract_id, []).append((applied.tx_id, event))
        for contract_id, entries in batches.items():
            batch = EventBatch(block.hash, block.timestamp, tuple(entries))
            self.events.setdefault(contract_id, []).append(batch)
        included = set(block.tx_ids)
        for tx_id in list(self.mempool):
            if tx_id in included:
                del self.mempool[tx_id]

    def admit(self, raw: bytes, signature: str, now: int) -> Applied:
        """Admit a transaction to the mempool (interval mining): validated and executed against
        the confirmed state plus the mempool."""
        unsigned = decode_raw(raw)
        tx_id = blake2b256(raw)
        self.check_new(tx_id)
        if self._pending is None:
            self._pending = self.base.fork(clone_natives=True)
        tx_layer = self._pending.fork()
        try:
            applied = self._apply(
                tx_layer,
                unsigned,
                tx_id=tx_id,
                raw=raw,
                signature=signature,
                timestamp=self.next_timestamp(now),
                mode=Mode.ADMIT,
            )
        except (InvalidTx, ScriptFailure) as e:
            raise rejection(tx_id, e) from None
        tx_layer.commit()
        self.mempool[tx_id] = PendingTx(tx_id, raw, signature, unsigned)
        for inp in unsigned.inputs:
            self._mempool_spent[inp.key] = tx_id
        return applied

    def pending_txs(self) -> list[PendingTx]:
        return list(self.mempool.values())

    def clear_mempool(self) -> None:
        self.mempool.clear()
        self._mempool_spent.clear()
        self._pending = None

    # -- building ------------------------------------------------------------------------------

    def build(
        self,
        *,
        signer: LockupScript,
        first_unlock: UnlockScript,
        outputs: Sequence[AssetOutput],
        script: TxScript | None,
        approve_alph: int,
        approve_tokens: Mapping[bytes, int],
        gas_amount: int | None,
        gas_price: int,
        multiplier_pct: int,
        now: int,
    ) -> Built:
        """Select the signer's outputs, add change, estimate gas and dry-run the transaction
        (a script's simulation)."""
        view = self.view(mempool=True)
        timestamp = self.next_timestamp(now)
        call = parse_contract_call(script) if script is not None else None
        need_alph = sum(o.amount for o in outputs) + approve_alph
        need_tokens: dict[bytes, int] = dict(approve_tokens)
        for out in outputs:
            for token in out.tokens:
                need_tokens[token.id] = need_tokens.get(token.id, 0) + token.amount
        candidates = sorted(
            (u for u in view.utxos_of(encode_lockup(signer)) if u.output.lock_time <= timestamp),
            key=lambda u: (-u.output.amount, u.key),
        )
        selected = _select_tokens(candidates, need_tokens)
        chosen = {u.key for u in selected}
        # Tokens first, then ALPH-only outputs (largest first) until the ALPH, the gas and the
        # dust of the change outputs are covered and the ALPH change is 0 or at least dust.
        spares = [u for u in candidates if not u.output.tokens and u.key not in chosen]
        spares += [u for u in candidates if u.output.tokens and u.key not in chosen]
        method_gas = self._method_gas(view, call)
        while True:
            sums = _Sums()
            for utxo in selected:
                sums.add(utxo.output)
            change_tokens = {
                t: a - need_tokens.get(t, 0)
                for t, a in sums.tokens.items()
                if a > need_tokens.get(t, 0)
            }
            gas = gas_amount
            if gas is None:
                n_outputs = len(outputs) + len(change_tokens) + 1
                estimate = tx_gas(max(len(selected), 1), n_outputs, method_gas)
                gas = -(-estimate * multiplier_pct // 100)
                if gas > MAX_GAS_PER_TX:
                    raise bad_request(f"Estimated gas {gas} exceeds the maximum {MAX_GAS_PER_TX}")
            fee = gas * gas_price
            change_alph = sums.alph - need_alph - fee - DUST_AMOUNT * len(change_tokens)
            if selected and (change_alph == 0 or change_alph >= DUST_AMOUNT):
                break
            if not spares or len(selected) >= MAX_TX_INPUTS:
                expected = need_alph + fee + DUST_AMOUNT * len(change_tokens)
                raise bad_request(f"Not enough balance: got {sums.alph}, expected {expected}")
            selected.append(spares.pop(0))
        fixed = [
            *outputs,
            *(
                AssetOutput(DUST_AMOUNT, signer, tokens=(Token(t, a),))
                for t, a in change_tokens.items()
            ),
        ]
        if change_alph:
            fixed.append(AssetOutput(change_alph, signer))
        inputs = tuple(
            Input(u.hint, u.key, first_unlock if i == 0 else SAME_AS_PREVIOUS)
            for i, u in enumerate(selected)
        )
        unsigned = UnsignedTx(
            DEFAULT_TX_VERSION, self.network_id, script, gas, gas_price, inputs, tuple(fixed)
        )
        raw = encode_unsigned_tx(unsigned)
        tx_id = blake2b256(raw)
        applied = self.dry_run(unsigned, tx_id=tx_id, raw=raw, timestamp=timestamp)
        return Built(unsigned, raw, tx_id, applied if script is not None else None)

    def dry_run(self, tx: UnsignedTx, *, tx_id: bytes, raw: bytes, timestamp: int) -> Applied:
        """Apply ``tx`` (unsigned) to a private copy of the state with the mempool applied, so
        a build never returns a transaction the node would refuse for anything but its
        signature. Scripts run: that is the simulation."""
        sandbox = self.view(mempool=True).fork(clone_natives=True)
        try:
            return self._apply(
                sandbox.fork(),
                tx,
                tx_id=tx_id,
                raw=raw,
                signature="",
                timestamp=timestamp,
                mode=Mode.SIMULATE,
            )
        except InvalidTx as e:
            detail = f"{e.code} ({e.explanation})" if e.explanation else e.code
        except ScriptFailure as e:
            detail = e.explained
        if tx.script is None:
            raise bad_request(f"Invalid transaction: {detail}")
        raise bad_request(
            f"Execution error when estimating gas for tx script or contract: {detail}"
        )

    # -- reads ---------------------------------------------------------------------------------

    def confirmations(self, height: int) -> int:
        return self.tip.height - height + 1

    def group_of_tx(self, tx: UnsignedTx) -> tuple[int, int]:
        return from_group(tx, self.groups), to_group(tx, self.groups)

    def ledger_totals(self) -> dict[str, object]:
        """Every ALPH and token amount on the confirmed state (a devnet audit read)."""
        wallets_alph = 0
        tokens: dict[bytes, int] = {}
        for utxo in self.base.own_utxos():
            wallets_alph += utxo.output.amount
            for token in utxo.output.tokens:
                tokens[token.id] = tokens.get(token.id, 0) + token.amount
        contracts_alph = 0
        for record in self.base.own_contracts():
            contracts_alph += record.alph
            for token_id, amount in record.tokens.items():
                tokens[token_id] = tokens.get(token_id, 0) + amount
        return {
            "genesisAlph": str(self.genesis_supply),
            "walletsAlph": str(wallets_alph),
            "contractsAlph": str(contracts_alph),
            "gasFees": str(self.gas_fees),
            "tokens": [{"id": t.hex(), "amount": str(a)} for t, a in sorted(tokens.items())],
        }
