"""Serve the devnet's HTTP interface from a background thread.

Tests start a devnet on a loopback port this way, and the service will embed the devnet the same
way: the node lives in the calling process, uvicorn runs its own event loop in a daemon thread,
and :meth:`DevnetServer.stop` shuts it down cleanly (and closes the node when the server opened
it).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import uvicorn

from predmarket.devnet.http import create_devnet_app
from predmarket.devnet.node import DevnetNode

#: Seconds to wait for the server to start answering, and for it to stop.
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class DevnetOptions:
    """How to open a devnet node that the server owns (opened on start, closed on stop)."""

    data_dir: Path
    network_id: int = 4
    groups: int = 4
    #: Seconds between blocks; None mines one block per submitted transaction (automine).
    block_interval_s: float | None = None
    #: Overrides the faucet's per-address cooldown for this run (0 turns the limit off).
    faucet_cooldown_ms: int | None = None


class DevnetServer:
    """A running devnet HTTP server; stop it with :meth:`stop` or use it as a context manager."""

    def __init__(
        self,
        node: DevnetNode,
        server: uvicorn.Server,
        thread: threading.Thread,
        sock: socket.socket,
        *,
        owns_node: bool,
    ) -> None:
        self.node = node
        host, port = sock.getsockname()[:2]
        self.host: str = host
        self.port: int = port
        self.url = f"http://{host}:{port}"
        self._server = server
        self._thread = thread
        self._sock = sock
        self._owns_node = owns_node
        self._stopped = False

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop serving (in-flight requests finish first); close the node if we opened it."""
        if self._stopped:
            return
        self._stopped = True
        self._server.should_exit = True
        self._thread.join(STOP_TIMEOUT_S)
        if self._thread.is_alive():  # a request that never finishes: stop waiting for it
            self._server.force_exit = True
            self._thread.join(STOP_TIMEOUT_S)
        self._sock.close()
        if self._owns_node:
            self.node.close()

    def __enter__(self) -> DevnetServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ForegroundServer(uvicorn.Server):
    """uvicorn for ``predmarket devnet``: SIGINT and SIGTERM stop it and ``run`` returns.

    Plain uvicorn re-raises the signal once it has shut down, which kills the process before the
    caller can close the node; here the caller gets control back and exits normally.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` for uvicorn (port 0 picks a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def run_devnet_in_thread(
    node_or_options: DevnetNode | DevnetOptions,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    mine_interval_s: float | None = None,
    log_level: str = "warning",
) -> DevnetServer:
    """Serve a devnet on ``host:port`` (port 0 picks a free one) from a daemon thread.

    Given a :class:`DevnetNode`, the caller keeps owning it (``stop`` leaves it open). Given
    :class:`DevnetOptions`, the node is opened here and closed by ``stop``; its
    ``block_interval_s`` turns automine off and mines on that interval instead. Returns once the
    server accepts connections; the socket is bound before that, so a busy port raises
    ``OSError`` here rather than in the thread.
    """
    owns_node = isinstance(node_or_options, DevnetOptions)
    if isinstance(node_or_options, DevnetOptions):
        opts = node_or_options
        node = DevnetNode.open(
            opts.data_dir,
            network_id=opts.network_id,
            groups=opts.groups,
            automine=opts.block_interval_s is None,
            faucet_cooldown_ms=opts.faucet_cooldown_ms,
        )
        mine_interval_s = opts.block_interval_s if mine_interval_s is None else mine_interval_s
    else:
        node = node_or_options
    try:
        sock = bind_socket(host, port)
    except OSError:
        if owns_node:
            node.close()
        raise
    app = create_devnet_app(node, mine_interval_s=mine_interval_s)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_keep_alive=30,
        # Signals belong to the embedding process; uvicorn only installs handlers on the main
        # thread anyway, and this server never runs there.
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"devnet-http-{port}", daemon=True
    )
    thread.start()
    handle = DevnetServer(node, server, thread, sock, owns_node=owns_node)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            handle.stop()
            raise RuntimeError("the devnet HTTP server did not start")
        time.sleep(0.005)
    return handle
