"""``?facets=true``: counts of category, tag and status values over a list's filtered rows.

The counts cover every row the filters match, not only the page returned. A facet is anything
that turns the list's filtered ``select`` into a ``(value, count)`` statement: a column or
expression with one value per row (:class:`ColumnFacet`), or a link table giving several values
per row (:class:`LinkFacet`, e.g. tags).

    facets = await count_facets(conn, filtered, {
        "category": ColumnFacet(market.c.category),
        "tag": LinkFacet(market.c.id, market_tag.c.market_id, market_tag.c.tag),
        "status": ColumnFacet(status_expression),
    })
    MarketPage(markets=..., pagination=..., facets=Facets(**facets))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from fastapi import Query
from pydantic import Field
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.kit.schemas import BaseSchema, example

DEFAULT_TOP = 50

FacetsParam = Annotated[
    bool, Query(description="add category, tag and status counts of all matching rows")
]
"""The query flag: ``facets: FacetsParam = False``."""


class FacetCount(BaseSchema):
    model_config = example({"value": "sports", "count": 12})

    value: str
    count: int = Field(ge=0)


def _is_none(value: object) -> bool:
    return value is None


class Facets(BaseSchema):
    """Value counts, most frequent first (ties by value); at most 50 values per facet."""

    model_config = example(
        {
            "category": [{"value": "sports", "count": 12}, {"value": "crypto", "count": 7}],
            "tag": [{"value": "football", "count": 9}],
            "status": [{"value": "open", "count": 15}, {"value": "resolved", "count": 4}],
        }
    )

    category: list[FacetCount]
    tag: list[FacetCount]
    status: list[FacetCount]


OptionalFacets = Annotated[Facets | None, Field(exclude_if=_is_none)]
"""A list response's ``facets`` part, absent unless requested: ``facets: OptionalFacets = None``."""


class FacetSource(Protocol):
    def statement(self, base: Select[Any]) -> Select[Any]:
        """``(value, count)`` rows over the rows ``base`` selects."""
        ...


def _plain(base: Select[Any]) -> Select[Any]:
    return base.order_by(None).limit(None).offset(None)


@dataclass(frozen=True)
class ColumnFacet:
    """One value per row: a column or expression of the list's FROM."""

    expr: ColumnElement[Any]

    def statement(self, base: Select[Any]) -> Select[Any]:
        # The base's FROM and WHERE stay; only what is selected changes.
        return (
            _plain(base)
            .with_only_columns(self.expr.label("value"), func.count().label("count"))
            .group_by(self.expr)
        )


@dataclass(frozen=True)
class LinkFacet:
    """Several values per row through a link table (``row_id`` of the list = ``link_key``)."""

    row_id: ColumnElement[Any]
    link_key: ColumnElement[Any]
    link_value: ColumnElement[Any]

    def statement(self, base: Select[Any]) -> Select[Any]:
        ids = _plain(base).with_only_columns(self.row_id)
        return (
            select(self.link_value.label("value"), func.count().label("count"))
            .where(self.link_key.in_(ids))
            .group_by(self.link_value)
        )


async def count_facets(
    conn: AsyncConnection,
    base: Select[Any],
    facets: Mapping[str, FacetSource],
    *,
    top: int = DEFAULT_TOP,
) -> dict[str, list[FacetCount]]:
    """Each facet's counts over ``base`` (a plain filtered select: no GROUP BY or DISTINCT).

    NULL values are not counted.
    """
    out: dict[str, list[FacetCount]] = {}
    for name, source in facets.items():
        stmt = source.statement(base)
        count = stmt.selected_columns["count"]
        value = stmt.selected_columns["value"]
        rows = await conn.execute(stmt.order_by(count.desc(), value.asc()).limit(top + 1))
        out[name] = [FacetCount(value=str(v), count=int(n)) for v, n in rows if v is not None][:top]
    return out


def facet_counts(values: Iterable[str | None], *, top: int = DEFAULT_TOP) -> list[FacetCount]:
    """The same counts for values held in memory (one entry per row, or per row and tag)."""
    counter = Counter(v for v in values if v is not None)
    ranked = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    return [FacetCount(value=v, count=n) for v, n in ranked[:top]]
