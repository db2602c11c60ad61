"""Health responses."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from predmarket.kit.schemas import BaseSchema, example

ComponentStatus = Literal["up", "degraded", "down", "unchecked"]


def _is_none(value: object) -> bool:
    return value is None


class Liveness(BaseSchema):
    """The process answers."""

    model_config = example({"status": "ok", "version": "0.1.0", "uptimeSeconds": 3600.25})

    status: Literal["ok"] = "ok"
    version: str
    uptime_seconds: float = Field(ge=0)


class ComponentHealth(BaseSchema):
    """One dependency: ``up``, ``degraded`` (working, e.g. lagging), ``down``, or ``unchecked``
    (no check registered in this deployment). Absent fields do not apply to the component."""

    model_config = example(
        {"status": "up", "latencyMs": 1.2},
        {"status": "degraded", "latencyMs": 3.0, "lagBlocks": 12, "lagSeconds": 45.5},
        {"status": "down", "detail": "timed out after 2.0 s"},
    )

    status: ComponentStatus
    latency_ms: Annotated[float | None, Field(ge=0, exclude_if=_is_none)] = None
    detail: Annotated[str | None, Field(exclude_if=_is_none)] = None
    lag_blocks: Annotated[int | None, Field(ge=0, exclude_if=_is_none)] = None
    lag_seconds: Annotated[float | None, Field(ge=0, exclude_if=_is_none)] = None


class Readiness(BaseSchema):
    """Ready when no checked component is down. The same body comes with 200 and 503."""

    model_config = example(
        {
            "status": "ready",
            "components": {
                "database": {"status": "up", "latencyMs": 0.8},
                "node": {"status": "up", "latencyMs": 2.1},
                "indexer": {"status": "up", "lagBlocks": 0, "lagSeconds": 0.4},
            },
        }
    )

    status: Literal["ready", "not_ready"]
    components: dict[str, ComponentHealth]
