"""Readiness checks: named async callables on ``app.state`` that later parts register.

The app registers ``database`` in its lifespan; the node client and the indexer register
``node`` and ``indexer`` when they start (``register_check(app, "node", check)``). A component
without a check is reported ``unchecked`` and does not make the service unready.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping

from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket import __version__
from predmarket.health.schemas import ComponentHealth, Liveness, Readiness
from predmarket.node import NodeClient

HealthCheck = Callable[[], Awaitable[ComponentHealth]]
"""Reports one component; may raise or hang (both count as down)."""

COMPONENTS = ("database", "node", "indexer")


def register_check(app: FastAPI, name: str, check: HealthCheck) -> None:
    checks: dict[str, HealthCheck] = app.state.health_checks
    checks[name] = check


def liveness(*, started_at: float) -> Liveness:
    return Liveness(version=__version__, uptime_seconds=round(time.monotonic() - started_at, 3))


async def _run(check: HealthCheck, timeout: float) -> ComponentHealth:
    started = time.perf_counter()
    try:
        result = await asyncio.wait_for(check(), timeout)
    except TimeoutError:
        return ComponentHealth(status="down", detail=f"timed out after {timeout} s")
    except Exception as e:  # a failing check is a finding, not an error of this request
        return ComponentHealth(status="down", detail=type(e).__name__)
    if result.latency_ms is None:
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        result = result.model_copy(update={"latency_ms": elapsed})
    return result


async def readiness(checks: Mapping[str, HealthCheck], *, timeout: float) -> Readiness:
    """Run every check at once, each bounded by ``timeout`` seconds."""
    names = list(dict.fromkeys([*COMPONENTS, *checks]))
    registered = [name for name in names if name in checks]
    results = await asyncio.gather(*(_run(checks[name], timeout) for name in registered))
    components = dict.fromkeys(names, ComponentHealth(status="unchecked"))
    components.update(zip(registered, results, strict=True))
    ready = all(c.status != "down" for c in components.values())
    return Readiness(status="ready" if ready else "not_ready", components=components)


def database_check(engine: AsyncEngine) -> HealthCheck:
    """``SELECT 1`` through the engine's pool."""

    async def check() -> ComponentHealth:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        return ComponentHealth(status="up")

    return check


def node_check(node: NodeClient) -> HealthCheck:
    """``GET /infos/self-clique``: up when the node answers and is synced, degraded when not."""

    async def check() -> ComponentHealth:
        clique = await node.self_clique()
        if not clique.synced:
            return ComponentHealth(status="degraded", detail="node not synced")
        return ComponentHealth(status="up")

    return check
