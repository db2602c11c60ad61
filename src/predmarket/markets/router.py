"""Market reads: ``/v1/markets``, ``/v1/markets/{market}``, ``/v1/trending``,
``/v1/categories``, ``/v1/tags``, ``/v1/events``, ``/v1/events/{slug}`` and ``/v1/search``.

Thin handlers: parse (the dependencies of :mod:`predmarket.markets.deps`), call one service
function, project ``?fields=``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from predmarket.kit.deps import DbDep
from predmarket.kit.facets import FacetsParam
from predmarket.markets import service
from predmarket.markets.deps import (
    MARKET_LIST_PARAMETERS,
    MAX_TEXT_LENGTH,
    CategoryFields,
    CategoryParam,
    EventFields,
    EventPageDep,
    MarketListDep,
    MarketRefDep,
    SearchFields,
    SearchPageDep,
    SearchTypesDep,
    TagFields,
    TaxonomyPageDep,
    TrendingFields,
    TrendingPageDep,
)
from predmarket.markets.errors import EventNotFound, MarketNotFound
from predmarket.markets.schemas import (
    CategoryPage,
    EventGroup,
    EventGroupPage,
    MarketDetail,
    MarketPage,
    SearchPage,
    TagPage,
    TrendingPage,
)
from predmarket.openapi import public

markets_router = APIRouter(prefix="/v1/markets", tags=["Markets"])
trending_router = APIRouter(prefix="/v1/trending", tags=["Markets"])
categories_router = APIRouter(prefix="/v1/categories", tags=["Categories"])
tags_router = APIRouter(prefix="/v1/tags", tags=["Tags"])
events_router = APIRouter(prefix="/v1/events", tags=["Events"])
search_router = APIRouter(prefix="/v1/search", tags=["Search"])


# The parameters are parsed in one pass by ``deps.market_list_request`` and published from its
# model (``deps.MarketListQuery``), not declared one by one: see that function.
_LIST_ROUTE = public("list")
_LIST_ROUTE["openapi_extra"]["parameters"] = MARKET_LIST_PARAMETERS


@markets_router.get("", response_model=MarketPage, **_LIST_ROUTE)
async def list_markets(req: MarketListDep) -> Response:
    """Markets, filtered and sorted; trading markets (status=open) newest first by default."""
    body = await service.market_list_json(
        req.engine,
        req.cache,
        page=req.page,
        where=req.where,
        sort=req.sort,
        descending=req.descending,
        facets=req.facets,
        fields=req.fields,
    )
    return Response(body, media_type="application/json")


@markets_router.get(
    "/{market}", response_model=MarketDetail, **public("get", errors=[MarketNotFound])
)
async def get_market(db: DbDep, market: MarketRefDep) -> MarketDetail:
    """One market by id or contract address, with its phases, tokens, event and statistics."""
    return await service.get_market_or_raise(db, market)


@trending_router.get("", response_model=TrendingPage, **public("trending"))
async def trending(
    db: DbDep,
    page: TrendingPageDep,
    fields: TrendingFields,
    category: CategoryParam = None,
    facets: FacetsParam = False,
) -> TrendingPage | Response:
    """Markets trading now ranked by recent activity, with the algorithm and each component."""
    body = await service.trending(db, page=page, category=category, facets=facets)
    return fields.respond(body, items="markets")


@categories_router.get("", response_model=CategoryPage, **public("list"))
async def list_categories(
    db: DbDep, page: TaxonomyPageDep, fields: CategoryFields, facets: FacetsParam = False
) -> CategoryPage | Response:
    """Every category with its market counts, most markets first."""
    body = await service.list_categories(db, page=page, facets=facets)
    return fields.respond(body, items="categories")


@tags_router.get("", response_model=TagPage, **public("list"))
async def list_tags(
    db: DbDep,
    page: TaxonomyPageDep,
    fields: TagFields,
    category: CategoryParam = None,
    facets: FacetsParam = False,
) -> TagPage | Response:
    """Every tag with its market counts (optionally within a category), most markets first."""
    body = await service.list_tags(db, page=page, category=category, facets=facets)
    return fields.respond(body, items="tags")


@events_router.get("", response_model=EventGroupPage, **public("list"))
async def list_events(
    db: DbDep,
    page: EventPageDep,
    fields: EventFields,
    category: CategoryParam = None,
    facets: FacetsParam = False,
) -> EventGroupPage | Response:
    """Linked-market groups, newest first, each with its markets' summaries."""
    body = await service.list_events(db, page=page, category=category, facets=facets)
    return fields.respond(body, items="events")


@events_router.get("/{slug}", response_model=EventGroup, **public("get", errors=[EventNotFound]))
async def get_event(
    db: DbDep,
    slug: Annotated[str, Path(min_length=1, max_length=128, description="the event's slug")],
) -> EventGroup:
    """One linked-market group by its slug, with its markets' summaries."""
    return await service.get_event_or_raise(db, slug)


@search_router.get("", response_model=SearchPage, **public("search"))
async def search(
    db: DbDep,
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=MAX_TEXT_LENGTH,
            description="the text; whitespace-separated terms must all match",
        ),
    ],
    page: SearchPageDep,
    types: SearchTypesDep,
    fields: SearchFields,
    facets: FacetsParam = False,
) -> SearchPage | Response:
    """Markets, events, categories, tags and creators matching the text: strict substring
    matches, or typo-tolerant ones when there are none. Results are a union on ``type``."""
    body = await service.search(db, q, page=page, types=types, facets=facets)
    return fields.respond(body, items="results")


router = APIRouter()
for _part in (
    markets_router,
    trending_router,
    categories_router,
    tags_router,
    events_router,
    search_router,
):
    router.include_router(_part)
