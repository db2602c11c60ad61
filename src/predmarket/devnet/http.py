"""The devnet's HTTP interface: the Alephium full node's REST paths and JSON shapes (v4.6.0).

Routes parse and validate the request the way the node's OpenAPI describes it (amounts as decimal
strings, lowercase or uppercase hex, int32 ints), call one :class:`DevnetNode` method and return
its JSON-ready dict. Every refusal is the node's error shape, ``{"detail": "..."}`` with the
node's status: malformed input is a 400 (FastAPI's 422 is never used), a
:class:`~predmarket.devnet.errors.NodeError` keeps its status, and a 404 carries the node's
``resource`` too.

The facade is synchronous, thread-safe and fast (a ``placeOrder`` submit with automine, block
written to the log, takes about 0.4 ms), and it serializes every call on one lock, so routes call
it on the event loop: a worker thread per request would add CPU time (about 10% per transaction
in docs/benchmarks-devnet.md) and buy no concurrency.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, Final

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from predmarket.alephium.constants import U256_MAX
from predmarket.alephium.errors import AlephiumError
from predmarket.devnet.errors import NodeError
from predmarket.devnet.node import Destination, DevnetNode

logger = logging.getLogger(__name__)

I32_MAX: Final = 2**31 - 1
I32_MIN: Final = -(2**31)
DEFAULT_EVENTS_LIMIT: Final = 100

# -- responses ----------------------------------------------------------------------------------


class NodeJSONResponse(Response):
    """Compact JSON, no re-validation: the facade's dicts are already in the node's shape."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()


def _json(content: Any, status: int = 200) -> NodeJSONResponse:
    return NodeJSONResponse(content, status_code=status)


def _error(status: int, detail: str, *, resource: str | None = None) -> NodeJSONResponse:
    body: dict[str, str] = {"detail": detail}
    if resource is not None:
        body["resource"] = resource
    return _json(body, status)


# -- request types ------------------------------------------------------------------------------


