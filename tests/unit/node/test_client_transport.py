"""NodeClient's failure handling: refused connections, timeouts, retries, malformed answers.

Refused connections and timeouts use real sockets (a port nobody listens on; a socket that
listens but never answers). Retries and malformed bodies need a node that misbehaves on cue, so
``ScriptedNode`` is a small HTTP/1.1 server on a loopback port answering from a script: a fake
of an external system (the chain node), which is exactly where a fake belongs. The happy paths
run against the real devnet in ``test_client_devnet.py``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import pytest

from predmarket.node import (
    NO_RETRY,
    NodeClient,
    NodeProtocolError,
    NodeRejected,
    NodeServerError,
    NodeTimeout,
    NodeUnavailable,
    RetryPolicy,
)
from predmarket.node.models import ContractEvent, EventPage

FAST_RETRY = RetryPolicy(attempts=3, initial_backoff_s=0.01, max_backoff_s=0.02)
CHAIN_PARAMS = {"networkId": 4, "numZerosAtLeastInHash": 0, "groupNumPerBroker": 4, "groups": 4}


@dataclass
class Reply:
    status: int
    body: str
    content_type: str = "application/json"


def reply(status: int, doc: object) -> Reply:
    return Reply(status, json.dumps(doc))


@dataclass
class ScriptedNode:
    """Answers each request with the next scripted reply (the last one repeats)."""

    replies: list[Reply]
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    url: str = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)
                }
                await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((method, target, headers))
                r = self.replies[min(len(self.requests), len(self.replies)) - 1]
                body = r.body.encode()
                writer.write(
                    f"HTTP/1.1 {r.status} X\r\ncontent-type: {r.content_type}\r\n"
                    f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def scripted() -> AsyncIterator[ScriptedNode]:
    node = ScriptedNode([reply(200, CHAIN_PARAMS)])
    server = await asyncio.start_server(node.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    node.url = f"http://127.0.0.1:{port}"
    try:
        yield node
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A socket that accepts connections (the kernel completes the handshake) and never
    answers: every request times out waiting for a response."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def free_port() -> int:
    """A port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class TestUnreachable:
    async def test_refused_connection_is_node_unavailable(self) -> None:
        async with NodeClient(f"http://127.0.0.1:{free_port()}", retry=NO_RETRY) as node:
            with pytest.raises(NodeUnavailable) as info:
                await node.chain_params()
        assert info.value.path == "/infos/chain-params"

    async def test_unknown_host_is_node_unavailable(self) -> None:
        async with NodeClient("http://no-such-host.invalid:22973", retry=NO_RETRY) as node:
            with pytest.raises(NodeUnavailable):
                await node.chain_params()

    async def test_no_answer_in_time_is_node_timeout(self, silent_port: int) -> None:
        async with NodeClient(
            f"http://127.0.0.1:{silent_port}", timeout_s=0.3, retry=NO_RETRY
        ) as node:
            started = time.monotonic()
            with pytest.raises(NodeTimeout):
                await node.chain_params()
            assert time.monotonic() - started < 5

    async def test_timeouts_of_a_post_are_not_retried(self, silent_port: int) -> None:
        async with NodeClient(
            f"http://127.0.0.1:{silent_port}", timeout_s=0.2, retry=FAST_RETRY
        ) as node:
            started = time.monotonic()
            with pytest.raises(NodeTimeout):
                await node.submit("00", "11" * 64)
            assert time.monotonic() - started < 0.2 * 2  # one attempt, not three


