"""Request parsing of the market reads: typed dependencies that turn query and path parameters
into the service's inputs, or a 400 naming the parameter."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends, Path, Query

from predmarket.kit.errors import InvalidRequest
from predmarket.kit.fields import FieldSelection, fields_param, parse_fields
from predmarket.kit.pagination import PageRequest, page_params
from predmarket.kit.schemas import Amount
from predmarket.markets import service
from predmarket.markets.queries import MarketFilter, StatusFilter
from predmarket.markets.schemas import (
    SEARCH_TYPES,
    Category,
    EventGroup,
    MarketSummary,
    SearchType,
    Tag,
    TrendingMarket,
)

MAX_TEXT_LENGTH = 200
ADDRESS_LENGTH = 80  # the longest address the store keeps (base58 with a ":N" group suffix)
LABEL_LENGTH = 64  # categories and tags: the registry caps a category at 64 bytes


async def market_filter(
    status: Annotated[
        StatusFilter,
        Query(
            description="open: trading now (unresolved and before closeAt); closed: past closeAt "
            "and not yet resolved; resolved; all"
        ),
    ] = "open",
    category: Annotated[
        str | None, Query(max_length=LABEL_LENGTH, description="exact category name")
    ] = None,
    tags: Annotated[
        str | None,
        Query(
            max_length=1000,
            description="comma-separated tags; a market must have all of them (AND); "
            "case-insensitive, at most 10",
        ),
    ] = None,
    q: Annotated[
        str | None,
        Query(
            max_length=MAX_TEXT_LENGTH,
            description="free text: every whitespace-separated term must occur in the question "
            "(case-insensitive substring), at most 10 terms",
        ),
    ] = None,
    creator: Annotated[
        str | None, Query(max_length=ADDRESS_LENGTH, description="address of the creator")
    ] = None,
    min_volume: Annotated[
        Amount | None,
        Query(alias="minVolume", description="minimum volume, base units (decimal string)"),
    ] = None,
) -> MarketFilter:
    return MarketFilter(
        status=status,
        category=category,
        tags=service.parse_tags(tags),
        terms=[[t] for t in service.parse_terms(q, field="query.q")],
        creator=service.check_address(creator, field="query.creator"),
        min_volume=min_volume,
    )


async def market_ref(
    market: Annotated[
        str,
        Path(
            max_length=ADDRESS_LENGTH,
            description="the market's id (digits) or its contract address",
            examples=["7", "21LXYgofiQXaQMW8gPSfhaXwvsdumdAKYmiLU9sVjmXah"],
        ),
    ],
) -> service.MarketRef:
    return service.parse_market_ref(market)


async def search_types(
    types: Annotated[
        str | None,
        Query(
            max_length=100,
            description="comma-separated result types to return: "
            + ", ".join(SEARCH_TYPES)
            + " (default: all)",
        ),
    ] = None,
) -> list[SearchType] | None:
    if types is None:
        return None
    wanted = [t.strip() for t in types.split(",") if t.strip()]
    unknown = sorted({t for t in wanted if t not in SEARCH_TYPES})
    if unknown:
        raise InvalidRequest.for_field(
            "query.types",
            f"unknown type(s) {', '.join(unknown)}; known: {', '.join(SEARCH_TYPES)}",
            type="enum",
        )
    return [t for t in SEARCH_TYPES if t in wanted] or None


_SEARCH_FIELDS = ("type", "score", "match", *SEARCH_TYPES)


async def search_fields(
    fields: Annotated[
        str | None,
        Query(
            max_length=1000,
            description="comma-separated fields to return for each result (always with type): "
            + ", ".join(_SEARCH_FIELDS),
        ),
    ] = None,
) -> FieldSelection:
    return parse_fields(fields, _SEARCH_FIELDS, ("type",))


MarketFilterDep = Annotated[MarketFilter, Depends(market_filter)]
MarketRefDep = Annotated[service.MarketRef, Depends(market_ref)]
SearchTypesDep = Annotated[list[SearchType] | None, Depends(search_types)]

MarketPageDep = Annotated[PageRequest, Depends(page_params(default_limit=50))]
TaxonomyPageDep = Annotated[PageRequest, Depends(page_params(default_limit=50))]
EventPageDep = Annotated[PageRequest, Depends(page_params(default_limit=20, max_limit=100))]
SearchPageDep = Annotated[PageRequest, Depends(page_params(default_limit=20, max_limit=100))]
TrendingPageDep = Annotated[PageRequest, Depends(page_params(default_limit=20, max_limit=100))]

MarketFields = Annotated[FieldSelection, Depends(fields_param(MarketSummary))]
CategoryFields = Annotated[FieldSelection, Depends(fields_param(Category, always=("name",)))]
TagFields = Annotated[FieldSelection, Depends(fields_param(Tag, always=("name",)))]
EventFields = Annotated[FieldSelection, Depends(fields_param(EventGroup, always=("id", "slug")))]
TrendingFields = Annotated[FieldSelection, Depends(fields_param(TrendingMarket))]
SearchFields = Annotated[FieldSelection, Depends(search_fields)]

SortParam = Annotated[
    Literal["created-at", "volume", "best-bid-yes", "recently-traded"],
    Query(description="sort key; recently-traded = by the latest trade, never-traded last"),
]
OrderParam = Annotated[
    Literal["asc", "desc"], Query(description="direction of the sort (default desc)")
]
CategoryParam = Annotated[
    str | None, Query(max_length=LABEL_LENGTH, description="exact category name")
]
