"""The published API description: an allowlist (spec 1.7, 9.4; style rule 10).

FastAPI's own ``/openapi.json`` and docs pages are off. ``/openapi.json`` is built here from the
routes marked public with :func:`public`; every other route stays out of it and may change without
notice. A route is published on purpose, in two places:

    @router.get("/{market_address}", response_model=Market, **public("get", errors=[NotFound]))

and a line ``GET /v1/markets/{market_address} markets:get`` in
``tests/contract/openapi_routes.txt``, which the contract test compares with the document.

What the builder adds to each public operation:
- ``operationId`` ``<tag>:<name>`` (tag in lowerCamelCase, e.g. ``developerKeys:create``); the
  route must carry exactly one of the spec's tags;
- error responses with the :class:`~predmarket.kit.errors.ErrorEnvelope` schema: the ones declared
  with ``errors=``, a 500 always, and a 400 whenever the operation takes parameters or a body
  (FastAPI's 422 ``HTTPValidationError`` is removed: validation failures are 400s here).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypedDict

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.requests import Request
from starlette.responses import Response

from predmarket import __version__
from predmarket.kit.errors import AppError, ErrorEnvelope, InternalError, InvalidRequest

OPENAPI_VERSION = "3.1.0"
MARKER = "x-predmarket-public"
_REF_PREFIX = "#/components/schemas/"
_ERROR_REF = {"$ref": _REF_PREFIX + ErrorEnvelope.__name__}
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Spec 1.9's endpoint groups, in its order; a public route carries exactly one of them.
TAGS: dict[str, str] = {
    "Health": "Liveness and readiness of the service and its dependencies.",
    "Auth": "Wallet challenges, sessions and legacy API keys.",
    "Developer keys": "Builder identities: keys, scopes, rotation.",
    "Protocol": "The canonical network, contract and limits configuration.",
    "Transactions": "Transaction status: the node's and the indexer's view.",
    "Platform": "Platform-wide settings and banners.",
    "Realtime": "Server-Sent Events stream.",
    "Webhooks": "Developer webhook subscriptions and deliveries.",
    "Markets": "Markets: lists, detail, activity.",
    "Categories": "Market categories with counts.",
    "Tags": "Market tags with counts.",
    "Events": "Linked-market groups.",
    "Search": "Search across markets, events, categories, tags and creators.",
    "Creators": "Creator reputation.",
    "Orderbook": "Live order books.",
    "Trading": "Builder trading facade.",
    "Trading receipts": "Signed receipts and their verification keys.",
    "Prices": "Price quotes.",
    "Positions": "Wallet positions.",
    "Funding": "Funding.",
    "Parlays": "Parlays.",
    "Vault": "Vault state and transactions.",
    "Disputes": "Oracle disputes.",
    "Oracle votes": "Commit-reveal oracle votes.",
    "Voting": "Governance voting.",
    "Vote": "Votes.",
    "Proposals": "Governance and market proposals.",
    "Rewards": "Rewards.",
    "Earnings": "Earnings.",
    "Referrals": "Referrals.",
    "Users": "Users.",
    "Account actions": "Account actions.",
    "Account": "Account.",
    "Leaderboard": "Leaderboard.",
}


class PublicRoute(TypedDict):
    """Keyword arguments for a route decorator; spread them with ``**public(...)``."""

    openapi_extra: dict[str, Any]
    responses: dict[int | str, dict[str, Any]]


def public(
    name: str,
    *,
    errors: Iterable[type[AppError]] = (),
    responses: Mapping[int, dict[str, Any]] | None = None,
) -> PublicRoute:
    """Publish a route as ``<tag>:<name>`` with its error responses.

    ``errors`` are the AppError classes the route may answer with (grouped by status, their codes
    listed in the description); ``responses`` adds non-envelope responses such as readiness's 503.
    """
    by_status: dict[int, list[str]] = {}
    declared: list[type[AppError]] = [*errors, InternalError]
    for err in declared:
        codes = by_status.setdefault(err.status, [])
        if err.code not in codes:
            codes.append(err.code)
    out: dict[int | str, dict[str, Any]] = {
        status: {"model": ErrorEnvelope, "description": f"Error codes: {', '.join(codes)}"}
        for status, codes in sorted(by_status.items())
    }
    for status, response in (responses or {}).items():
        out[status] = response
    return PublicRoute(openapi_extra={MARKER: name}, responses=out)


def _camel(tag: str) -> str:
    first, *rest = tag.split()
    return first.lower() + "".join(word.capitalize() for word in rest)


def _refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _operations(doc: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc.get("paths", {}).items():
        for method in _METHODS:
            if method in item:
                yield method, path, item[method]


def _publish(op: dict[str, Any], name: str, where: str) -> None:
    tags = op.get("tags") or []
    if len(tags) != 1 or tags[0] not in TAGS:
        raise ValueError(f"public route {where} needs exactly one of the spec's tags, has {tags}")
    op["operationId"] = f"{_camel(tags[0])}:{name}"
    responses: dict[str, Any] = op.setdefault("responses", {})
    validation = responses.get("422", {})
    if "HTTPValidationError" in json.dumps(validation):
        del responses["422"]
    if (op.get("parameters") or op.get("requestBody")) and "400" not in responses:
        responses["400"] = {
            "description": f"Error codes: {InvalidRequest.code}",
            "content": {"application/json": {"schema": dict(_ERROR_REF)}},
        }
    op["responses"] = dict(sorted(responses.items()))


def build_openapi(app: FastAPI) -> dict[str, Any]:
    """The public document: OpenAPI 3.1 of the routes marked with :func:`public` only."""
    full = get_openapi(
        title="predmarket",
        version=__version__,
        openapi_version=OPENAPI_VERSION,
        summary="Prediction-market trading service: REST and Server-Sent Events over "
        "on-chain binary markets.",
        description="Reads are public; writes build unsigned transactions. Errors share one "
        "envelope; lists share one pagination envelope. Anything not described here is "
        "private and may change without notice.",
        routes=app.routes,
        license_info={"name": "MIT", "identifier": "MIT"},
    )
    paths: dict[str, dict[str, Any]] = {}
    operation_ids: dict[str, str] = {}
    used_tags: set[str] = set()
    for method, path, op in _operations(full):
        name = op.pop(MARKER, None)
        if name is None:
            continue
        where = f"{method.upper()} {path}"
        _publish(op, str(name), where)
        if op["operationId"] in operation_ids:
            raise ValueError(
                f"operationId {op['operationId']} of {where} is already used by "
                f"{operation_ids[op['operationId']]}"
            )
        operation_ids[op["operationId"]] = where
        used_tags.update(op["tags"])
        paths.setdefault(path, {})[method] = op

    doc: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": full["info"],
        "tags": [{"name": t, "description": d} for t, d in TAGS.items() if t in used_tags],
        "paths": paths,
    }
    components = _reachable_components(full.get("components", {}), paths)
    if components:
        doc["components"] = components
    return doc


def _reachable_components(
    components: Mapping[str, Any], paths: Mapping[str, Any]
) -> dict[str, Any]:
    """Only the schemas (and security schemes) the public operations reach."""
    schemas: Mapping[str, Any] = components.get("schemas", {})
    keep: dict[str, Any] = {}
    pending = list(_refs(paths))
    while pending:
        ref = pending.pop()
        if not ref.startswith(_REF_PREFIX):
            continue
        name = ref.removeprefix(_REF_PREFIX)
        if name in keep or name not in schemas:
            continue
        keep[name] = schemas[name]
        pending.extend(_refs(schemas[name]))
    out: dict[str, Any] = {}
    if keep:
        out["schemas"] = dict(sorted(keep.items()))
    used_schemes = {
        scheme
        for item in paths.values()
        for op in item.values()
        for requirement in op.get("security", [])
        for scheme in requirement
    }
    schemes = {k: v for k, v in components.get("securitySchemes", {}).items() if k in used_schemes}
    if schemes:
        out["securitySchemes"] = schemes
    return out


def published_routes(doc: Mapping[str, Any]) -> list[str]:
    """``METHOD path operationId`` lines, sorted: the form of the checked-in list."""
    return sorted(
        f"{method.upper()} {path} {op['operationId']}" for method, path, op in _operations(doc)
    )


def install_openapi(app: FastAPI) -> None:
    """Serve the public document at ``/openapi.json`` (itself not part of it)."""

    async def openapi_document(request: Request) -> Response:
        body: bytes | None = getattr(request.app.state, "openapi_json", None)
        if body is None:
            body = json.dumps(build_openapi(request.app), separators=(",", ":")).encode()
            request.app.state.openapi_json = body
        return Response(body, media_type="application/json")

    app.add_api_route("/openapi.json", openapi_document, methods=["GET"], include_in_schema=False)
