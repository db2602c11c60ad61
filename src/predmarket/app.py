"""The app factory: ``create_app(settings) -> FastAPI``.

Run with ``uvicorn --factory predmarket.app:create_app`` (the CLI's ``serve`` does this).

- Process resources (engine, later the node client, devnet, indexer, broker) are made in the
  lifespan, kept on ``app.state`` and released in reverse order; nothing connects at import time.
- Middleware, outermost first: request id → body size cap → last-resort 500 → FastAPI's routing
  with the error handlers of :mod:`predmarket.kit.errors`.
- A domain joins by adding its router to :data:`ROUTERS`; it is served at once and published in
  ``/openapi.json`` only where it marks routes with :func:`predmarket.openapi.public`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket import __version__
from predmarket.books import cache as books_cache
from predmarket.books import router as books
from predmarket.health import router as health
from predmarket.health import service as health_service
from predmarket.indexer import Indexer
from predmarket.kit.bodylimit import BodyLimitMiddleware
from predmarket.kit.errors import UnhandledErrorMiddleware, install_error_handlers
from predmarket.kit.pagination import CursorCodec
from predmarket.kit.requestid import RequestIdMiddleware
from predmarket.markets import router as markets
from predmarket.node import NodeClient, RetryPolicy
from predmarket.openapi import install_openapi
from predmarket.orders import router as orders
from predmarket.protocol import router as protocol
from predmarket.settings import Settings
from predmarket.store.engine import create_engine
from predmarket.transactions import router as transactions
from predmarket.tx import router as tx

# Registration point: one router per domain, in the order their paths should match.
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    tx.router,
    markets.router,
    books.router,
    orders.router,
    transactions.router,
    protocol.router,
)


def _engine(settings: Settings) -> AsyncEngine:
    url = settings.resolved_database_url()
    options: dict[str, Any] = {"echo": settings.db.echo}
    if make_url(url).get_backend_name() in ("postgresql", "postgres"):
        options.update(pool_size=settings.db.pool_size, max_overflow=settings.db.max_overflow)
        options["pool_pre_ping"] = True
    return create_engine(url, **options)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    async with AsyncExitStack() as resources:
        if settings.database_url is None:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = _engine(settings)
        resources.push_async_callback(engine.dispose)
        app.state.engine = engine
        health_service.register_check(app, "database", health_service.database_check(engine))
        # The in-memory order books, following the outbox (docs/books.md).
        app.state.books = await resources.enter_async_context(
            books_cache.running(engine, settings.books)
        )
        # The node client and the indexer (docs/indexer.md); without a node_url, none.
        app.state.node = app.state.indexer = None
        if settings.node_url:
            retry = RetryPolicy(attempts=settings.node.retries + 1)
            node = NodeClient(
                settings.node_url, timeout_s=settings.node.timeout_seconds, retry=retry
            )
            resources.push_async_callback(node.aclose)
            app.state.node = node
            health_service.register_check(app, "node", health_service.node_check(node))
            if settings.indexer.enabled:
                indexer = Indexer.from_settings(engine, node, settings.indexer)
                indexer.start()
                resources.push_async_callback(indexer.stop)
                app.state.indexer = indexer
                health_service.register_check(app, "indexer", indexer.health)
        # Next resources enter here, each with its cleanup on `resources`: the embedded devnet,
        # the realtime broker, the webhook worker.
        app.state.started_at = time.monotonic()
        yield


def create_app(settings: Settings | None = None) -> FastAPI:
    """A configured app; raises :class:`~predmarket.settings.SettingsError` on a bad config."""
    settings = settings if settings is not None else Settings()
    secret = settings.resolve_secret_key()

    app = FastAPI(
        title="predmarket",
        version=__version__,
        lifespan=lifespan,
        # The published document is the allowlist of predmarket.openapi; no docs pages.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        # One spelling per path: /v1/health/ is a 404, not a redirect.
        redirect_slashes=False,
        # FastAPI's built-in OpenTelemetry costs ~10% per request; metrics come from /metrics.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    app.state.cursors = CursorCodec(secret)
    app.state.health_checks = {}
    app.state.started_at = time.monotonic()

    install_error_handlers(app)
    # add_middleware puts each new one outside the previous: the request id is outermost.
    app.add_middleware(UnhandledErrorMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.api.max_body_bytes)
    app.add_middleware(RequestIdMiddleware)

    for router in ROUTERS:
        app.include_router(router)
    install_openapi(app)
    return app
