"""``GET /v1/health`` (liveness) and ``GET /v1/health/ready`` (readiness)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from predmarket.health import service
from predmarket.health.deps import HealthChecksDep, StartedAtDep
from predmarket.health.schemas import Liveness, Readiness
from predmarket.kit.deps import SettingsDep
from predmarket.openapi import public

router = APIRouter(prefix="/v1/health", tags=["Health"])


@router.get("", response_model=Liveness, **public("liveness"))
async def liveness(started_at: StartedAtDep) -> Liveness:
    """Liveness: the process answers; its version and uptime. Checks no dependency."""
    return service.liveness(started_at=started_at)


@router.get(
    "/ready",
    response_model=Readiness,
    **public(
        "readiness",
        responses={503: {"model": Readiness, "description": "Not ready: the same body."}},
    ),
)
async def readiness(
    response: Response, checks: HealthChecksDep, settings: SettingsDep
) -> Readiness:
    """Readiness: the database, the chain node and the indexer (with its lag); 503 when any is
    down."""
    result = await service.readiness(checks, timeout=settings.api.health_check_timeout_seconds)
    if result.status != "ready":
        response.status_code = 503
    return result
