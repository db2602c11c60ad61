"""Order transaction builders: validate, build the call, let the node build the transaction,
check it against the intent, return it unsigned (spec 2.4; docs/tx-builders.md).

The service never signs or submits. A build is a pure function of the request and the
wallet's outputs at that moment: the node's input selection is deterministic, so the same body
against the same outputs gives the same ``unsignedTx`` and ``txId``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.alephium.address import KeyType, address_belongs_to_key, parse_address
from predmarket.alephium.constants import DUST_AMOUNT
from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import P2PK, P2PKH, KeyKind, LockupScript, PublicKeyLike, group_of
from predmarket.alephium.script import ValByteVec, encode_script, val_from_json
from predmarket.devnet import calls
from predmarket.devnet.abi import MARKET_REGISTRY, ORDER_DEPOSIT
from predmarket.exchange import Outcome, Side, buy_lock
from predmarket.kit.errors import InvalidRequest, MarketClosed
from predmarket.node import NodeClient, NodeError, NodeProtocolError
from predmarket.node.models import BuildScriptResult
from predmarket.tx import queries
from predmarket.tx.errors import MarketNotFound, OrderNotFound, from_node_error
from predmarket.tx.schemas import KeyTypeName, TxBuild, TxCancelOrder, TxPlaceOrder, TxToken
from predmarket.tx.verify import ChainFacts, Intent, check_build

#: Dust ``placeOrder`` may take from the caller's approved ALPH for the outputs it generates (the
#: one partly filled maker's proceeds and at most three token outputs of the caller: 0.004 ALPH,
#: plus a margin). Approved on top of the deposit, so a resting order always keeps its full
#: 0.2 ALPH deposit; what is not used goes back in the same transaction (chain-abi.md, "Who pays
#: the dust").
ORDER_DUST_HEADROOM: Final = 5 * DUST_AMOUNT
#: ALPH a placement approves: the refundable order deposit and the dust headroom.
ORDER_APPROVED_ALPH: Final = ORDER_DEPOSIT + ORDER_DUST_HEADROOM

_COLLATERAL_FIELD: Final = [f.name for f in MARKET_REGISTRY.imm_fields].index("collateralToken")


class ChainCache:
    """Immutable chain facts, read from the node once: network id, group count, and each
    registry's collateral token (an immutable field of the registry contract)."""

    def __init__(self) -> None:
        self._facts: ChainFacts | None = None
        self._collateral: dict[str, bytes] = {}

    async def facts(self, node: NodeClient) -> ChainFacts:
        if self._facts is None:
            params = await node.chain_params()
            self._facts = ChainFacts(network_id=params.network_id, groups=params.groups)
        return self._facts

    async def collateral_id(self, node: NodeClient, registry_address: str) -> bytes:
        known = self._collateral.get(registry_address)
        if known is None:
            state = await node.contract_state(registry_address)
            try:
                val = val_from_json(state.imm_fields[_COLLATERAL_FIELD])
            except (IndexError, KeyError, TypeError, ValueError):
                val = None
            if not isinstance(val, ValByteVec) or len(val.value) != 32:
                raise NodeProtocolError(
                    f"registry {registry_address} has no collateral token field",
                    method="GET",
                    path=f"/contracts/{registry_address}/state",
                )
            known = self._collateral[registry_address] = val.value
        return known


@dataclass(frozen=True, slots=True)
class Signer:
    """The wallet a transaction is built for, checked against its key."""

    public_key: bytes
    key_type: KeyType

    def lockup(self, build_group: int) -> LockupScript:
        """The signer's lockup in the group the transaction is built in."""
        if self.key_type is KeyType.DEFAULT:
            return P2PKH(blake2b256(self.public_key))
        return P2PK(PublicKeyLike(KeyKind.SECP256K1, self.public_key), build_group)

    def group(self, build_group: int) -> int | None:
        """``group`` for execute-script: a groupless signer's build group; None for default
        keys, whose group is their address's."""
        return None if self.key_type is KeyType.DEFAULT else build_group


def resolve_signer(address: str, public_key_hex: str, key_type: KeyTypeName | None) -> Signer:
    """Check the body's signer fields against each other (400 naming the field).

    The key type must fit the address (``1…`` default, ``3…`` gl-secp256k1; inferred when
    absent) and the key must control the address. A groupless address is one account in every
    group, so its ``:N`` suffix does not matter here: builds spend in the called contract's
    group, as the SDK builds groupless contract calls.
    """
    script = parse_address(address)  # the schema has checked that it parses
    inferred = KeyType.DEFAULT if isinstance(script, P2PKH) else KeyType.GL_SECP256K1
    if key_type is not None and KeyType(key_type) is not inferred:
        raise InvalidRequest.for_field(
            "body.signerKeyType",
            f"signerKeyType {key_type} does not match signerAddress, a {inferred.value} address",
            type="key_type_mismatch",
        )
    public_key = bytes.fromhex(public_key_hex)
    if not address_belongs_to_key(address, public_key, inferred):
        raise InvalidRequest.for_field(
            "body.signerAddress",
            "signerAddress is not the address of signerPublicKey",
            type="signer_mismatch",
        )
    return Signer(public_key, inferred)


