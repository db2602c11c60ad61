"""The devnet node: the facade the HTTP layer serves (thread-safe, synchronous, fast).

Every method takes the node's one lock. Methods return JSON-ready dicts in the Alephium full
node's REST shapes (chain-formats.md §4: camelCase, amounts as decimal strings, lowercase hex) and
raise :class:`~predmarket.devnet.errors.NodeError` for anything the node would refuse (400 bad
request or invalid transaction, 404 unknown thing, 429 faucet cooldown, 500 only for bugs).

Request-shape validation (hex, JSON types, missing fields) belongs to the HTTP layer; this facade
takes typed values and validates their meaning: keys, addresses, balances, signatures, the
ledger's rules and the contracts' reverts.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import Final, NamedTuple

from predmarket.alephium.address import contract_address, format_address, parse_address
from predmarket.alephium.constants import (
    DUST_AMOUNT,
    MAX_OUTPUT_DATA_SIZE,
    MIN_GAS_PRICE,
    ONE_ALPH,
    U256_MAX,
)
from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import (
    P2C,
    P2PK,
    P2PKH,
    KeyKind,
    LockupScript,
    PublicKeyLike,
    encode_lockup,
    group_of,
    output_hint,
)
from predmarket.alephium.script import TxScript, decode_script, val_to_json
from predmarket.alephium.signing import sign_tx_id, validate_public_key
from predmarket.alephium.tx import (
    P2PK_UNLOCK,
    AssetOutput,
    P2PKHUnlock,
    Token,
    UnlockScript,
    output_ref_key,
    unsigned_tx_to_api_json,
)
from predmarket.devnet.abi import COLLATERAL_TOKEN, abi_document, call_script
from predmarket.devnet.chain import (
    Applied,
    Built,
    Chain,
    Mode,
    PendingTx,
    PreparedBlock,
    decode_raw,
)
from predmarket.devnet.contracts.market import MarketContract
from predmarket.devnet.errors import DevnetStateError, NodeError, bad_request, not_found
from predmarket.devnet.genesis import DevnetConfig
from predmarket.devnet.persistence import BlockLog, StoredTx
from predmarket.devnet.vm import AssetState, NativeContract

#: What ``/infos/node`` reports: the node API version the official SDK is built against.
RELEASE_VERSION: Final = "4.6.0"
MAX_EVENTS_LIMIT: Final = 100


class Destination(NamedTuple):
    """One destination of ``/transactions/build``."""

    address: str
    atto_alph_amount: int
    tokens: Sequence[tuple[bytes, int]] = ()
    lock_time: int | None = None
    message: bytes = b""


def _system_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _alph_hint(amount: int) -> str:
    """The node's ``balanceHint``: the amount in ALPH, e.g. ``1.5 ALPH``."""
    value = Decimal(amount) / ONE_ALPH
    text = format(value.normalize(), "f") if amount else "0"
    return f"{text} ALPH"


def _tokens_json(tokens: Sequence[Token] | Sequence[tuple[bytes, int]]) -> list[dict[str, str]]:
    pairs = [(t.id, t.amount) if isinstance(t, Token) else t for t in tokens]
    return [{"id": token_id.hex(), "amount": str(amount)} for token_id, amount in pairs]


def _asset_state_json(state: AssetState) -> dict[str, object]:
    return {
        "address": contract_address(state.contract_id),
        "attoAlphAmount": str(state.alph),
        "tokens": _tokens_json(state.tokens),
    }


def _output_asset_json(output: AssetOutput) -> dict[str, object]:
    return {
        "address": format_address(output.lockup),
        "attoAlphAmount": str(output.amount),
        "tokens": _tokens_json(output.tokens),
    }


def _output_json(output: AssetOutput, tx_id: bytes, index: int) -> dict[str, object]:
    return {
        "hint": output_hint(output.lockup),
        "key": output_ref_key(tx_id, index).hex(),
        "attoAlphAmount": str(output.amount),
        "address": format_address(output.lockup),
        "tokens": _tokens_json(output.tokens),
        "lockTime": output.lock_time,
        "message": output.additional_data.hex(),
    }


def _parse_address(text: str) -> LockupScript:
    try:
        return parse_address(text)
    except AlephiumError as e:
        raise bad_request(f"Invalid address {text!r}: {e}") from None


