"""The app factory: ``create_app(settings) -> FastAPI``.

Run with ``uvicorn --factory predmarket.app:create_app`` (the CLI's ``serve`` does this).

- Process resources (engine, later the node client, devnet, indexer, broker) are made in the
  lifespan, kept on ``app.state`` and released in reverse order; nothing connects at import time.
- Middleware, outermost first: request id → body size cap → last-resort 500 → auth (who is
  calling) → rate limits (docs/rate-limits.md) → FastAPI's routing with the error handlers of
  :mod:`predmarket.kit.errors`.
- A domain joins by adding its router to :data:`ROUTERS`; it is served at once and published in
  ``/openapi.json`` only where it marks routes with :func:`predmarket.openapi.public`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket import __version__
from predmarket.auth import router as auth
from predmarket.auth.middleware import AuthMiddleware
from predmarket.books import cache as books_cache
from predmarket.books import router as books
from predmarket.health import router as health
from predmarket.health import service as health_service
from predmarket.indexer import Indexer
from predmarket.keys import router as keys
from predmarket.keys.policy import enforce as enforce_scopes
from predmarket.kit.asgi import App
from predmarket.kit.bodylimit import BodyLimitMiddleware
from predmarket.kit.errors import UnhandledErrorMiddleware, install_error_handlers
from predmarket.kit.pagination import CursorCodec
from predmarket.kit.requestid import RequestIdMiddleware
from predmarket.markets import cache as markets_cache
from predmarket.markets import router as markets
from predmarket.node import NodeClient, RetryPolicy
from predmarket.openapi import install_openapi
from predmarket.orders import router as orders
from predmarket.protocol import router as protocol
from predmarket.ratelimit import RateLimiter, RateLimitMiddleware
from predmarket.ratelimit import running as rate_limit_store
from predmarket.realtime import broker as realtime_broker
from predmarket.realtime import router as realtime
from predmarket.realtime import service as realtime_service
from predmarket.settings import Settings
from predmarket.store.engine import create_engine
from predmarket.transactions import router as transactions
from predmarket.tx import router as tx
from predmarket.users import router as users
from predmarket.webhooks import dispatcher as webhook_dispatcher
from predmarket.webhooks import router as webhooks
from predmarket.webhooks import worker as webhook_worker

# Registration point: one router per domain, in the order their paths should match.
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    auth.router,
    users.users,
    users.referrals,
    keys.router,
    tx.router,
    markets.router,
    books.router,
    orders.router,
    transactions.router,
    protocol.router,
    realtime.router,
    webhooks.router,
)


def _engine(settings: Settings) -> AsyncEngine:
    url = settings.resolved_database_url()
    options: dict[str, Any] = {"echo": settings.db.echo}
    if make_url(url).get_backend_name() in ("postgresql", "postgres"):
        options.update(pool_size=settings.db.pool_size, max_overflow=settings.db.max_overflow)
        options["pool_pre_ping"] = True
    return create_engine(url, **options)


def _notify_caches(app: FastAPI) -> None:
    """New outbox rows are committed: the in-memory caches that follow the outbox poll now (the
    market-list cache is looked up on each call, whenever the lifespan creates it)."""
    app.state.books.notify()
    markets_cache = getattr(app.state, "markets_cache", None)
    if markets_cache is not None:
        markets_cache.notify()
    broker = getattr(app.state, "broker", None)
    if broker is not None:
        broker.notify()
    webhook_runner = getattr(app.state, "webhooks", None)
    if webhook_runner is not None:
        webhook_runner.notify()


@contextmanager
def _tuned_gc(settings: Settings) -> Iterator[None]:
    """While the app serves: the objects of start-up (modules, schemas, the loaded books and
    market list) frozen out of the cyclic GC, and young-generation collections 70x rarer.

    Why: a full collection walks every tracked object, and with the in-memory read models and
    1,000 stream connections that was a pause of 100+ ms on the event loop: the realtime
    fan-out's p99 went from ~180 ms to ~65 ms with this (docs/benchmarks.md). Undone on exit, so
    an app started and stopped many times in one process (the tests) leaks nothing."""
    if not settings.api.gc_tuning:
        yield
        return
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(settings.api.gc_gen0_threshold, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    async with AsyncExitStack() as resources:
        if settings.database_url is None:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = _engine(settings)
        resources.push_async_callback(engine.dispose)
        app.state.engine = engine
        # Rate-limit counters in Redis when redis_url is set (docs/rate-limits.md).
        await resources.enter_async_context(rate_limit_store(app.state.rate_limiter, settings))
        health_service.register_check(app, "database", health_service.database_check(engine))
        # The in-memory order books, following the outbox (docs/books.md).
        app.state.books = await resources.enter_async_context(
            books_cache.running(engine, settings.books)
        )
        # The in-memory market list behind GET /v1/markets, following the outbox (docs/markets.md).
        app.state.markets_cache = None
        if settings.market_list.enabled:
            app.state.markets_cache = await resources.enter_async_context(
                markets_cache.running(engine, settings.market_list)
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
                # After each committed batch the in-memory caches read the outbox at once.
                indexer = Indexer.from_settings(
                    engine, node, settings.indexer, on_commit=[lambda: _notify_caches(app)]
                )
                indexer.start()
                resources.push_async_callback(indexer.stop)
                app.state.indexer = indexer
                health_service.register_check(app, "indexer", indexer.health)
        # The realtime broker, outbox retention and health:indexer events (docs/realtime.md).
        app.state.notify_outbox = lambda: _notify_caches(app)
        app.state.broker = app.state.pruner = None
        if settings.realtime.enabled:
            app.state.broker = await resources.enter_async_context(
                realtime_broker.running(engine, settings.realtime)
            )
            app.state.pruner = realtime_service.Pruner(engine, settings.realtime)
            await resources.enter_async_context(realtime_service.started(app.state.pruner))
            if app.state.indexer is not None:
                await resources.enter_async_context(
                    realtime_service.started(
                        realtime_service.IndexerHealthPublisher.for_indexer(
                            engine, app.state.indexer, settings.realtime, app.state.notify_outbox
                        )
                    )
                )
        # The webhook dispatcher and delivery worker (docs/webhooks.md); the outbox pruner keeps
        # what the dispatcher has not queued yet.
        app.state.webhooks = None
        if settings.webhooks.enabled:
            if app.state.pruner is not None:
                app.state.pruner.add_hold(webhook_dispatcher.retention_hold)
            app.state.webhooks = await resources.enter_async_context(
                webhook_worker.running(
                    engine,
                    settings.webhooks,
                    server_secret=settings.resolve_secret_key(),
                    allow_private=settings.webhooks.private_targets_allowed(settings.profile),
                )
            )
        # Next resources enter here, each with its cleanup on `resources`: the embedded devnet.
        app.state.started_at = time.monotonic()
        with _tuned_gc(settings):
            yield


def create_app(settings: Settings | None = None) -> FastAPI:
    """A configured app; raises :class:`~predmarket.settings.SettingsError` on a bad config."""
    settings = settings if settings is not None else Settings()
    secret = settings.resolve_secret_key()

    app = App(
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
        # The scope policy of every route: 401 for failed credentials, 403 for missing scopes.
        dependencies=[Depends(enforce_scopes)],
    )
    app.state.settings = settings
    app.state.cursors = CursorCodec(secret)
    app.state.health_checks = {}
    app.state.started_at = time.monotonic()
    app.state.rate_limiter = RateLimiter(settings.limits)

    install_error_handlers(app)
    # add_middleware puts each new one outside the previous: the request id is outermost.
    app.add_middleware(RateLimitMiddleware, limiter=app.state.rate_limiter)
    app.add_middleware(AuthMiddleware)
    app.add_middleware(UnhandledErrorMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.api.max_body_bytes)
    app.add_middleware(RequestIdMiddleware)

    for router in ROUTERS:
        app.include_router(router)
    install_openapi(app)
    return app
