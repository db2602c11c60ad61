"""Request parsing of the market reads: typed dependencies that turn query and path parameters
into the service's inputs, or a 400 naming the parameter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from fastapi import Depends, Path, Query
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import Request

from predmarket.kit.errors import InvalidRequest
from predmarket.kit.fields import (
    MAX_FIELDS_LENGTH,
    FieldSelection,
    fields_param,
    parse_fields,
    wire_names,
)
from predmarket.kit.pagination import (
    MAX_CURSOR_LENGTH,
    MAX_LIMIT,
    MAX_PAGE,
    PageRequest,
    cursor_codec_of,
    page_params,
    query_digest,
)
from predmarket.kit.schemas import Amount
from predmarket.markets import service
from predmarket.markets.cache import MarketListCache
from predmarket.markets.queries import MarketFilter, SortName, StatusFilter
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
_SUMMARY_FIELDS: Final = wire_names(MarketSummary)


class MarketListQuery(BaseModel):
    """The query parameters of ``GET /v1/markets``, validated in one pass (see
    :func:`market_list_request`); the OpenAPI parameters are generated from this model."""

    model_config = ConfigDict(extra="ignore")

    limit: int = Field(default=50, ge=1, le=MAX_LIMIT, description=f"page size, 1..{MAX_LIMIT}")
    cursor: str | None = Field(
        default=None,
        max_length=MAX_CURSOR_LENGTH,
        description="`pagination.nextCursor` of the previous page; same filters and sort",
    )
    page: int | None = Field(
        default=None, ge=0, le=MAX_PAGE, description="offset mode: 0-based page number"
    )
    status: StatusFilter = Field(
        default="open",
        description="open: trading now (unresolved and before closeAt); closed: past closeAt "
        "and not yet resolved; resolved; all",
    )
    sort: SortName = Field(
        default="created-at",
        description="sort key; recently-traded = by the latest trade, never-traded last",
    )
    order: Literal["asc", "desc"] = Field(
        default="desc", description="direction of the sort (default desc)"
    )
    category: str | None = Field(
        default=None, max_length=LABEL_LENGTH, description="exact category name"
    )
    tags: str | None = Field(
        default=None,
        max_length=1000,
        description="comma-separated tags; a market must have all of them (AND); "
        "case-insensitive, at most 10",
    )
    q: str | None = Field(
        default=None,
        max_length=MAX_TEXT_LENGTH,
        description="free text: every whitespace-separated term must occur in the question "
        "(case-insensitive substring), at most 10 terms",
    )
    creator: str | None = Field(
        default=None, max_length=ADDRESS_LENGTH, description="address of the creator"
    )
    min_volume: Amount | None = Field(
        default=None,
        alias="minVolume",
        description="minimum volume, base units (decimal string)",
    )
    facets: bool = Field(
        default=False, description="add category, tag and status counts of all matching rows"
    )
    fields: str | None = Field(
        default=None,
        max_length=MAX_FIELDS_LENGTH,
        description="comma-separated fields to return for each item (always with id): "
        + ", ".join(_SUMMARY_FIELDS),
    )


def query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """OpenAPI ``parameters`` (all in the query) for the fields of ``model``."""
    schema = model.model_json_schema(mode="validation")
    required = set(schema.get("required", ()))
    out: list[dict[str, Any]] = []
    for name, prop in schema["properties"].items():
        param: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": prop,
        }
        if "description" in prop:
            param["description"] = prop["description"]
        out.append(param)
    return out


MARKET_LIST_PARAMETERS: Final = query_parameters(MarketListQuery)


@dataclass(frozen=True)
class MarketListRequest:
    """A parsed ``GET /v1/markets``, and where it is answered from: the in-memory list when
    the app runs one, the database for what it cannot answer."""

    engine: AsyncEngine
    cache: MarketListCache | None
    page: PageRequest
    where: MarketFilter
    fields: FieldSelection
    sort: SortName
    descending: bool
    facets: bool


async def market_list_request(request: Request) -> MarketListRequest:
    """Every parameter of ``GET /v1/markets`` in one validation.

    The route declares no parameters of its own (they are published from
    :class:`MarketListQuery`): FastAPI's per-parameter resolution of the thirteen would cost
    this hot list more than answering it from memory does. Errors are the same 400s, naming
    ``query.<parameter>``. Nothing here opens a database connection.
    """
    try:
        query = MarketListQuery.model_validate(dict(request.query_params))
    except ValidationError as e:
        raise RequestValidationError(
            [{**err, "loc": ("query", *err["loc"])} for err in e.errors(include_url=False)]
        ) from None
    codec = cursor_codec_of(request)
    digest = query_digest(request)
    if query.page is not None:
        if query.cursor is not None:
            raise InvalidRequest.for_field(
                "query.page", "page and cursor cannot be combined", type="exclusive"
            )
        page = PageRequest(limit=query.limit, codec=codec, query=digest, page=query.page)
    else:
        after = codec.decode(query.cursor, digest) if query.cursor else None
        page = PageRequest(limit=query.limit, codec=codec, query=digest, after=after)
    where = MarketFilter(
        status=query.status,
        category=query.category,
        tags=service.parse_tags(query.tags),
        terms=[[t] for t in service.parse_terms(query.q, field="query.q")],
        creator=service.check_address(query.creator, field="query.creator"),
        min_volume=query.min_volume,
    )
    state = request.app.state
    engine = state.engine
    assert isinstance(engine, AsyncEngine)
    cache = getattr(state, "markets_cache", None)
    return MarketListRequest(
        engine=engine,
        cache=cache if isinstance(cache, MarketListCache) else None,
        page=page,
        where=where,
        fields=parse_fields(query.fields, _SUMMARY_FIELDS, ("id",)),
        sort=query.sort,
        descending=query.order == "desc",
        facets=query.facets,
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


MarketListDep = Annotated[MarketListRequest, Depends(market_list_request)]
MarketRefDep = Annotated[service.MarketRef, Depends(market_ref)]
SearchTypesDep = Annotated[list[SearchType] | None, Depends(search_types)]

TaxonomyPageDep = Annotated[PageRequest, Depends(page_params(default_limit=50))]
EventPageDep = Annotated[PageRequest, Depends(page_params(default_limit=20, max_limit=100))]
SearchPageDep = Annotated[PageRequest, Depends(page_params(default_limit=20, max_limit=100))]
TrendingPageDep = Annotated[PageRequest, Depends(page_params(default_limit=20, max_limit=100))]

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
