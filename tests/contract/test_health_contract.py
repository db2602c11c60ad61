"""GET /v1/health (liveness) and GET /v1/health/ready (readiness)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI

from predmarket.health.schemas import ComponentHealth
from predmarket.health.service import database_check, register_check
from predmarket.store.engine import create_engine

pytestmark = pytest.mark.db


class TestLiveness:
    async def test_ok_with_version_and_uptime(self, client: httpx.AsyncClient) -> None:
        r = await client.get("/v1/health")
        assert r.status_code == 200
        body = r.json()
        assert set(body) == {"status", "version", "uptimeSeconds"}
        assert body["status"] == "ok" and body["version"] == "0.1.0"
        assert 0 <= body["uptimeSeconds"] < 60

    async def test_needs_no_dependency(self, client: httpx.AsyncClient, app: FastAPI) -> None:
        async def down() -> ComponentHealth:
            raise ConnectionError

        register_check(app, "node", down)
        assert (await client.get("/v1/health")).status_code == 200


class TestReadiness:
    async def test_ready_with_the_database_up(
        self, client: httpx.AsyncClient, app: FastAPI
    ) -> None:
        app.state.health_checks.pop("node")  # the fixture's node is a dead port
        r = await client.get("/v1/health/ready")
        assert r.status_code == 200
        body = r.json()
        assert body["status"] == "ready"
        assert list(body["components"]) == ["database", "node", "indexer"]
        assert body["components"]["database"]["status"] == "up"
        assert body["components"]["database"]["latencyMs"] >= 0
        assert body["components"]["node"] == {"status": "unchecked"}
        assert body["components"]["indexer"] == {"status": "unchecked"}

    async def test_registered_checks_report(self, client: httpx.AsyncClient, app: FastAPI) -> None:
        async def node() -> ComponentHealth:
            return ComponentHealth(status="up", latency_ms=1.5)

        async def indexer() -> ComponentHealth:
            return ComponentHealth(status="degraded", lag_blocks=12, lag_seconds=30.0)

        register_check(app, "node", node)
        register_check(app, "indexer", indexer)
        r = await client.get("/v1/health/ready")
        assert r.status_code == 200  # degraded is still ready
        components = r.json()["components"]
        assert components["node"] == {"status": "up", "latencyMs": 1.5}
        assert components["indexer"]["status"] == "degraded"
        assert (components["indexer"]["lagBlocks"], components["indexer"]["lagSeconds"]) == (12, 30)

    async def test_a_failing_check_is_a_503_with_the_same_body(
        self, client: httpx.AsyncClient, app: FastAPI
    ) -> None:
        async def node() -> ComponentHealth:
            raise ConnectionRefusedError("10.0.0.7:22973 secret-host")

        register_check(app, "node", node)
        r = await client.get("/v1/health/ready")
        assert r.status_code == 503
        body = r.json()
        assert body["status"] == "not_ready"
        assert body["components"]["node"] == {"status": "down", "detail": "ConnectionRefusedError"}
        assert "secret-host" not in r.text  # the exception's text stays in the server
        assert body["components"]["database"]["status"] == "up"

    async def test_a_down_report_is_a_503(self, client: httpx.AsyncClient, app: FastAPI) -> None:
        async def indexer() -> ComponentHealth:
            return ComponentHealth(status="down", detail="stopped", lag_blocks=400)

        register_check(app, "indexer", indexer)
        r = await client.get("/v1/health/ready")
        assert r.status_code == 503
        assert r.json()["components"]["indexer"]["lagBlocks"] == 400

    async def test_a_hanging_check_times_out(self, client: httpx.AsyncClient, app: FastAPI) -> None:
        app.state.settings.api.health_check_timeout_seconds = 0.05

        async def node() -> ComponentHealth:
            await asyncio.sleep(10)
            raise AssertionError

        register_check(app, "node", node)
        r = await client.get("/v1/health/ready")
        assert r.status_code == 503
        assert r.json()["components"]["node"]["detail"].startswith("timed out")

    async def test_the_database_down(self, client: httpx.AsyncClient, app: FastAPI) -> None:
        # Nothing listens on port 9. (A broken SQLite file would leave aiosqlite's worker thread
        # posting to a closed loop after the test, an intermittent unraisable-thread warning.)
        broken = create_engine("postgresql://predmarket@127.0.0.1:9/none")
        try:
            register_check(app, "database", database_check(broken))
            r = await client.get("/v1/health/ready")
        finally:
            await broken.dispose()
        assert r.status_code == 503
        component = r.json()["components"]["database"]
        assert component["status"] == "down"
        assert component["detail"] in {"OperationalError", "ConnectionRefusedError", "OSError"}