def _hex(value: object) -> bytes:
    if not isinstance(value, str):
        raise ValueError("expected a hex string")
    if len(value) % 2:
        raise ValueError("odd-length hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ValueError("invalid hex string") from None


def _hex32(value: object) -> bytes:
    raw = _hex(value)
    if len(raw) != 32:
        raise ValueError(f"expected 32 bytes of hex, got {len(raw)}")
    return raw


def _signature(value: object) -> str:
    raw = _hex(value)
    if len(raw) != 64:
        raise ValueError(f"a signature is 64 bytes of hex, got {len(raw)}")
    return raw.hex()


def _u256(value: object) -> int:
    # The node's uint256 fields are decimal strings; JSON integers are accepted too.
    if isinstance(value, bool):
        raise ValueError("expected a decimal string")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        number = int(value)
    else:
        raise ValueError("expected a decimal string of a non-negative integer")
    if number < 0 or number > U256_MAX:
        raise ValueError("not a uint256")
    return number


def _i32(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("expected an integer")
    if not I32_MIN <= value <= I32_MAX:
        raise ValueError("not an int32")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


HexBytes = Annotated[bytes, BeforeValidator(_hex)]
Hash32 = Annotated[bytes, BeforeValidator(_hex32)]
Signature = Annotated[str, BeforeValidator(_signature)]
U256 = Annotated[int, BeforeValidator(_u256)]
I32 = Annotated[int, BeforeValidator(_i32)]
Text = Annotated[str, BeforeValidator(_text)]


class _Body(BaseModel):
    # Field names are the node's camelCase JSON names, as they appear on the wire.
    # Unknown fields are ignored like the node does: the SDK sends extras (signerAddress, ...).
    model_config = ConfigDict(extra="ignore", frozen=True)


class TokenIn(_Body):
    id: Hash32
    amount: U256


class DestinationIn(_Body):
    address: Text
    attoAlphAmount: U256 | None = None
    tokens: list[TokenIn] | None = None
    lockTime: I32 | None = None
    message: HexBytes | None = None


class OutputRefIn(_Body):
    hint: I32
    key: Hash32


class BuildTransferIn(_Body):
    fromPublicKey: HexBytes
    fromPublicKeyType: Text | None = None
    destinations: list[DestinationIn]
    utxos: list[OutputRefIn] | None = None
    gasAmount: I32 | None = None
    gasPrice: U256 | None = None
    group: I32 | None = None
    targetBlockHash: Hash32 | None = None


class BuildExecuteScriptIn(_Body):
    fromPublicKey: HexBytes
    fromPublicKeyType: Text | None = None
    bytecode: HexBytes
    attoAlphAmount: U256 | None = None
    tokens: list[TokenIn] | None = None
    gasAmount: I32 | None = None
    gasPrice: U256 | None = None
    targetBlockHash: Hash32 | None = None
    group: I32 | None = None
    gasEstimationMultiplier: float | None = Field(default=None, allow_inf_nan=False)
    dustAmount: U256 | None = None


class DecodeUnsignedTxIn(_Body):
    unsignedTx: HexBytes


class SubmitIn(_Body):
    unsignedTx: HexBytes
    signature: Signature


class FaucetIn(_Body):
    address: Text


# -- validation errors in the node's shape ------------------------------------------------------

_WHERE: Final = {"body": "body", "query": "query parameter", "path": "path parameter"}


def _validation_detail(exc: RequestValidationError) -> str:
    """``Invalid value for: body (destinations.0.address: ...)``, like the node's tapir errors."""
    parts: list[str] = []
    for error in exc.errors()[:3]:
        loc = [str(p) for p in error.get("loc", ())]
        where = _WHERE.get(loc[0], loc[0]) if loc else "request"
        field = ".".join(loc[1:])
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if error.get("type") == "missing":
            message = "missing"
        if where == "body":
            parts.append(f"body ({field}: {message})" if field else f"body ({message})")
        else:
            parts.append(f"{where} {field} ({message})")
    return "Invalid value for: " + "; ".join(parts or ["request"])


# -- the app ------------------------------------------------------------------------------------


def _destinations(items: Sequence[DestinationIn]) -> list[Destination]:
    return [
        Destination(
            address=d.address,
            atto_alph_amount=d.attoAlphAmount or 0,
            tokens=[(t.id, t.amount) for t in d.tokens or ()],
            lock_time=d.lockTime,
            message=d.message or b"",
        )
        for d in items
    ]


async def _mine_forever(node: DevnetNode, interval_s: float) -> None:
    while True:
        await asyncio.sleep(interval_s)
        try:
            node.mine()
        except NodeError as e:
            if e.status == 503:  # closed under us: the server is shutting down
                return
            logger.error("devnet: mining a block failed: %s", e.detail)
        except Exception:
            logger.exception("devnet: mining a block failed")


def create_devnet_app(node: DevnetNode, *, mine_interval_s: float | None = None) -> FastAPI:
    """The node's REST interface over ``node``; with ``mine_interval_s`` (and automine off) a
    background task mines the mempool into a block on that interval while the app runs."""
    if mine_interval_s is not None and mine_interval_s <= 0:
        raise ValueError("mine_interval_s must be positive")

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        task: asyncio.Task[None] | None = None
        if mine_interval_s is not None and not node.automine:
            task = asyncio.create_task(_mine_forever(node, mine_interval_s))
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    app = FastAPI(
        title="predmarket devnet",
        summary="An embedded Alephium-compatible node (full node REST API v4.6.0 subset)",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.node = node

    @app.exception_handler(RequestValidationError)
    async def _on_validation(_request: Request, exc: RequestValidationError) -> Response:
        return _error(400, _validation_detail(exc))

    @app.exception_handler(NodeError)
    async def _on_node_error(_request: Request, exc: NodeError) -> Response:
        if exc.status == 404 and exc.detail.endswith(" not found"):
            # The node's NotFound names the resource too: "<resource> not found".
            return _error(404, exc.detail, resource=exc.detail.removesuffix(" not found"))
        return _error(exc.status, exc.detail)

    @app.exception_handler(AlephiumError)
    async def _on_format_error(_request: Request, exc: AlephiumError) -> Response:
        # The facade maps these itself; this is the net under it: bad input is never a 500.
        return _error(400, str(exc))

    @app.exception_handler(Exception)
    async def _on_bug(_request: Request, exc: Exception) -> Response:
        # A bug: still the node's error shape (Starlette logs the traceback after this).
        return _error(500, f"Internal server error: {type(exc).__name__}")

    @app.exception_handler(StarletteHTTPException)
    async def _on_http_error(_request: Request, exc: StarletteHTTPException) -> Response:
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = "Page not found"
        response = _error(exc.status_code, detail)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    # -- infos ----------------------------------------------------------------------------------

    @app.get("/infos/node", tags=["Infos"])
    async def infos_node() -> Response:
        return _json(node.node_info())

    @app.get("/infos/version", tags=["Infos"])
    async def infos_version() -> Response:
        return _json(node.version())

    @app.get("/infos/chain-params", tags=["Infos"])
    async def infos_chain_params() -> Response:
        return _json(node.chain_params())

    @app.get("/infos/self-clique", tags=["Infos"])
    async def infos_self_clique(request: Request) -> Response:
        host = request.url.hostname or "127.0.0.1"
        port = request.url.port or 80
        return _json(node.self_clique(host=host, rest_port=port))

    # -- addresses ------------------------------------------------------------------------------

    @app.get("/addresses/{address}/balance", tags=["Addresses"])
    async def address_balance(address: str, mempool: bool = False) -> Response:
        return _json(node.balance(address, mempool=mempool))

    @app.get("/addresses/{address}/utxos", tags=["Addresses"])
    async def address_utxos(address: str) -> Response:
        return _json(node.utxos(address))

    # -- transactions ---------------------------------------------------------------------------

    @app.post("/transactions/build", tags=["Transactions"])
    async def transactions_build(body: BuildTransferIn) -> Response:
        if body.utxos is not None:
            raise NodeError(400, "Explicit `utxos` are not supported by the devnet")
        return _json(
            node.build_transfer(
                from_public_key=body.fromPublicKey,
                from_public_key_type=body.fromPublicKeyType or "default",
                destinations=_destinations(body.destinations),
                gas_amount=body.gasAmount,
                gas_price=body.gasPrice,
                group=body.group,
            )
        )

    @app.post("/transactions/decode-unsigned-tx", tags=["Transactions"])
    async def transactions_decode(body: DecodeUnsignedTxIn) -> Response:
        return _json(node.decode_unsigned_tx(body.unsignedTx))

    @app.post("/transactions/submit", tags=["Transactions"])
    async def transactions_submit(body: SubmitIn) -> Response:
        return _json(node.submit(body.unsignedTx, body.signature))

    @app.get("/transactions/status", tags=["Transactions"])
    async def transactions_status(
        tx_id: Annotated[str, Query(alias="txId")],
        from_group: Annotated[int | None, Query(alias="fromGroup")] = None,
        to_group: Annotated[int | None, Query(alias="toGroup")] = None,
    ) -> Response:
        # A devnet has one chain: the groups only need to be in range.
        _check_groups(node, from_group, to_group)
        return _json(node.tx_status(_query_hash(tx_id, "txId")))

    @app.get("/transactions/details/{txId}", tags=["Transactions"])
    async def transactions_details(
        txId: str,
        from_group: Annotated[int | None, Query(alias="fromGroup")] = None,
        to_group: Annotated[int | None, Query(alias="toGroup")] = None,
    ) -> Response:
        _check_groups(node, from_group, to_group)
        return _json(node.tx_details(_path_hash(txId, "txId")))

    # -- contracts ------------------------------------------------------------------------------

    @app.post("/contracts/unsigned-tx/execute-script", tags=["Contracts"])
    async def contracts_execute_script(body: BuildExecuteScriptIn) -> Response:
        return _json(
            node.build_execute_script(
                from_public_key=body.fromPublicKey,
                from_public_key_type=body.fromPublicKeyType or "default",
                bytecode=body.bytecode,
                atto_alph_amount=body.attoAlphAmount,
                tokens=[(t.id, t.amount) for t in body.tokens or ()],
                gas_amount=body.gasAmount,
                gas_price=body.gasPrice,
                group=body.group,
                gas_estimation_multiplier=body.gasEstimationMultiplier,
            )
        )

    @app.get("/contracts/{address}/state", tags=["Contracts"])
    async def contracts_state(address: str) -> Response:
        return _json(node.contract_state(address))

    # -- events ---------------------------------------------------------------------------------

    @app.get("/events/contract/{contractAddress}", tags=["Events"])
    async def events_by_contract(
        contractAddress: str,
        start: Annotated[int, Query(ge=0)],
        limit: Annotated[int, Query(ge=1, le=DEFAULT_EVENTS_LIMIT)] = DEFAULT_EVENTS_LIMIT,
        group: int | None = None,
    ) -> Response:
        _check_groups(node, group, None)
        return _json(node.events(contractAddress, start, limit))

    @app.get("/events/contract/{contractAddress}/current-count", tags=["Events"])
    async def events_current_count(contractAddress: str) -> Response:
        return _json(node.event_count(contractAddress))

    # -- blockflow ------------------------------------------------------------------------------

    @app.get("/blockflow/is-block-in-main-chain", tags=["Blockflow"])
    async def blockflow_is_block_in_main_chain(
        block_hash: Annotated[str, Query(alias="blockHash")],
    ) -> Response:
        return _json(node.is_block_in_main_chain(_query_hash(block_hash, "blockHash")))

    # -- devnet extras --------------------------------------------------------------------------

    @app.post("/devnet/faucet", tags=["Devnet"])
    async def devnet_faucet(body: FaucetIn) -> Response:
        """Send the address test ALPH and collateral (rate-limited per address)."""
        return _json(node.faucet(body.address))

    @app.get("/devnet/config", tags=["Devnet"])
    async def devnet_config() -> Response:
        """Network, contract addresses, operator and faucet addresses, and the contracts' ABI."""
        doc = node.config.to_json()
        doc["automine"] = node.automine
        doc["blockIntervalS"] = None if node.automine else mine_interval_s
        doc["abi"] = node.abi()
        return _json(doc)

    @app.get("/devnet/tip", tags=["Devnet"])
    async def devnet_tip() -> Response:
        """The last block: ``{height, hash, timestamp, txIds}``."""
        return _json(node.tip())

    @app.get("/devnet/markets/{address}/orders", tags=["Devnet"])
    async def devnet_market_orders(address: str) -> Response:
        """The resting orders of a market contract, in id order: ``{"orders": [...]}``."""
        return _json({"orders": node.market_orders(address)})

    @app.post("/devnet/mine", tags=["Devnet"])
    async def devnet_mine() -> Response:
        """Mine the mempool into a block now (interval mode); ``{"txs": n}``."""
        return _json({"txs": node.mine()})

    return app


# -- helpers ------------------------------------------------------------------------------------


def _hash_param(value: str, where: str) -> bytes:
    try:
        return _hex32(value)
    except ValueError as e:
        raise NodeError(400, f"Invalid value for: {where} ({e})") from None


def _query_hash(value: str, name: str) -> bytes:
    return _hash_param(value, f"query parameter {name}")


def _path_hash(value: str, name: str) -> bytes:
    return _hash_param(value, f"path parameter {name}")


def _check_groups(node: DevnetNode, *groups: int | None) -> None:
    count = node.config.groups
    for group in groups:
        if group is not None and not 0 <= group < count:
            raise NodeError(400, f"Invalid group index: {group}, expected 0..{count - 1}")
