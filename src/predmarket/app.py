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
from predmarket.health import router as health
from predmarket.health import service as health_service
from predmarket.kit.bodylimit import BodyLimitMiddleware
from predmarket.kit.errors import UnhandledErrorMiddleware, install_error_handlers
from predmarket.kit.pagination import CursorCodec
from predmarket.kit.requestid import RequestIdMiddleware
from predmarket.openapi import install_openapi
from predmarket.settings import Settings
from predmarket.store.engine import create_engine

# Registration point: one router per domain, in the order their paths should match.
ROUTERS: tuple[APIRouter, ...] = (health.router,)


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
        # Next resources enter here, each with its cleanup on `resources`: the node client
        # (registers the "node" check), the embedded devnet, the indexer ("indexer" check),
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
