"""Errors of the market reads."""

from __future__ import annotations

from predmarket.kit.errors import NotFound


class MarketNotFound(NotFound):
    message = "market not found"


class EventNotFound(NotFound):
    message = "event not found"
