"""``?fields=a,b``: project the items of a list response onto some of their fields.

Names are the JSON (camelCase) names of the item schema's top-level fields. An unknown name is a
400 naming ``query.fields``; the identifying field(s) are always kept so a projected item can
still be told apart. The envelope around the items (``pagination``, ``facets``) is never projected.

    MarketFields = Annotated[FieldSelection, Depends(fields_param(MarketSummary))]

    @router.get("/v1/markets", response_model=MarketPage, ...)
    async def list_markets(..., fields: MarketFields) -> MarketPage | Response:
        return fields.respond(await markets.list_markets(db, ...), items="markets")
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Query
from pydantic import BaseModel
from starlette.responses import JSONResponse

from predmarket.kit.errors import InvalidRequest

M = TypeVar("M", bound=BaseModel)

MAX_FIELDS_LENGTH = 1000


def wire_names(schema: type[BaseModel]) -> tuple[str, ...]:
    """The JSON names of ``schema``'s fields, in declaration order."""
    return tuple(
        info.serialization_alias or info.alias or name for name, info in schema.model_fields.items()
    )


@dataclass(frozen=True)
class FieldSelection:
    """The fields to keep (``None``: all of them)."""

    names: frozenset[str] | None = None

    def project(self, item: Mapping[str, Any]) -> dict[str, Any]:
        if self.names is None:
            return dict(item)
        return {k: v for k, v in item.items() if k in self.names}

    def respond(self, model: M, *, items: str) -> M | JSONResponse:
        """``model`` unchanged without ``?fields=``; else its JSON with ``items`` projected."""
        if self.names is None:
            return model
        body = model.model_dump(mode="json", by_alias=True)
        body[items] = [self.project(item) for item in body[items]]
        return JSONResponse(body)


def parse_fields(raw: str | None, allowed: Iterable[str], always: Iterable[str]) -> FieldSelection:
    """``"a, b"`` → the selection; empty segments are ignored, unknown names refused."""
    if raw is None:
        return FieldSelection()
    requested = [part.strip() for part in raw.split(",") if part.strip()]
    if not requested:
        return FieldSelection()
    known = tuple(allowed)
    unknown = [name for name in requested if name not in known]
    if unknown:
        raise InvalidRequest.for_field(
            "query.fields",
            f"unknown field(s) {', '.join(sorted(set(unknown)))}; known: {', '.join(known)}",
            type="unknown_field",
        )
    return FieldSelection(frozenset(requested) | frozenset(always))


def fields_param(
    schema: type[BaseModel], *, always: Iterable[str] = ("id",)
) -> Callable[..., Awaitable[FieldSelection]]:
    """A dependency reading ``?fields=`` for lists whose items are ``schema``."""
    allowed = wire_names(schema)
    keep = tuple(always)
    missing = [name for name in keep if name not in allowed]
    if missing:
        raise ValueError(f"{schema.__name__} has no field(s) {missing} to always keep")
    description = (
        "comma-separated fields to return for each item (always with "
        f"{', '.join(keep)}): {', '.join(allowed)}"
    )

    async def dependency(
        fields: str | None = Query(None, max_length=MAX_FIELDS_LENGTH, description=description),
    ) -> FieldSelection:
        return parse_fields(fields, allowed, keep)

    return dependency