async def _market_or_raise(conn: AsyncConnection, market_address: str) -> queries.TradedMarket:
    found = await queries.get_market(conn, market_address)
    if found is None:
        raise MarketNotFound(details={"marketAddress": market_address})
    return found


def _contract_group(market: queries.TradedMarket) -> int:
    return group_of(parse_address(market.market_address))


async def _build(
    node: NodeClient,
    cache: ChainCache,
    signer: Signer,
    call: calls.Call,
    *,
    build_group: int,
    collateral_required: int,
) -> TxBuild:
    script = encode_script(call.script)
    try:
        chain = await cache.facts(node)
        built: BuildScriptResult = await node.execute_script(
            from_public_key=signer.public_key,
            from_public_key_type=signer.key_type.value,
            bytecode=script,
            atto_alph_amount=call.alph,
            tokens=call.tokens,
            group=signer.group(build_group),
        )
    except NodeError as e:
        raise from_node_error(e) from e
    intent = Intent(script, signer.lockup(build_group), signer.public_key)
    tx = check_build(built, intent, chain)
    return TxBuild(
        unsigned_tx=built.unsigned_tx.lower(),
        tx_id=built.tx_id.lower(),
        from_group=built.from_group,
        to_group=built.to_group,
        gas_amount=tx.gas_amount,
        gas_price=tx.gas_price,
        collateral_required=collateral_required,
        atto_alph_amount=tx.gas_amount * tx.gas_price + call.alph,
        tokens=[TxToken(id=token_id.hex(), amount=amount) for token_id, amount in call.tokens],
    )


async def build_place_order(
    conn: AsyncConnection,
    node: NodeClient,
    cache: ChainCache,
    *,
    market_address: str,
    request: TxPlaceOrder,
    now: datetime | None = None,
) -> TxBuild:
    """The unsigned ``placeOrder`` transaction of one limit order."""
    signer = resolve_signer(
        request.signer_address, request.signer_public_key, request.signer_key_type
    )
    market = await _market_or_raise(conn, market_address)
    if market.status != "open" or (now or datetime.now(UTC)) >= market.close_at:
        raise MarketClosed(details={"marketAddress": market_address})
    side, outcome = Side(request.side), Outcome(request.outcome)
    try:
        collateral_id = await cache.collateral_id(node, market.registry_address)
    except NodeError as e:
        raise from_node_error(e) from e
    ref = calls.MarketRef(
        market_id=bytes.fromhex(market.contract_id),
        collateral_id=collateral_id,
        yes_id=bytes.fromhex(market.yes_token_id),
        no_id=bytes.fromhex(market.no_token_id),
    )
    call = calls.place_order(
        ref, side, outcome, request.price, request.quantity, deposit=ORDER_APPROVED_ALPH
    )
    return await _build(
        node,
        cache,
        signer,
        call,
        build_group=_contract_group(market),
        collateral_required=buy_lock(request.price, request.quantity) if side is Side.BUY else 0,
    )


async def build_cancel_order(
    conn: AsyncConnection,
    node: NodeClient,
    cache: ChainCache,
    *,
    market_address: str,
    order_id: int,
    request: TxCancelOrder,
) -> TxBuild:
    """The unsigned ``cancelOrder`` transaction of one of the signer's open orders."""
    signer = resolve_signer(
        request.signer_address, request.signer_public_key, request.signer_key_type
    )
    market = await _market_or_raise(conn, market_address)
    if market.status != "open":
        # resolution cancelled every order; cancelling is possible until then, also after the
        # close time
        raise MarketClosed("the market is resolved", details={"marketAddress": market_address})
    build_group = _contract_group(market)
    resting = await queries.get_order(conn, market.id, order_id)
    if (
        resting is None
        or resting.status != "open"
        or not _is_lockup(resting.owner, signer.lockup(build_group))
    ):
        raise OrderNotFound(details={"marketAddress": market_address, "orderId": order_id})
    # cancelOrder uses the market's contract id only
    ref = calls.MarketRef(bytes.fromhex(market.contract_id), bytes(32), bytes(32), bytes(32))
    return await _build(
        node,
        cache,
        signer,
        calls.cancel_order(ref, order_id),
        build_group=build_group,
        collateral_required=0,
    )


def _is_lockup(address: str, lockup: LockupScript) -> bool:
    """Whether ``address`` is exactly ``lockup`` (the contract compares the caller's address,
    a groupless one's group included)."""
    try:
        return parse_address(address) == lockup
    except AlephiumError:
        return False