class TestRetries:
    async def test_reads_are_retried_through_transient_failures(
        self, scripted: ScriptedNode
    ) -> None:
        scripted.replies = [
            reply(503, {"detail": "busy"}),
            reply(502, {"detail": "bad gateway"}),
            reply(200, CHAIN_PARAMS),
        ]
        async with NodeClient(scripted.url, retry=FAST_RETRY) as node:
            params = await node.chain_params()
        assert params.groups == 4
        assert len(scripted.requests) == 3

    async def test_retries_give_up_after_the_attempts(self, scripted: ScriptedNode) -> None:
        scripted.replies = [reply(503, {"detail": "busy"})]
        async with NodeClient(scripted.url, retry=FAST_RETRY) as node:
            with pytest.raises(NodeServerError) as info:
                await node.chain_params()
        assert (info.value.status, info.value.detail) == (503, "busy")
        assert len(scripted.requests) == 3

    async def test_a_refusal_is_not_retried(self, scripted: ScriptedNode) -> None:
        scripted.replies = [reply(400, {"detail": "Invalid value for: query parameter txId"})]
        async with NodeClient(scripted.url, retry=FAST_RETRY) as node:
            with pytest.raises(NodeRejected) as info:
                await node.tx_status("ab" * 32)
        assert info.value.detail == "Invalid value for: query parameter txId"
        assert len(scripted.requests) == 1

    async def test_an_internal_error_is_not_retried(self, scripted: ScriptedNode) -> None:
        scripted.replies = [reply(500, {"detail": "oops"})]
        async with NodeClient(scripted.url, retry=FAST_RETRY) as node:
            with pytest.raises(NodeServerError):
                await node.chain_params()
        assert len(scripted.requests) == 1

    async def test_a_submit_is_sent_once(self, scripted: ScriptedNode) -> None:
        scripted.replies = [reply(503, {"detail": "busy"}), reply(200, {})]
        async with NodeClient(scripted.url, retry=FAST_RETRY) as node:
            with pytest.raises(NodeServerError):
                await node.submit("00", "11" * 64)
        assert [r[0] for r in scripted.requests] == ["POST"]

    def test_backoff_doubles_up_to_the_cap_with_jitter(self) -> None:
        policy = RetryPolicy(attempts=5, initial_backoff_s=0.1, max_backoff_s=0.3)
        for retry, base in [(1, 0.1), (2, 0.2), (3, 0.3), (4, 0.3)]:
            delays = [policy.delay(retry) for _ in range(50)]
            assert all(base / 2 <= d <= base for d in delays)
        with pytest.raises(ValueError):
            RetryPolicy(attempts=0)


class TestAnswers:
    async def test_api_key_header_is_sent(self, scripted: ScriptedNode) -> None:
        async with NodeClient(scripted.url, api_key="k-123") as node:
            await node.chain_params()
        assert scripted.requests[0][2]["x-api-key"] == "k-123"

    async def test_non_json_is_a_protocol_error(self, scripted: ScriptedNode) -> None:
        scripted.replies = [Reply(200, "<html>proxy login</html>", "text/html")]
        async with NodeClient(scripted.url) as node:
            with pytest.raises(NodeProtocolError):
                await node.chain_params()

    async def test_wrong_shape_is_a_protocol_error(self, scripted: ScriptedNode) -> None:
        scripted.replies = [reply(200, {"networkId": "four"})]
        async with NodeClient(scripted.url) as node:
            with pytest.raises(NodeProtocolError):
                await node.chain_params()

    async def test_non_node_error_bodies_keep_their_text(self, scripted: ScriptedNode) -> None:
        scripted.replies = [Reply(404, "no route", "text/plain")]
        async with NodeClient(scripted.url) as node:
            with pytest.raises(NodeRejected) as info:
                await node.contract_events("addr", 0)
        assert info.value.detail == "no route"

    async def test_an_event_page_that_contradicts_its_counter_is_refused(
        self, scripted: ScriptedNode
    ) -> None:
        event = {
            "blockHash": "aa" * 32,
            "txId": "bb" * 32,
            "timestamp": 1,
            "contractAddress": "addr",
            "eventIndex": 0,
            "fields": [],
        }
        # two batches claimed by nextStart, one block in the events
        scripted.replies = [reply(200, {"events": [event, event], "nextStart": 2})]
        async with NodeClient(scripted.url) as node:
            with pytest.raises(NodeProtocolError, match="block batches"):
                await node.contract_events("addr", 0)
        assert scripted.requests[0][1] == "/events/contract/addr?start=0&limit=100"

    async def test_amounts_are_exact_ints(self, scripted: ScriptedNode) -> None:
        big = str(2**256 - 1)
        scripted.replies = [
            reply(
                200,
                {
                    "balance": big,
                    "balanceHint": "x",
                    "lockedBalance": "0",
                    "lockedBalanceHint": "0 ALPH",
                    "tokenBalances": [{"id": "cc" * 32, "amount": "12345678901234567890123"}],
                    "utxoNum": 1,
                },
            )
        ]
        async with NodeClient(scripted.url) as node:
            balance = await node.balance("addr")
        assert balance.balance == 2**256 - 1
        assert balance.token("cc" * 32) == 12345678901234567890123


def test_batches_group_consecutive_events_of_a_block() -> None:
    def ev(block: str, index: int) -> ContractEvent:
        return ContractEvent(
            block_hash=block,
            tx_id="t",
            timestamp=1,
            contract_address="a",
            event_index=index,
            fields=(),
        )

    page = EventPage(start=5, events=(ev("x", 0), ev("x", 1), ev("y", 0)), next_start=7)
    batches = page.batches()
    assert [(b.counter, b.block_hash, len(b.events)) for b in batches] == [(5, "x", 2), (6, "y", 1)]