def _contract_id(address: str) -> bytes:
    lockup = _parse_address(address)
    if not isinstance(lockup, P2C):
        raise bad_request(f"Invalid contract address {address!r}: not a contract")
    return lockup.contract_id


def _check_amount(value: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= U256_MAX:
        raise bad_request(f"Invalid {what}: {value!r}")
    return value


def _tokens_arg(tokens: Sequence[tuple[bytes, int]], what: str) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    for token_id, amount in tokens:
        if not isinstance(token_id, bytes) or len(token_id) != 32:
            raise bad_request(f"Invalid {what}: a token id is 32 bytes")
        if _check_amount(amount, f"{what} amount") == 0:
            raise bad_request(f"Invalid {what}: token amount must be positive")
        if token_id in out:
            raise bad_request(f"Invalid {what}: token {token_id.hex()} listed twice")
        out[token_id] = amount
    return out


class DevnetNode:
    """An embedded Alephium-compatible node running the protocol's contracts natively."""

    def __init__(
        self,
        config: DevnetConfig,
        chain: Chain,
        log: BlockLog,
        *,
        automine: bool,
        clock_ms: Callable[[], int],
    ) -> None:
        self._config = config
        self._chain = chain
        self._log = log
        self._automine = automine
        self._clock = clock_ms
        self._lock = threading.RLock()
        self._faucet_last: dict[str, int] = {}
        self._closed = False
        #: Set when a block was executed but could not be persisted: reopen to recover.
        self._broken: str | None = None

    # -- life cycle ----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        network_id: int = 4,
        groups: int = 4,
        automine: bool = True,
        clock_ms: Callable[[], int] | None = None,
        faucet_cooldown_ms: int | None = None,
    ) -> DevnetNode:
        """Open (or on first use create) the devnet in ``data_dir`` and replay its block log.

        ``network_id`` and ``groups`` must match the ones the directory was created with.
        ``faucet_cooldown_ms`` overrides the saved cooldown for this run.
        """
        if not 0 <= network_id <= 0xFF:
            raise ValueError(f"network id {network_id} out of range 0..255")
        if not 1 <= groups <= 4:
            raise ValueError(f"groups {groups} out of range 1..4")
        clock = clock_ms or _system_clock_ms
        data_dir.mkdir(parents=True, exist_ok=True)
        config = DevnetConfig.load(data_dir)
        if config is None:
            config = DevnetConfig.generate(
                network_id=network_id, groups=groups, genesis_timestamp=clock()
            )
            if faucet_cooldown_ms is not None:
                config = dataclasses.replace(config, faucet_cooldown_ms=faucet_cooldown_ms)
            config.save(data_dir)
        else:
            if (config.network_id, config.groups) != (network_id, groups):
                raise ValueError(
                    f"{data_dir} holds a devnet with network id {config.network_id} and "
                    f"{config.groups} groups, not {network_id} and {groups}"
                )
            if faucet_cooldown_ms is not None:
                config = dataclasses.replace(config, faucet_cooldown_ms=faucet_cooldown_ms)
        chain = Chain(config)
        log = BlockLog(data_dir)
        try:
            for stored in log.blocks():
                pending = [
                    PendingTx(t.tx_id, t.raw, t.signature, decode_raw(t.raw)) for t in stored.txs
                ]
                prepared = chain.prepare_block(pending, stored.timestamp, mode=Mode.REPLAY)
                block = prepared.block
                if (block.height, block.hash) != (stored.height, stored.hash) or [
                    a.script_ok for a in prepared.applied
                ] != [t.script_ok for t in stored.txs]:
                    raise DevnetStateError(f"block {stored.height} of the log does not replay")
                chain.commit_block(prepared)
        except BaseException:
            log.close()
            raise
        return cls(config, chain, log, automine=automine, clock_ms=clock)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._log.close()

    def __enter__(self) -> DevnetNode:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check(self) -> None:
        if self._closed:
            raise NodeError(503, "The devnet node is closed")
        if self._broken is not None:
            raise NodeError(500, f"The devnet node must be reopened: {self._broken}")

    @property
    def config(self) -> DevnetConfig:
        """Network, contracts, operator and faucet (its private keys are devnet test keys)."""
        return self._config

    @property
    def automine(self) -> bool:
        return self._automine

    # -- blocks --------------------------------------------------------------------------------

    def _seal(self, prepared: PreparedBlock) -> None:
        block = prepared.block
        stored = [StoredTx(a.tx_id, a.raw, a.signature, a.script_ok) for a in prepared.applied]
        try:
            self._log.append(block.height, block.hash, block.parent, block.timestamp, stored)
        except Exception as e:
            # The contracts may already have run on the live state: only a replay recovers.
            self._broken = f"writing block {block.height} failed: {e}"
            raise NodeError(500, self._broken) from e
        self._chain.commit_block(prepared)

    def mine(self) -> int:
        """Mine the mempool into one block (interval mode); returns how many txs it holds."""
        with self._lock:
            self._check()
            chain = self._chain
            pending = chain.pending_txs()
            if not pending:
                return 0
            timestamp = chain.next_timestamp(self._clock())
            prepared = chain.prepare_block(pending, timestamp, mode=Mode.MINE)
            self._seal(prepared)
            chain.clear_mempool()
            return len(prepared.applied)

    # -- infos ---------------------------------------------------------------------------------

    def node_info(self) -> dict[str, object]:
        return {
            "buildInfo": {"releaseVersion": RELEASE_VERSION, "commit": "predmarket-devnet"},
            "upnp": False,
        }

    def version(self) -> dict[str, object]:
        return {"version": RELEASE_VERSION}

    def chain_params(self) -> dict[str, object]:
        return {
            "networkId": self._config.network_id,
            "numZerosAtLeastInHash": 0,
            "groupNumPerBroker": self._config.groups,
            "groups": self._config.groups,
        }

    def self_clique(self, *, host: str = "127.0.0.1", rest_port: int = 22973) -> dict[str, object]:
        clique_id = b"\x02" + blake2b256(self._chain.blocks[0].hash)
        return {
            "cliqueId": clique_id.hex(),
            "nodes": [
                {
                    "address": host,
                    "restPort": rest_port,
                    "wsPort": rest_port + 1,
                    "minerApiPort": rest_port + 2,
                }
            ],
            "selfReady": True,
            "synced": True,
        }

    def tip(self) -> dict[str, object]:
        """The last block (a devnet read)."""
        with self._lock:
            self._check()
            block = self._chain.tip
            return {
                "height": block.height,
                "hash": block.hash.hex(),
                "timestamp": block.timestamp,
                "txIds": [t.hex() for t in block.tx_ids],
            }

    # -- addresses -----------------------------------------------------------------------------

    def balance(self, address: str, *, mempool: bool = False) -> dict[str, object]:
        lockup = _parse_address(address)
        with self._lock:
            self._check()
            chain = self._chain
            if isinstance(lockup, P2C):
                record = chain.base.contract(lockup.contract_id)
                alph = record.alph if record else 0
                tokens = dict(record.tokens) if record else {}
                doc: dict[str, object] = {
                    "balance": str(alph),
                    "balanceHint": _alph_hint(alph),
                    "lockedBalance": "0",
                    "lockedBalanceHint": _alph_hint(0),
                }
                if tokens:
                    doc["tokenBalances"] = _tokens_json(sorted(tokens.items()))
                doc["utxoNum"] = 1 if record else 0
                return doc
            now = chain.next_timestamp(self._clock())
            utxos = chain.view(mempool=mempool).utxos_of(encode_lockup(lockup))
            total = locked = 0
            token_totals: dict[bytes, int] = {}
            locked_tokens: dict[bytes, int] = {}
            for utxo in utxos:
                out = utxo.output
                is_locked = out.lock_time > now
                total += out.amount
                if is_locked:
                    locked += out.amount
                for token in out.tokens:
                    token_totals[token.id] = token_totals.get(token.id, 0) + token.amount
                    if is_locked:
                        locked_tokens[token.id] = locked_tokens.get(token.id, 0) + token.amount
            doc = {
                "balance": str(total),
                "balanceHint": _alph_hint(total),
                "lockedBalance": str(locked),
                "lockedBalanceHint": _alph_hint(locked),
            }
            if token_totals:
                doc["tokenBalances"] = _tokens_json(sorted(token_totals.items()))
            if locked_tokens:
                doc["lockedTokenBalances"] = _tokens_json(sorted(locked_tokens.items()))
            doc["utxoNum"] = len(utxos)
            return doc

    def utxos(self, address: str) -> dict[str, object]:
        lockup = _parse_address(address)
        with self._lock:
            self._check()
            if isinstance(lockup, P2C):
                return {"utxos": []}
            utxos = self._chain.base.utxos_of(encode_lockup(lockup))
            return {
                "utxos": [
                    {
                        "ref": {"hint": u.hint, "key": u.key.hex()},
                        "amount": str(u.output.amount),
                        "tokens": _tokens_json(u.output.tokens),
                        "lockTime": u.output.lock_time,
                        "additionalData": u.output.additional_data.hex(),
                    }
                    for u in utxos
                ]
            }

    # -- building ------------------------------------------------------------------------------

    def _signer(
        self, public_key: bytes, key_type: str, group: int | None
    ) -> tuple[LockupScript, UnlockScript]:
        try:
            validate_public_key(public_key)
        except AlephiumError as e:
            raise bad_request(f"Invalid public key: {e}") from None
        groups = self._config.groups
        if group is not None and not 0 <= group < groups:
            raise bad_request(f"Invalid group {group}: expected 0..{groups - 1}")
        if key_type == "default":
            lockup: LockupScript = P2PKH(blake2b256(public_key))
            own = group_of(lockup, groups)
            if group is not None and group != own:
                raise bad_request(f"The public key is in group {own}, not {group}")
            return lockup, P2PKHUnlock(public_key)
        if key_type == "gl-secp256k1":
            chosen = public_key[-1] % groups if group is None else group
            return P2PK(PublicKeyLike(KeyKind.SECP256K1, public_key), chosen), P2PK_UNLOCK
        raise bad_request(f"Unsupported public key type: {key_type}")

    def _gas_price(self, gas_price: int | None) -> int:
        return MIN_GAS_PRICE if gas_price is None else _check_amount(gas_price, "gas price")

    def _build_json(self, built_tx: Built, applied: Applied | None) -> dict[str, object]:
        from_group, to_group = self._chain.group_of_tx(built_tx.unsigned)
        doc: dict[str, object] = {
            "unsignedTx": built_tx.raw.hex(),
            "gasAmount": built_tx.unsigned.gas_amount,
            "gasPrice": str(built_tx.unsigned.gas_price),
            "txId": built_tx.tx_id.hex(),
            "fromGroup": from_group,
            "toGroup": to_group,
        }
        if applied is not None:
            doc["simulationResult"] = {
                "contractInputs": [_asset_state_json(s) for s in applied.contract_inputs],
                "generatedOutputs": [_asset_state_json(s) for s in applied.contract_outputs]
                + [_output_asset_json(o) for o in applied.generated],
            }
        return doc

    def _destination_outputs(self, destinations: Sequence[Destination]) -> list[AssetOutput]:
        if not destinations:
            raise bad_request("Invalid destinations: at least one is needed")
        outputs: list[AssetOutput] = []
        for address, alph, tokens, lock_time, message in destinations:
            lockup = _parse_address(address)
            if isinstance(lockup, P2C):
                raise bad_request(f"Invalid destination {address}: cannot send to a contract")
            if isinstance(lockup, P2PK) and lockup.group >= self._config.groups:
                raise bad_request(f"Invalid destination {address}: group out of range")
            _check_amount(alph, "attoAlphAmount")
            lock = _check_amount(lock_time or 0, "lockTime")
            if lock >= 1 << 64:
                raise bad_request(f"Invalid lockTime {lock}")
            if len(message) > MAX_OUTPUT_DATA_SIZE:
                raise bad_request(f"Invalid message: at most {MAX_OUTPUT_DATA_SIZE} bytes")
            token_map = _tokens_arg(tokens, "destination tokens")
            if not token_map:
                if alph < DUST_AMOUNT:
                    raise bad_request(
                        f"Invalid attoAlphAmount {alph}: below the dust amount {DUST_AMOUNT}"
                    )
                outputs.append(AssetOutput(alph, lockup, lock, (), message))
                continue
            # Tokens travel one per output with exactly the dust amount; omitted ALPH means
            # just that dust (the node's rule since Rhone), any more ALPH gets its own output.
            dust = DUST_AMOUNT * len(token_map)
            if alph == 0:
                alph = dust
            rest = alph - dust
            if rest < 0 or 0 < rest < DUST_AMOUNT:
                raise bad_request(
                    f"Invalid attoAlphAmount {alph}: {len(token_map)} token outputs need "
                    f"{dust} attoALPH of dust, and any rest at least {DUST_AMOUNT}"
                )
            for token_id, amount in token_map.items():
                token = Token(token_id, amount)
                outputs.append(AssetOutput(DUST_AMOUNT, lockup, lock, (token,), message))
            if rest:
                outputs.append(AssetOutput(rest, lockup, lock, (), message))
        return outputs

    def build_transfer(
        self,
        *,
        from_public_key: bytes,
        from_public_key_type: str = "default",
        destinations: Sequence[
            Destination | tuple[str, int, Sequence[tuple[bytes, int]], int | None, bytes]
        ],
        gas_amount: int | None = None,
        gas_price: int | None = None,
        group: int | None = None,
    ) -> dict[str, object]:
        """``POST /transactions/build``: ``{unsignedTx, gasAmount, gasPrice, txId, fromGroup,
        toGroup}``."""
        dests = [Destination(*d) for d in destinations]
        with self._lock:
            self._check()
            signer, unlock = self._signer(from_public_key, from_public_key_type, group)
            outputs = self._destination_outputs(dests)
            built = self._chain.build(
                signer=signer,
                first_unlock=unlock,
                outputs=outputs,
                script=None,
                approve_alph=0,
                approve_tokens={},
                gas_amount=gas_amount,
                gas_price=self._gas_price(gas_price),
                multiplier_pct=100,
                now=self._clock(),
            )
            return self._build_json(built, None)

    def build_execute_script(
        self,
        *,
        from_public_key: bytes,
        from_public_key_type: str = "default",
        bytecode: bytes,
        atto_alph_amount: int | None = None,
        tokens: Sequence[tuple[bytes, int]] = (),
        gas_amount: int | None = None,
        gas_price: int | None = None,
        group: int | None = None,
        gas_estimation_multiplier: float | None = None,
    ) -> dict[str, object]:
        """``POST /contracts/unsigned-tx/execute-script``: the built transaction and its
        ``simulationResult {contractInputs, generatedOutputs}``."""
        try:
            script: TxScript = decode_script(bytecode)
        except AlephiumError as e:
            raise bad_request(f"Invalid bytecode: {e}") from None
        multiplier_pct = 100
        if gas_estimation_multiplier is not None:
            if gas_amount is not None:
                raise bad_request(
                    "Parameters `gasAmount` and `gasEstimationMultiplier` cannot be "
                    "specified simultaneously"
                )
            pct = round(gas_estimation_multiplier * 100)
            if not 100 <= pct <= 200 or abs(gas_estimation_multiplier * 100 - pct) > 1e-6:
                raise bad_request(
                    "Invalid gasEstimationMultiplier: between 1.0 and 2.0, at most 2 decimals"
                )
            multiplier_pct = pct
        approve_alph = _check_amount(atto_alph_amount or 0, "attoAlphAmount")
        approve_tokens = _tokens_arg(tokens, "tokens")
        with self._lock:
            self._check()
            signer, unlock = self._signer(from_public_key, from_public_key_type, group)
            built = self._chain.build(
                signer=signer,
                first_unlock=unlock,
                outputs=[],
                script=script,
                approve_alph=approve_alph,
                approve_tokens=approve_tokens,
                gas_amount=gas_amount,
                gas_price=self._gas_price(gas_price),
                multiplier_pct=multiplier_pct,
                now=self._clock(),
            )
            return self._build_json(built, built.simulation)

    def decode_unsigned_tx(self, unsigned_tx: bytes) -> dict[str, object]:
        """``POST /transactions/decode-unsigned-tx``."""
        tx = decode_raw(unsigned_tx)
        if not tx.inputs:
            raise bad_request("Failed in decoding unsigned tx: it has no inputs")
        try:
            api = unsigned_tx_to_api_json(tx, groups=self._config.groups)
        except AlephiumError as e:
            raise bad_request(f"Failed in decoding unsigned tx: {e}") from None
        from_group, to_group = self._chain.group_of_tx(tx)
        return {"fromGroup": from_group, "toGroup": to_group, "unsignedTx": api}

    # -- submitting ----------------------------------------------------------------------------

    def _submit(self, raw: bytes, signature: str) -> dict[str, object]:
        chain = self._chain
        unsigned = decode_raw(raw)
        tx_id = blake2b256(raw)
        now = self._clock()
        if self._automine:
            chain.check_new(tx_id)
            pending = PendingTx(tx_id, raw, signature, unsigned)
            prepared = chain.prepare_block([pending], chain.next_timestamp(now), mode=Mode.ADMIT)
            self._seal(prepared)
        else:
            chain.admit(raw, signature, now)
        from_group, to_group = chain.group_of_tx(unsigned)
        return {"txId": tx_id.hex(), "fromGroup": from_group, "toGroup": to_group}

    def submit(self, unsigned_tx: bytes, signature: str) -> dict[str, object]:
        """``POST /transactions/submit``: ``{txId, fromGroup, toGroup}``. With automine the
        transaction is mined and persisted before this returns."""
        with self._lock:
            self._check()
            return self._submit(unsigned_tx, signature)

    def tx_status(self, tx_id: bytes) -> dict[str, object]:
        """``GET /transactions/status``: Confirmed, MemPooled or TxNotFound."""
        with self._lock:
            self._check()
            chain = self._chain
            mined = chain.txs.get(tx_id)
            if mined is not None:
                confirmations = chain.confirmations(mined.block_height)
                return {
                    "type": "Confirmed",
                    "blockHash": chain.blocks[mined.block_height].hash.hex(),
                    "txIndex": mined.tx_index,
                    "chainConfirmations": confirmations,
                    "fromGroupConfirmations": confirmations,
                    "toGroupConfirmations": confirmations,
                }
            if tx_id in chain.mempool:
                return {"type": "MemPooled"}
            return {"type": "TxNotFound"}

    def tx_details(self, tx_id: bytes) -> dict[str, object]:
        """A mined transaction with its execution result (a devnet extra)."""
        with self._lock:
            self._check()
            chain = self._chain
            mined = chain.txs.get(tx_id)
            if mined is None:
                raise not_found(f"Transaction {tx_id.hex()} not found")
            block = chain.blocks[mined.block_height]
            applied = mined.applied
            doc: dict[str, object] = {
                "txId": tx_id.hex(),
                "blockHash": block.hash.hex(),
                "blockHeight": block.height,
                "txIndex": mined.tx_index,
                "timestamp": block.timestamp,
                "chainConfirmations": chain.confirmations(block.height),
                "scriptExecutionOk": True if applied is None else applied.script_ok,
            }
            first_generated = 0
            if applied is not None:
                tx = applied.unsigned
                first_generated = len(tx.fixed_outputs)
                doc["failure"] = applied.failure
                doc["signer"] = format_address(applied.signer)
                doc["gasAmount"] = tx.gas_amount
                doc["gasPrice"] = str(tx.gas_price)
                doc["gasFee"] = str(applied.fee)
                doc["unsignedTx"] = unsigned_tx_to_api_json(tx, groups=self._config.groups)
                doc["contractInputs"] = [_asset_state_json(s) for s in applied.contract_inputs]
                doc["contractOutputs"] = [_asset_state_json(s) for s in applied.contract_outputs]
                doc["events"] = [
                    {
                        "contractAddress": contract_address(e.contract_id),
                        "eventIndex": e.index,
                        "fields": [val_to_json(v) for v in e.fields],
                    }
                    for e in applied.events
                ]
            else:
                first_generated = 2  # the genesis contracts are outputs 0 and 1
            doc["generatedOutputs"] = [
                _output_json(out, tx_id, first_generated + i)
                for i, out in enumerate(mined.generated)
            ]
            return doc

    # -- contracts and events ------------------------------------------------------------------

    def events(self, contract_address: str, start: int, limit: int = 100) -> dict[str, object]:
        """``GET /events/contract/{address}``: ``start``/``limit`` count (contract, block)
        batches, as the node's event counter does; ``nextStart`` is where to poll next."""
        cid = _contract_id(contract_address)
        if start < 0:
            raise bad_request(f"Invalid start {start}")
        if limit < 1:
            raise bad_request(f"Invalid limit {limit}")
        limit = min(limit, MAX_EVENTS_LIMIT)
        with self._lock:
            self._check()
            batches = self._chain.events.get(cid)
            if not batches:
                raise not_found(f"Contract events of {contract_address} not found")
            selected = batches[start : start + limit]
            address = format_address(P2C(cid))  # canonical form (the parameter shadows)
            return {
                "events": [
                    {
                        "blockHash": batch.block_hash.hex(),
                        "txId": tx_id.hex(),
                        "timestamp": batch.timestamp,
                        "contractAddress": address,
                        "eventIndex": event.index,
                        "fields": [val_to_json(v) for v in event.fields],
                    }
                    for batch in selected
                    for tx_id, event in batch.entries
                ],
                "nextStart": start + len(selected),
            }

    def event_count(self, contract_address: str) -> int:
        """``GET /events/contract/{address}/current-count``."""
        cid = _contract_id(contract_address)
        with self._lock:
            self._check()
            batches = self._chain.events.get(cid)
            if not batches:
                raise not_found(f"Current events count for contract {contract_address} not found")
            return len(batches)

    def _native(
        self, address: str, *, mempool: bool = False
    ) -> tuple[bytes, NativeContract, int, dict[bytes, int]]:
        cid = _contract_id(address)
        record = self._chain.view(mempool=mempool).contract(cid)
        if record is None or not isinstance(record.native, NativeContract):
            raise not_found(f"Contract {address} not found")
        return cid, record.native, record.alph, record.tokens

    def contract_state(self, address: str) -> dict[str, object]:
        """``GET /contracts/{address}/state``."""
        with self._lock:
            self._check()
            cid, native, alph, tokens = self._native(address)
            return {
                "address": contract_address(cid),
                "bytecode": native.bytecode().hex(),
                "codeHash": native.code_hash().hex(),
                "initialStateHash": native.initial_state_hash.hex(),
                "immFields": [val_to_json(v) for v in native.imm_fields()],
                "mutFields": [val_to_json(v) for v in native.mut_fields()],
                "asset": {
                    "attoAlphAmount": str(alph),
                    "tokens": _tokens_json(sorted(tokens.items())),
                },
            }

    def market_orders(self, address: str, *, mempool: bool = False) -> list[dict[str, object]]:
        """The resting orders of a market contract, in id order (a devnet read); with
        ``mempool``, as the pending transactions leave them."""
        with self._lock:
            self._check()
            _, native, _, _ = self._native(address, mempool=mempool)
            if not isinstance(native, MarketContract):
                raise bad_request(f"{address} is not a market")
            return native.orders()

    def is_block_in_main_chain(self, block_hash: bytes) -> bool:
        """``GET /blockflow/is-block-in-main-chain``: every known block is (one chain)."""
        with self._lock:
            self._check()
            if block_hash not in self._chain.blocks_by_hash:
                raise not_found(f"Block {block_hash.hex()} not found")
            return True

    def ledger_totals(self) -> dict[str, object]:
        """ALPH and token totals of the confirmed state: genesis ALPH = wallets + contracts +
        gas fees (a devnet audit read)."""
        with self._lock:
            self._check()
            return self._chain.ledger_totals()

    def abi(self) -> dict[str, object]:
        return abi_document()

    # -- faucet --------------------------------------------------------------------------------

    def faucet(self, address: str) -> dict[str, object]:
        """``POST /devnet/faucet``: a signed transaction from the faucet key sending test ALPH
        and minting collateral to ``address``; at most once per cooldown per address."""
        lockup = _parse_address(address)
        if isinstance(lockup, P2C):
            raise bad_request("The faucet does not fund contracts")
        key = format_address(lockup)
        config = self._config
        with self._lock:
            self._check()
            now = self._clock()
            last = self._faucet_last.get(key)
            if last is not None and now - last < config.faucet_cooldown_ms:
                wait_s = -(-(config.faucet_cooldown_ms - (now - last)) // 1000)
                raise NodeError(429, f"Too many faucet requests for {key}: retry in {wait_s} s")
            script = call_script(
                COLLATERAL_TOKEN,
                "mint",
                config.collateral_token_id,
                [lockup, config.faucet_collateral_amount],
                alph=DUST_AMOUNT,
            )
            built = self._chain.build(
                signer=config.faucet_lockup,
                first_unlock=P2PKHUnlock(config.faucet_public_key),
                outputs=[AssetOutput(config.faucet_alph_amount, lockup)],
                script=script,
                approve_alph=DUST_AMOUNT,
                approve_tokens={},
                gas_amount=None,
                gas_price=MIN_GAS_PRICE,
                multiplier_pct=100,
                now=now,
            )
            result = self._submit(built.raw, sign_tx_id(config.faucet_private_key, built.tx_id))
            self._faucet_last[key] = now
            return {
                "txId": result["txId"],
                "attoAlphAmount": str(config.faucet_alph_amount),
                "tokens": _tokens_json(
                    [(config.collateral_token_id, config.faucet_collateral_amount)]
                ),
            }
