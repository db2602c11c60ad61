"""The service's client of a chain node: the devnet or a real Alephium full node, same code.

One :class:`NodeClient` per process (an ``httpx.AsyncClient`` with a connection pool), created in
the app's lifespan and closed with it. Every method is one REST call of chain-formats.md §4 with a
typed answer (``predmarket.node.models``). Failures raise a :class:`~predmarket.node.errors.
NodeError` subclass, never an httpx exception:

- :class:`NodeUnavailable` — connection refused or reset, DNS failure;
- :class:`NodeTimeout` — no connection or no answer within the timeout;
- :class:`NodeRejected` — a 4xx with the node's ``detail``;
- :class:`NodeServerError` — a 5xx; :class:`NodeProtocolError` — a 2xx that is not the promised
  JSON.

Reads (GET) are idempotent and retried with exponential backoff on unavailability, timeouts and
502/503/504 (:class:`RetryPolicy`); POSTs are sent once — a submit must never be repeated behind
the caller's back, and a build the caller can simply ask for again.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Final, TypeVar

import httpx
from pydantic import BaseModel, JsonValue, ValidationError

from predmarket.node.errors import (
    NodeProtocolError,
    NodeRejected,
    NodeServerError,
    NodeTimeout,
    NodeUnavailable,
)
from predmarket.node.models import (
    Balance,
    BuildScriptResult,
    BuildTransferResult,
    ChainParams,
    ContractState,
    DecodedUnsignedTx,
    Destination,
    EventPage,
    NodeInfo,
    SelfClique,
    SubmitResult,
    TxStatus,
    Utxo,
)

M = TypeVar("M", bound=BaseModel)

#: The node caps ``limit`` of the events endpoint at 100 batches.
MAX_EVENTS_LIMIT: Final = 100
API_KEY_HEADER: Final = "X-API-KEY"
_RETRYABLE_STATUS: Final = frozenset({502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of idempotent reads: ``attempts`` tries in all, waiting ``initial_backoff_s``
    doubling up to ``max_backoff_s`` between them, each wait jittered down by up to half."""

    attempts: int = 3
    initial_backoff_s: float = 0.1
    max_backoff_s: float = 2.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.initial_backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("backoff must not be negative")

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        base = min(self.max_backoff_s, self.initial_backoff_s * 2.0 ** (retry - 1))
        return base * (0.5 + random.random() / 2)  # jitter: spread the retries of many callers


NO_RETRY: Final = RetryPolicy(attempts=1)


def _hex(value: bytes | str) -> str:
    return value.hex() if isinstance(value, bytes) else value


def _tokens(tokens: Sequence[tuple[bytes | str, int]]) -> list[dict[str, str]]:
    return [{"id": _hex(token_id), "amount": str(amount)} for token_id, amount in tokens]


def _destination(d: Destination) -> dict[str, object]:
    out: dict[str, object] = {"address": d.address}
    if d.atto_alph_amount is not None:
        out["attoAlphAmount"] = str(d.atto_alph_amount)
    if d.tokens:
        out["tokens"] = _tokens([(t.id, t.amount) for t in d.tokens])
    if d.lock_time is not None:
        out["lockTime"] = d.lock_time
    if d.message is not None:
        out["message"] = d.message
    return out


