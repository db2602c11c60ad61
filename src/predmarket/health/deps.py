"""Dependencies of the health routes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends
from starlette.requests import Request

from predmarket.health.service import HealthCheck


def get_health_checks(request: Request) -> Mapping[str, HealthCheck]:
    checks: Mapping[str, HealthCheck] = request.app.state.health_checks
    return checks


def get_started_at(request: Request) -> float:
    return float(request.app.state.started_at)


HealthChecksDep = Annotated[Mapping[str, HealthCheck], Depends(get_health_checks)]
StartedAtDep = Annotated[float, Depends(get_started_at)]
