"""Typed answers of the node's REST API (Alephium full node v4.6.0; chain-formats.md §4).

Field names are snake_case in Python and the node's camelCase on the wire. Amounts arrive as
decimal strings and become ints; hex stays lowercase text; contract fields and event fields stay
the node's JSON ``Val``s (``{"type": "U256", "value": "5"}``), which
``predmarket.devnet.abi.decode_event`` names by the ABI. Unknown fields are ignored, so a newer
node that adds fields does not break the client.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

U256_MAX: Final = 2**256 - 1

#: A node JSON ``Val``: ``{"type": "U256" | "I256" | "Bool" | "ByteVec" | "Address" | "Array",
#: "value": ...}``.
NodeVal = dict[str, JsonValue]


def _u256(value: object) -> int:
    # The node writes uint256 as decimal strings; plain JSON integers are accepted too.
    if isinstance(value, bool):
        raise ValueError("expected a decimal string")
    if isinstance(value, str) and value.isascii() and value.isdigit():
        number = int(value)
    elif isinstance(value, int):
        number = value
    else:
        raise ValueError("expected a decimal string of a non-negative integer")
    if not 0 <= number <= U256_MAX:
        raise ValueError("not a uint256")
    return number


U256 = Annotated[int, BeforeValidator(_u256)]


class NodeModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore"
    )


class Token(NodeModel):
    id: str
    amount: U256


# -- infos ---------------------------------------------------------------------------------------


class BuildInfo(NodeModel):
    release_version: str
    commit: str


class NodeInfo(NodeModel):
    build_info: BuildInfo
    upnp: bool = False
    external_address: dict[str, JsonValue] | None = None


class ChainParams(NodeModel):
    network_id: int
    num_zeros_at_least_in_hash: int
    group_num_per_broker: int
    groups: int


class PeerAddress(NodeModel):
    address: str
    rest_port: int
    ws_port: int
    miner_api_port: int


class SelfClique(NodeModel):
    clique_id: str
    nodes: tuple[PeerAddress, ...]
    self_ready: bool
    synced: bool


# -- addresses -----------------------------------------------------------------------------------


class Balance(NodeModel):
    balance: U256
    balance_hint: str
    locked_balance: U256
    locked_balance_hint: str
    token_balances: tuple[Token, ...] = ()
    locked_token_balances: tuple[Token, ...] = ()
    utxo_num: int

    def token(self, token_id: str) -> int:
        """The balance of one token (0 when the address holds none)."""
        return sum(t.amount for t in self.token_balances if t.id == token_id)


class OutputRef(NodeModel):
    hint: int
    key: str


class Utxo(NodeModel):
    ref: OutputRef
    amount: U256
    tokens: tuple[Token, ...] = ()
    lock_time: int | None = None
    additional_data: str | None = None


# -- building and submitting ---------------------------------------------------------------------


class Destination(NodeModel):
    """One output of ``build_transfer``."""

    address: str
    atto_alph_amount: U256 | None = None
    tokens: tuple[Token, ...] = ()
    lock_time: int | None = None
    message: str | None = None


class BuildResult(NodeModel):
    """What every build returns: the unsigned transaction (hex) and its id."""

    unsigned_tx: str
    gas_amount: int
    gas_price: U256
    tx_id: str
    from_group: int
    to_group: int


class BuildTransferResult(BuildResult):
    #: Groupless senders may need these submitted first, each signed separately.
    funding_txs: tuple[BuildResult, ...] = ()


class AddressAssetState(NodeModel):
    address: str
    atto_alph_amount: U256
    tokens: tuple[Token, ...] = ()


class SimulationResult(NodeModel):
    contract_inputs: tuple[AddressAssetState, ...] = ()
    generated_outputs: tuple[AddressAssetState, ...] = ()


class BuildScriptResult(BuildResult):
    simulation_result: SimulationResult | None = None
    funding_txs: tuple[BuildResult, ...] = ()


class DecodedInput(NodeModel):
    output_ref: OutputRef
    unlock_script: str


class DecodedOutput(NodeModel):
    hint: int
    key: str
    atto_alph_amount: U256
    address: str
    tokens: tuple[Token, ...] = ()
    lock_time: int = 0
    message: str = ""


class UnsignedTxJson(NodeModel):
    tx_id: str
    version: int
    network_id: int
    script_opt: str | None = None
    gas_amount: int
    gas_price: U256
    inputs: tuple[DecodedInput, ...]
    fixed_outputs: tuple[DecodedOutput, ...]


class DecodedUnsignedTx(NodeModel):
    from_group: int
    to_group: int
    unsigned_tx: UnsignedTxJson


class SubmitResult(NodeModel):
    tx_id: str
    from_group: int
    to_group: int


TxStatusType = Literal["Confirmed", "MemPooled", "TxNotFound", "Conflicted"]


class TxStatus(NodeModel):
    """``Confirmed``/``Conflicted`` carry the block fields; ``MemPooled``/``TxNotFound`` none."""

    type: TxStatusType
    block_hash: str | None = None
    tx_index: int | None = None
    chain_confirmations: int | None = None
    from_group_confirmations: int | None = None
    to_group_confirmations: int | None = None

    @property
    def confirmed(self) -> bool:
        return self.type == "Confirmed"


# -- contracts and events ------------------------------------------------------------------------


class AssetState(NodeModel):
    atto_alph_amount: U256
    tokens: tuple[Token, ...] = ()


class ContractState(NodeModel):
    address: str
    bytecode: str
    code_hash: str
    initial_state_hash: str | None = None
    imm_fields: tuple[NodeVal, ...]
    mut_fields: tuple[NodeVal, ...]
    asset: AssetState


class ContractEvent(NodeModel):
    block_hash: str
    tx_id: str
    timestamp: int
    """Block time, milliseconds since the epoch."""
    contract_address: str
    event_index: int
    fields: tuple[NodeVal, ...]


class EventBatch(NodeModel):
    """The events one block logged for one contract: the unit the node's counter counts."""

    counter: int
    block_hash: str
    timestamp: int
    events: tuple[ContractEvent, ...]


class EventPage(NodeModel):
    """One page of ``GET /events/contract/{address}``: the batches ``start`` ..
    ``next_start - 1``, flattened. ``next_start == start`` means nothing new yet."""

    start: int
    events: tuple[ContractEvent, ...]
    next_start: int

    def batches(self) -> tuple[EventBatch, ...]:
        """The events grouped by batch, each with its counter.

        The node's counter advances once per (contract, block) log batch, and a page lists the
        batches in counter order, so consecutive events of one block are one batch and the
        ``i``-th run of a block hash has counter ``start + i``. ``(counter, position in the
        batch)`` is then a stable key of every event (the read model's dedupe key).
        """
        runs: list[list[ContractEvent]] = []
        for event in self.events:
            if runs and runs[-1][0].block_hash == event.block_hash:
                runs[-1].append(event)
            else:
                runs.append([event])
        if len(runs) != self.next_start - self.start:
            raise ValueError(
                f"event page {self.start}..{self.next_start} holds {len(runs)} block batches, "
                f"expected {self.next_start - self.start}"
            )
        return tuple(
            EventBatch(
                counter=self.start + i,
                block_hash=run[0].block_hash,
                timestamp=run[0].timestamp,
                events=tuple(run),
            )
            for i, run in enumerate(runs)
        )
