"""The protocol's contract ABI, as data: method indexes, argument and event layouts, error codes.

One table serves the devnet (which dispatches a decoded script with it), the service (which
publishes :func:`abi_document` in ``GET /v1/protocol/config`` and builds scripts from it) and the
tests. ``docs/chain-abi.md`` documents the same table in prose; a test keeps the two in step.

On chain every enum is a ``U256``: side 0 buy / 1 sell; outcome 0 yes / 1 no; resolution
0 yes / 1 no / 2 invalid; trade kind 0 normal / 1 mint / 2 merge; cancel reason 0 owner /
1 self-trade / 2 resolved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from predmarket.alephium.address import format_address, parse_address
from predmarket.alephium.constants import (
    DUST_AMOUNT,
    MAP_ENTRY_DEPOSIT,
    MINIMAL_CONTRACT_DEPOSIT,
)
from predmarket.alephium.lockup import LockupScript
from predmarket.alephium.script import (
    Approvals,
    TxScript,
    Val,
    ValAddress,
    ValBool,
    ValByteVec,
    ValU256,
    build_contract_call,
    val_from_json,
)
from predmarket.exchange import (
    CancelReason,
    InvalidFill,
    InvalidPrice,
    Outcome,
    Resolution,
    Side,
    TradeKind,
)

ABI_VERSION: Final = 1

ValType = Literal["U256", "ByteVec", "Bool", "Address"]

# -- amounts -----------------------------------------------------------------------------------

#: Refundable storage deposit of an order: two map-entry deposits (the order and its owner's
#: index entry in a Ralph port). The caller approves it with ``placeOrder``; it goes back to the
#: owner when the order leaves the book (filled, cancelled, or cancelled at resolution).
ORDER_DEPOSIT: Final = 2 * MAP_ENTRY_DEPOSIT
#: ALPH ``createMarket`` takes: the storage deposit of the market and of its two share tokens.
MARKET_CREATION_DEPOSIT: Final = 3 * MINIMAL_CONTRACT_DEPOSIT
#: ALPH a ``mint`` or ``claim`` caller approves for the token output it generates.
TOKEN_OUTPUT_DUST: Final = DUST_AMOUNT
COLLATERAL_DECIMALS: Final = 18
SHARE_DECIMALS: Final = 18
MAX_QUESTION_BYTES: Final = 1024
MAX_CATEGORY_BYTES: Final = 64
MAX_METADATA_BYTES: Final = 4096

# -- enums -------------------------------------------------------------------------------------

SIDE_CODES: Final[Mapping[Side, int]] = {Side.BUY: 0, Side.SELL: 1}
OUTCOME_CODES: Final[Mapping[Outcome, int]] = {Outcome.YES: 0, Outcome.NO: 1}
RESOLUTION_CODES: Final[Mapping[Resolution, int]] = {
    Resolution.YES: 0,
    Resolution.NO: 1,
    Resolution.INVALID: 2,
}
TRADE_KIND_CODES: Final[Mapping[TradeKind, int]] = {
    TradeKind.NORMAL: 0,
    TradeKind.MINT: 1,
    TradeKind.MERGE: 2,
}
CANCEL_REASON_CODES: Final[Mapping[CancelReason, int]] = {
    CancelReason.OWNER: 0,
    CancelReason.SELF_TRADE: 1,
    CancelReason.RESOLVED: 2,
}
SIDES_BY_CODE: Final = {v: k for k, v in SIDE_CODES.items()}
OUTCOMES_BY_CODE: Final = {v: k for k, v in OUTCOME_CODES.items()}
RESOLUTIONS_BY_CODE: Final = {v: k for k, v in RESOLUTION_CODES.items()}
TRADE_KINDS_BY_CODE: Final = {v: k for k, v in TRADE_KIND_CODES.items()}
CANCEL_REASONS_BY_CODE: Final = {v: k for k, v in CANCEL_REASON_CODES.items()}

# -- error codes -------------------------------------------------------------------------------


def _chain_code(error: type[InvalidFill] | type[InvalidPrice]) -> int:
    code = error.chain_code
    assert code is not None
    return code


#: Codes of ``AssertionFailedWithErrorCode(<contract>, <code>)``; one table for all contracts.
#: 12 and 13 are the published order codes of spec 7.3, taken from the exchange's errors.
ERROR_CODES: Final[Mapping[str, int]] = {
    "NOT_OPERATOR": 1,
    "NOT_MINTER": 2,
    "INSUFFICIENT_APPROVAL": 3,
    "INVALID_ARGUMENT": 4,
    "MARKET_CLOSED": 5,
    "UNKNOWN_ORDER": 6,
    "NOT_ORDER_OWNER": 7,
    "ALREADY_RESOLVED": 8,
    "NOT_RESOLVED": 9,
    "INSUFFICIENT_SHARES": 10,
    "UNEXPECTED_APPROVAL": 11,
    "INVALID_FILL": _chain_code(InvalidFill),
    "INVALID_PRICE": _chain_code(InvalidPrice),
    "INVALID_CLOSE_TIME": 14,
}
ERROR_NAMES: Final[Mapping[int, str]] = {code: name for name, code in ERROR_CODES.items()}

_ERROR_DOCS: Final[Mapping[str, str]] = {
    "NOT_OPERATOR": "only the operator may call this method",
    "NOT_MINTER": "only the operator or the faucet may mint collateral",
    "INSUFFICIENT_APPROVAL": "the caller approved less than the method takes",
    "INVALID_ARGUMENT": "an argument is out of range (unknown enum value, empty or too long text)",
    "MARKET_CLOSED": "the market is past its close time or resolved: no new orders",
    "UNKNOWN_ORDER": "no resting order has this id (never placed, filled or cancelled)",
    "NOT_ORDER_OWNER": "only the owner of an order may cancel it",
    "ALREADY_RESOLVED": "the market is already resolved",
    "NOT_RESOLVED": "claims open once the market is resolved",
    "INSUFFICIENT_SHARES": "a sell offers more shares than exist outside the book",
    "UNEXPECTED_APPROVAL": "the caller approved a token the method does not take",
    "INVALID_FILL": "a quantity that is not a positive multiple of 10000000 base units",
    "INVALID_PRICE": "a price tick outside 1..999",
    "INVALID_CLOSE_TIME": "the close time is not in the future",
}

# -- the table ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Field:
    """A named, typed argument, event field or contract field."""

    name: str
    type: ValType
    doc: str = ""


@dataclass(frozen=True, slots=True)
class MethodAbi:
    index: int
    name: str
    args: tuple[Field, ...]
    #: What the caller approves with the call (prose; the amounts are in ``docs/chain-abi.md``).
    approvals: str
    #: Gas the method's execution is charged for; builds add the transaction's own gas to it.
    gas: int
    #: Who may call: ``anyone``, ``operator`` or ``minters`` (operator and faucet).
    access: str
    doc: str


@dataclass(frozen=True, slots=True)
class EventAbi:
    index: int
    name: str
    fields: tuple[Field, ...]
    doc: str


@dataclass(frozen=True, slots=True)
class ContractAbi:
    name: str
    doc: str
    methods: tuple[MethodAbi, ...]
    events: tuple[EventAbi, ...]
    imm_fields: tuple[Field, ...]
    mut_fields: tuple[Field, ...]

    def method(self, name_or_index: str | int) -> MethodAbi:
        for m in self.methods:
            if m.name == name_or_index or m.index == name_or_index:
                return m
        raise KeyError(f"{self.name} has no method {name_or_index!r}")

    def event(self, name_or_index: str | int) -> EventAbi:
        for e in self.events:
            if e.name == name_or_index or e.index == name_or_index:
                return e
        raise KeyError(f"{self.name} has no event {name_or_index!r}")


def _f(name: str, type_: ValType, doc: str = "") -> Field:
    return Field(name, type_, doc)


COLLATERAL_TOKEN: Final = ContractAbi(
    name="CollateralToken",
    doc="The collateral token (18 decimals); its token id is its contract id.",
    methods=(
        MethodAbi(
            index=0,
            name="mint",
            args=(_f("to", "Address"), _f("amount", "U256", "base units")),
            approvals=f"{TOKEN_OUTPUT_DUST} attoALPH for the dust of the minted token output",
            gas=30_000,
            access="minters",
            doc="Issue `amount` collateral to `to` (operator and faucet only).",
        ),
    ),
    events=(
        EventAbi(0, "Minted", (_f("to", "Address"), _f("amount", "U256")), "Collateral minted."),
    ),
    imm_fields=(
        _f("symbol", "ByteVec"),
        _f("name", "ByteVec"),
        _f("decimals", "U256"),
        _f("operator", "Address"),
        _f("faucet", "Address"),
    ),
    mut_fields=(_f("totalSupply", "U256"),),
)

MARKET_REGISTRY: Final = ContractAbi(
    name="MarketRegistry",
    doc="Creates markets (operator-only for now) and lists them through MarketCreated events.",
    methods=(
        MethodAbi(
            index=0,
            name="createMarket",
            args=(
                _f("question", "ByteVec", f"UTF-8, 1..{MAX_QUESTION_BYTES} bytes"),
                _f("category", "ByteVec", f"UTF-8, 0..{MAX_CATEGORY_BYTES} bytes"),
                _f("closeTimeMs", "U256", "trading stops at this block time (ms)"),
                _f("metadata", "ByteVec", f"opaque (e.g. UTF-8 JSON), 0..{MAX_METADATA_BYTES}"),
            ),
            approvals=f"{MARKET_CREATION_DEPOSIT} attoALPH: deposits of the market and its tokens",
            gas=150_000,
            access="operator",
            doc="Create a market sub-contract and its YES and NO share-token sub-contracts.",
        ),
    ),
    events=(
        EventAbi(
            0,
            "MarketCreated",
            (
                _f("index", "U256", "0-based market number"),
                _f("market", "Address", "the market contract"),
                _f("yesToken", "ByteVec", "token id of YES shares"),
                _f("noToken", "ByteVec", "token id of NO shares"),
                _f("question", "ByteVec"),
                _f("category", "ByteVec"),
                _f("closeTimeMs", "U256"),
                _f("metadata", "ByteVec"),
                _f("creator", "Address"),
            ),
            "A market was created.",
        ),
    ),
    imm_fields=(_f("operator", "Address"), _f("collateralToken", "ByteVec")),
    mut_fields=(_f("marketCount", "U256"),),
)

MARKET: Final = ContractAbi(
    name="Market",
    doc="One binary market executing predmarket.exchange: linked YES/NO books, settlement.",
    methods=(
        MethodAbi(
            index=0,
            name="placeOrder",
            args=(
                _f("side", "U256", "0 buy, 1 sell"),
                _f("outcome", "U256", "0 yes, 1 no"),
                _f("price", "U256", "tick 1..999"),
                _f("quantity", "U256", "share base units, a multiple of 10000000"),
            ),
            approvals=(
                f"{ORDER_DEPOSIT} attoALPH (the order deposit) and the lock: buy_lock(price, "
                "quantity) collateral for a buy, `quantity` shares of the outcome for a sell"
            ),
            gas=80_000,
            access="anyone",
            doc="Place a limit order: match what crosses it, rest the remainder.",
        ),
        MethodAbi(
            index=1,
            name="cancelOrder",
            args=(_f("orderId", "U256"),),
            approvals="nothing",
            gas=40_000,
            access="anyone",
            doc="Cancel a resting order of the caller; its lock and deposit come back.",
        ),
        MethodAbi(
            index=2,
            name="resolve",
            args=(_f("resolution", "U256", "0 yes, 1 no, 2 invalid"),),
            approvals="nothing",
            gas=200_000,
            access="operator",
            doc="Set the outcome; every resting order is cancelled and refunded.",
        ),
        MethodAbi(
            index=3,
            name="claim",
            args=(),
            approvals=(
                "the YES and/or NO shares to redeem, and "
                f"{TOKEN_OUTPUT_DUST} attoALPH per share token approved"
            ),
            gas=50_000,
            access="anyone",
            doc="Redeem shares after resolution: they are burned and their collateral paid.",
        ),
    ),
    events=(
        EventAbi(
            0,
            "OrderPlaced",
            (
                _f("orderId", "U256"),
                _f("owner", "Address"),
                _f("side", "U256"),
                _f("outcome", "U256"),
                _f("price", "U256"),
                _f("quantity", "U256"),
                _f("remaining", "U256", "what rests after matching (0: filled at once)"),
                _f("deposit", "U256", "ALPH deposit held while the order rests"),
            ),
            "An order was placed; emitted before the trades it caused.",
        ),
        EventAbi(
            1,
            "Trade",
            (
                _f("tradeId", "U256"),
                _f("kind", "U256", "0 normal, 1 mint, 2 merge"),
                _f("makerOrderId", "U256"),
                _f("makerOwner", "Address"),
                _f("makerSide", "U256"),
                _f("makerOutcome", "U256"),
                _f(
                    "price",
                    "U256",
                    "the maker's tick (the taker trades at 1000 - price in a mint or merge)",
                ),
                _f("quantity", "U256"),
                _f("takerOrderId", "U256"),
                _f("takerOwner", "Address"),
                _f("makerFee", "U256"),
                _f("takerFee", "U256"),
            ),
            "A resting (maker) order matched the incoming (taker) order.",
        ),
        EventAbi(
            2,
            "OrderCancelled",
            (
                _f("orderId", "U256"),
                _f("owner", "Address"),
                _f("reason", "U256", "0 owner, 1 self-trade, 2 resolved"),
                _f("quantity", "U256", "the remaining quantity cancelled"),
                _f("refund", "U256", "collateral (buy) or shares (sell) returned"),
                _f("deposit", "U256", "ALPH deposit returned"),
            ),
            "A resting order left the book without filling.",
        ),
        EventAbi(
            3,
            "MarketResolved",
            (_f("resolution", "U256"), _f("cancelledOrders", "U256")),
            "The outcome was set; OrderCancelled events (reason 2) precede it.",
        ),
        EventAbi(
            4,
            "Claimed",
            (
                _f("owner", "Address"),
                _f("yesQuantity", "U256"),
                _f("noQuantity", "U256"),
                _f("payout", "U256", "collateral paid"),
            ),
            "Shares were redeemed after resolution.",
        ),
    ),
    imm_fields=(
        _f("registry", "ByteVec"),
        _f("index", "U256"),
        _f("collateralToken", "ByteVec"),
        _f("yesToken", "ByteVec"),
        _f("noToken", "ByteVec"),
        _f("question", "ByteVec"),
        _f("category", "ByteVec"),
        _f("closeTimeMs", "U256"),
        _f("metadata", "ByteVec"),
        _f("operator", "Address"),
    ),
    mut_fields=(
        _f("resolved", "Bool"),
        _f("resolution", "U256", "meaningful once resolved"),
        _f("nextOrderId", "U256"),
        _f("openOrders", "U256"),
        _f("collateralEscrow", "U256"),
        _f("yesEscrow", "U256"),
        _f("noEscrow", "U256"),
        _f("yesSupply", "U256"),
        _f("noSupply", "U256"),
        _f("feesCollected", "U256"),
        _f("volume", "U256"),
        _f("depositsHeld", "U256"),
    ),
)

SHARE_TOKEN: Final = ContractAbi(
    name="ShareToken",
    doc="A market's YES or NO share token (its token id is its contract id); the market mints "
    "and burns it.",
    methods=(),
    events=(),
    imm_fields=(_f("market", "ByteVec"), _f("outcome", "U256"), _f("decimals", "U256")),
    mut_fields=(_f("totalSupply", "U256"),),
)

CONTRACTS: Final[Mapping[str, ContractAbi]] = {
    c.name: c for c in (COLLATERAL_TOKEN, MARKET_REGISTRY, MARKET, SHARE_TOKEN)
}

# -- values ------------------------------------------------------------------------------------

PyValue = int | bool | bytes | str | LockupScript


def to_val(type_: ValType, value: PyValue) -> Val:
    """A Python value as the ``Val`` of ``type_``: ints, bytes, bools, addresses (str or lockup)."""
    if type_ == "U256":
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"U256 needs an int, got {value!r}")
        return ValU256(value)
    if type_ == "ByteVec":
        if not isinstance(value, bytes):
            raise TypeError(f"ByteVec needs bytes, got {value!r}")
        return ValByteVec(value)
    if type_ == "Bool":
        if not isinstance(value, bool):
            raise TypeError(f"Bool needs a bool, got {value!r}")
        return ValBool(value)
    if isinstance(value, str):
        return ValAddress(parse_address(value))
    if isinstance(value, LockupScript):
        return ValAddress(value)
    raise TypeError(f"Address needs an address string or lockup script, got {value!r}")


def from_val(val: Val) -> int | bool | bytes | str:
    """The Python value of a ``Val``: int, bool, bytes, or the address string."""
    if isinstance(val, ValAddress):
        return format_address(val.value)
    return val.value


def val_type(val: Val) -> str:
    return {
        ValU256: "U256",
        ValByteVec: "ByteVec",
        ValBool: "Bool",
        ValAddress: "Address",
    }.get(type(val), type(val).__name__)


def encode_args(method: MethodAbi, values: Sequence[PyValue]) -> tuple[Val, ...]:
    """The argument ``Val``s of a call to ``method``, in declaration order."""
    if len(values) != len(method.args):
        raise TypeError(f"{method.name} takes {len(method.args)} arguments, got {len(values)}")
    return tuple(to_val(f.type, v) for f, v in zip(method.args, values, strict=True))


def call_script(
    contract: ContractAbi,
    method: str | int,
    contract_id: bytes,
    args: Sequence[PyValue] = (),
    *,
    alph: int = 0,
    tokens: Sequence[tuple[bytes, int]] = (),
) -> TxScript:
    """A TxScript calling ``contract.method`` on ``contract_id``, approving ``alph`` and
    ``tokens`` from the caller (the Ralph compiler's code, via ``build_contract_call``)."""
    m = contract.method(method)
    return build_contract_call(
        contract_id,
        m.index,
        encode_args(m, args),
        caller_approvals=Approvals(alph, tuple(tokens)),
    )


def decode_event(
    contract: ContractAbi, event_index: int, fields: Sequence[Val | Mapping[str, object]]
) -> dict[str, int | bool | bytes | str]:
    """Name the fields of an event (``Val``s or their node JSON): ints, bools, bytes, addresses."""
    event = contract.event(event_index)
    if len(fields) != len(event.fields):
        raise ValueError(f"{event.name} has {len(event.fields)} fields, got {len(fields)}")
    out: dict[str, int | bool | bytes | str] = {}
    for spec, raw in zip(event.fields, fields, strict=True):
        val = raw if isinstance(raw, Val) else val_from_json(raw)
        if val_type(val) != spec.type:
            raise ValueError(f"{event.name}.{spec.name} must be {spec.type}, got {val_type(val)}")
        out[spec.name] = from_val(val)
    return out


# -- the published document --------------------------------------------------------------------


def _fields_json(fields: Sequence[Field]) -> list[dict[str, str]]:
    return [{"name": f.name, "type": f.type, **({"doc": f.doc} if f.doc else {})} for f in fields]


def _contract_json(c: ContractAbi) -> dict[str, object]:
    return {
        "name": c.name,
        "doc": c.doc,
        "methods": [
            {
                "index": m.index,
                "name": m.name,
                "args": _fields_json(m.args),
                "approvals": m.approvals,
                "gas": m.gas,
                "access": m.access,
                "doc": m.doc,
            }
            for m in c.methods
        ],
        "events": [
            {"index": e.index, "name": e.name, "fields": _fields_json(e.fields), "doc": e.doc}
            for e in c.events
        ],
        "immFields": _fields_json(c.imm_fields),
        "mutFields": _fields_json(c.mut_fields),
    }


def abi_document() -> dict[str, object]:
    """The whole ABI as JSON-ready data (amounts as decimal strings)."""
    return {
        "version": ABI_VERSION,
        "enums": {
            "side": {s.value: c for s, c in SIDE_CODES.items()},
            "outcome": {o.value: c for o, c in OUTCOME_CODES.items()},
            "resolution": {r.value: c for r, c in RESOLUTION_CODES.items()},
            "tradeKind": {k.value: c for k, c in TRADE_KIND_CODES.items()},
            "cancelReason": {r.value: c for r, c in CANCEL_REASON_CODES.items()},
        },
        "amounts": {
            "orderDeposit": str(ORDER_DEPOSIT),
            "marketCreationDeposit": str(MARKET_CREATION_DEPOSIT),
            "tokenOutputDust": str(TOKEN_OUTPUT_DUST),
            "collateralDecimals": COLLATERAL_DECIMALS,
            "shareDecimals": SHARE_DECIMALS,
        },
        "errorCodes": [
            {"name": name, "code": code, "doc": _ERROR_DOCS[name]}
            for name, code in sorted(ERROR_CODES.items(), key=lambda kv: kv[1])
        ],
        "revertDetail": "AssertionFailedWithErrorCode(<contractAddress>, <code>)",
        "contracts": [_contract_json(c) for c in CONTRACTS.values()],
    }
