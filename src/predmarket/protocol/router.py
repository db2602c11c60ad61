"""``GET /v1/protocol/config``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response
from starlette.requests import Request
from starlette.routing import BaseRoute

from predmarket.kit.deps import SettingsDep
from predmarket.kit.errors import UpstreamError, UpstreamTimeout
from predmarket.openapi import public
from predmarket.protocol import service
from predmarket.protocol.schemas import ProtocolConfig
from predmarket.tx.deps import NodeDep

router = APIRouter(prefix="/v1/protocol", tags=["Protocol"])

#: Clients may keep the document this long; it changes with a redeploy, not by itself.
CACHE_CONTROL = "public, max-age=60"


def get_config_cache(request: Request) -> service.ConfigCache:
    cache = getattr(request.app.state, "protocol_config_cache", None)
    if not isinstance(cache, service.ConfigCache):
        cache = service.ConfigCache()
        request.app.state.protocol_config_cache = cache
    return cache


def realtime_available(request: Request) -> bool:
    routes: list[BaseRoute] = request.app.routes
    enabled = request.app.state.settings.realtime.enabled
    return enabled and service.serves_realtime(str(getattr(r, "path", "")) for r in routes)


@router.get(
    "/config",
    response_model=ProtocolConfig,
    **public("config", errors=[UpstreamError, UpstreamTimeout]),
)
async def get_config(
    response: Response,
    node: NodeDep,
    settings: SettingsDep,
    cache: Annotated[service.ConfigCache, Depends(get_config_cache)],
    realtime: Annotated[bool, Depends(realtime_available)],
) -> ProtocolConfig:
    """The canonical configuration: network (id, groups, node URL for submission), contracts
    and their ABI, collateral token, limits, fees, realtime capabilities and the order book's
    version and cursor fields. Read it before each session instead of hard-coding."""
    response.headers["Cache-Control"] = CACHE_CONTROL
    return await service.protocol_config(node, settings, cache, realtime_available=realtime)