def _detail(response: httpx.Response) -> str:
    """The node's ``{"detail": ...}``, or the body text when the error is not the node's."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:500] or response.reason_phrase
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return str(body["detail"])
    return response.text[:500]


def _is_missing_events(error: NodeRejected) -> bool:
    # "Contract events of <address> not found" / "Current events count for contract <address>
    # not found": the node's 404 before a contract's first event. A 404 of a wrong base URL
    # ("Page not found", or not the node's JSON at all) must not read as "no events".
    return error.status == 404 and "events" in error.detail and "not found" in error.detail


class NodeClient:
    """Async client of a node's REST API. Use ``async with NodeClient(url) as node`` or call
    :meth:`aclose`."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        connect_timeout_s: float = 3.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Accept": "application/json"}
        if api_key:
            headers[API_KEY_HEADER] = api_key
        self.base_url = base_url.rstrip("/")
        self.retry = retry if retry is not None else RetryPolicy()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            transport=transport,
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> NodeClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- transport ------------------------------------------------------------------------------

    async def _send_once(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None,
        body: Mapping[str, object] | None,
    ) -> JsonValue:
        try:
            response = await self._http.request(method, path, params=params, json=body)
        except httpx.TimeoutException as e:
            raise NodeTimeout(
                f"node did not answer {method} {path} in time ({type(e).__name__})",
                method=method,
                path=path,
            ) from e
        except httpx.TransportError as e:
            raise NodeUnavailable(
                f"node unreachable at {self.base_url} ({type(e).__name__}: {e})",
                method=method,
                path=path,
            ) from e
        if response.status_code >= 500:
            raise NodeServerError(response.status_code, _detail(response), method=method, path=path)
        if response.status_code >= 400:
            raise NodeRejected(response.status_code, _detail(response), method=method, path=path)
        try:
            parsed: JsonValue = response.json()
        except ValueError as e:
            raise NodeProtocolError(
                f"node answered {method} {path} with non-JSON", method=method, path=path
            ) from e
        return parsed

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, object] | None = None,
    ) -> JsonValue:
        policy = self.retry if method == "GET" else NO_RETRY
        attempt = 1
        while True:
            try:
                return await self._send_once(method, path, params=params, body=body)
            except (NodeUnavailable, NodeTimeout, NodeServerError) as e:
                retryable = not isinstance(e, NodeServerError) or e.status in _RETRYABLE_STATUS
                if not retryable or attempt >= policy.attempts:
                    raise
            await asyncio.sleep(policy.delay(attempt))
            attempt += 1

    @staticmethod
    def _parse(model: type[M], data: JsonValue, method: str, path: str) -> M:
        try:
            return model.model_validate(data)
        except ValidationError as e:
            raise NodeProtocolError(
                f"unexpected answer to {method} {path}: {e.errors()[0]['msg']}",
                method=method,
                path=path,
            ) from e

    async def _get(
        self, model: type[M], path: str, params: Mapping[str, str | int] | None = None
    ) -> M:
        return self._parse(model, await self._request("GET", path, params=params), "GET", path)

    async def _post(self, model: type[M], path: str, body: Mapping[str, object]) -> M:
        return self._parse(model, await self._request("POST", path, body=body), "POST", path)

    # -- infos ----------------------------------------------------------------------------------

    async def node_info(self) -> NodeInfo:
        """``GET /infos/node``: build version of the node."""
        return await self._get(NodeInfo, "/infos/node")

    async def chain_params(self) -> ChainParams:
        """``GET /infos/chain-params``: network id and group count."""
        return await self._get(ChainParams, "/infos/chain-params")

    async def self_clique(self) -> SelfClique:
        """``GET /infos/self-clique``: check ``synced`` before building."""
        return await self._get(SelfClique, "/infos/self-clique")

    # -- addresses ------------------------------------------------------------------------------

    async def balance(self, address: str, *, mempool: bool = False) -> Balance:
        """``GET /addresses/{address}/balance``."""
        params = {"mempool": "true"} if mempool else None
        return await self._get(Balance, f"/addresses/{address}/balance", params)

    async def utxos(self, address: str) -> tuple[Utxo, ...]:
        """``GET /addresses/{address}/utxos``."""
        path = f"/addresses/{address}/utxos"
        data = await self._request("GET", path)
        if not isinstance(data, dict) or not isinstance(data.get("utxos"), list):
            raise NodeProtocolError(f"unexpected answer to GET {path}", method="GET", path=path)
        utxos = data["utxos"]
        assert isinstance(utxos, list)
        return tuple(self._parse(Utxo, u, "GET", path) for u in utxos)

    # -- building and submitting ----------------------------------------------------------------

    async def execute_script(
        self,
        *,
        from_public_key: bytes | str,
        bytecode: bytes | str,
        from_public_key_type: str = "default",
        atto_alph_amount: int | None = None,
        tokens: Sequence[tuple[bytes | str, int]] = (),
        gas_amount: int | None = None,
        gas_price: int | None = None,
        group: int | None = None,
        gas_estimation_multiplier: float | None = None,
    ) -> BuildScriptResult:
        """``POST /contracts/unsigned-tx/execute-script``: build a script transaction.

        ``atto_alph_amount`` and ``tokens`` are what the script may spend (its approvals).
        """
        body: dict[str, object] = {
            "fromPublicKey": _hex(from_public_key),
            "fromPublicKeyType": from_public_key_type,
            "bytecode": _hex(bytecode),
        }
        if atto_alph_amount is not None:
            body["attoAlphAmount"] = str(atto_alph_amount)
        if tokens:
            body["tokens"] = _tokens(tokens)
        if gas_amount is not None:
            body["gasAmount"] = gas_amount
        if gas_price is not None:
            body["gasPrice"] = str(gas_price)
        if group is not None:
            body["group"] = group
        if gas_estimation_multiplier is not None:
            body["gasEstimationMultiplier"] = gas_estimation_multiplier
        return await self._post(BuildScriptResult, "/contracts/unsigned-tx/execute-script", body)

    async def build_transfer(
        self,
        *,
        from_public_key: bytes | str,
        destinations: Sequence[Destination],
        from_public_key_type: str = "default",
        gas_amount: int | None = None,
        gas_price: int | None = None,
        group: int | None = None,
    ) -> BuildTransferResult:
        """``POST /transactions/build``: a transfer of ALPH and tokens."""
        body: dict[str, object] = {
            "fromPublicKey": _hex(from_public_key),
            "fromPublicKeyType": from_public_key_type,
            "destinations": [_destination(d) for d in destinations],
        }
        if gas_amount is not None:
            body["gasAmount"] = gas_amount
        if gas_price is not None:
            body["gasPrice"] = str(gas_price)
        if group is not None:
            body["group"] = group
        return await self._post(BuildTransferResult, "/transactions/build", body)

    async def decode_unsigned_tx(self, unsigned_tx: bytes | str) -> DecodedUnsignedTx:
        """``POST /transactions/decode-unsigned-tx``: the node's reading of a built tx."""
        return await self._post(
            DecodedUnsignedTx, "/transactions/decode-unsigned-tx", {"unsignedTx": _hex(unsigned_tx)}
        )

    async def submit(self, unsigned_tx: bytes | str, signature: bytes | str) -> SubmitResult:
        """``POST /transactions/submit``: a signed transaction (never retried)."""
        body = {"unsignedTx": _hex(unsigned_tx), "signature": _hex(signature)}
        return await self._post(SubmitResult, "/transactions/submit", body)

    async def tx_status(
        self,
        tx_id: bytes | str,
        *,
        from_group: int | None = None,
        to_group: int | None = None,
    ) -> TxStatus:
        """``GET /transactions/status``: Confirmed, MemPooled, TxNotFound or Conflicted."""
        params: dict[str, str | int] = {"txId": _hex(tx_id)}
        if from_group is not None:
            params["fromGroup"] = from_group
        if to_group is not None:
            params["toGroup"] = to_group
        return await self._get(TxStatus, "/transactions/status", params)

    # -- contracts and events -------------------------------------------------------------------

    async def contract_events(
        self, address: str, start: int, limit: int = MAX_EVENTS_LIMIT, *, group: int | None = None
    ) -> EventPage:
        """``GET /events/contract/{address}``: batches ``start`` .. ``start + limit - 1``.

        A contract that never logged an event is an empty page (the node answers 404 then), so
        a follower can poll a new contract without special cases. The page's batches are
        checked against ``nextStart`` (see :meth:`EventPage.batches`).
        """
        if start < 0:
            raise ValueError("start must not be negative")
        if not 1 <= limit <= MAX_EVENTS_LIMIT:
            raise ValueError(f"limit must be in 1..{MAX_EVENTS_LIMIT}")
        path = f"/events/contract/{address}"
        params: dict[str, str | int] = {"start": start, "limit": limit}
        if group is not None:
            params["group"] = group
        try:
            data = await self._request("GET", path, params=params)
        except NodeRejected as e:
            if _is_missing_events(e):
                return EventPage(start=start, events=(), next_start=start)
            raise
        if not isinstance(data, dict):
            raise NodeProtocolError(f"unexpected answer to GET {path}", method="GET", path=path)
        page = self._parse(EventPage, {**data, "start": start}, "GET", path)
        try:
            page.batches()
        except ValueError as e:
            raise NodeProtocolError(str(e), method="GET", path=path) from e
        return page

    async def events_current_count(self, address: str) -> int:
        """``GET /events/contract/{address}/current-count``: how many batches exist (0 before
        the first event, where the node answers 404)."""
        path = f"/events/contract/{address}/current-count"
        try:
            data = await self._request("GET", path)
        except NodeRejected as e:
            if _is_missing_events(e):
                return 0
            raise
        if isinstance(data, bool) or not isinstance(data, int) or data < 0:
            raise NodeProtocolError(f"unexpected answer to GET {path}", method="GET", path=path)
        return data

    async def contract_state(self, address: str) -> ContractState:
        """``GET /contracts/{address}/state``: fields as JSON Vals and the contract's assets."""
        return await self._get(ContractState, f"/contracts/{address}/state")

    async def is_block_in_main_chain(self, block_hash: bytes | str) -> bool:
        """``GET /blockflow/is-block-in-main-chain``."""
        path = "/blockflow/is-block-in-main-chain"
        data = await self._request("GET", path, params={"blockHash": _hex(block_hash)})
        if not isinstance(data, bool):
            raise NodeProtocolError(f"unexpected answer to GET {path}", method="GET", path=path)
        return data
