"""Every route of the app, and a concrete path for each: for tests that sweep the whole API
(the scope matrix, CSRF on every cookie mutation)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

from fastapi import FastAPI
from fastapi.routing import iter_route_contexts

MARKET = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"
PARAM_VALUES = {
    "address": MARKET,
    "market": MARKET,
    "marketAddress": MARKET,
    "market_address": MARKET,
    "txId": "ab" * 32,
    "key_id": "0" * 32,
    "session_id": str(uuid.uuid4()),
}
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def app_routes(app: FastAPI) -> Iterator[tuple[str, str]]:
    """``(method, path template)`` of every route the app serves."""
    for context in iter_route_contexts(app.routes):
        path, methods = context.path, context.methods
        if path is None or not methods:
            continue
        for method in sorted(methods - {"HEAD", "OPTIONS"}):
            yield method, path


def concrete(template: str) -> str:
    """The template with a plausible value in each path parameter."""
    return re.sub(r"\{([^}:]+)(?::[^}]*)?\}", lambda m: PARAM_VALUES.get(m.group(1), "x"), template)
