"""A small list over a real table, to exercise pagination, fields and facets end to end.

Test-only: the router is mounted by the tests that need it and is never public.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Response
from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    case,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.kit.deps import DbDep
from predmarket.kit.facets import (
    ColumnFacet,
    Facets,
    FacetsParam,
    LinkFacet,
    OptionalFacets,
    count_facets,
)
from predmarket.kit.fields import FieldSelection, fields_param
from predmarket.kit.pagination import Keyset, PageRequest, Pagination, page_params, paginate
from predmarket.kit.schemas import Amount, BaseSchema, UtcDateTime
from predmarket.store.types import Amount as AmountColumn

meta = MetaData()
item = Table(
    "kit_probe_item",
    meta,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("name", String(40), nullable=False),
    Column("category", String(40)),
    Column("volume", AmountColumn(), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("resolved", Boolean, nullable=False),
    Index("ix_kit_probe_item_volume_id", "volume", "id"),
)
item_tag = Table(
    "kit_probe_item_tag",
    meta,
    Column("item_id", Integer, ForeignKey("kit_probe_item.id"), primary_key=True),
    Column("tag", String(40), primary_key=True),
)
STATUS = case((item.c.resolved, "resolved"), else_="open")

CATEGORIES = ["sports", "crypto", "politics", None]
TAGS = ["a", "b", "c"]
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def rows(n: int = 23) -> list[dict[str, object]]:
    """Deterministic rows with many ties in volume and created_at (ids break them)."""
    return [
        {
            "id": i,
            "name": f"item {i}",
            "category": CATEGORIES[i % 4],
            "volume": (i % 5) * 10**18 + (2**200 if i % 7 == 0 else 0),
            "created_at": T0 + timedelta(seconds=i % 6, microseconds=1000 * (i % 3)),
            "resolved": i % 3 == 0,
        }
        for i in range(1, n + 1)
    ]


def tags_of(i: int) -> list[str]:
    return [t for k, t in enumerate(TAGS) if i % (k + 2) == 0]


async def create(engine: AsyncEngine, data: list[dict[str, object]]) -> None:
    async with engine.begin() as conn:
        await conn.run_sync(meta.drop_all)
        await conn.run_sync(meta.create_all)
        await conn.execute(insert(item), data)
        links = [{"item_id": r["id"], "tag": t} for r in data for t in tags_of(int(str(r["id"])))]
        await conn.execute(insert(item_tag), links)


async def drop(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.run_sync(meta.drop_all)


async def populated(engine: AsyncEngine, n: int = 23) -> AsyncIterator[list[dict[str, object]]]:
    data = rows(n)
    await create(engine, data)
    try:
        yield data
    finally:
        await drop(engine)


class Item(BaseSchema):
    id: int
    name: str
    category: str | None
    volume: Amount
    created_at: UtcDateTime


class ItemPage(BaseSchema):
    items: list[Item]
    pagination: Pagination
    facets: OptionalFacets = None


ItemPageDep = Annotated[PageRequest, Depends(page_params(default_limit=5, max_limit=50))]
ItemFields = Annotated[FieldSelection, Depends(fields_param(Item))]

router = APIRouter(prefix="/test/items")


async def _list(
    db: DbDep,
    page: PageRequest,
    fields: FieldSelection,
    *,
    facets: bool,
    category: str | None,
    sort: str,
    order: str,
) -> ItemPage | Response:
    stmt = select(item)
    if category is not None:
        stmt = stmt.where(item.c.category == category)
    column = item.c.volume if sort == "volume" else item.c.created_at
    result = await paginate(db, stmt, page, Keyset(column, item.c.id, descending=order == "desc"))
    facet_part = None
    if facets:
        counts = await count_facets(
            db,
            stmt,
            {
                "category": ColumnFacet(item.c.category),
                "tag": LinkFacet(item.c.id, item_tag.c.item_id, item_tag.c.tag),
                "status": ColumnFacet(STATUS),
            },
        )
        facet_part = Facets(**counts)
    body = ItemPage(
        items=[Item.model_validate(dict(r)) for r in result.items],
        pagination=result.pagination,
        facets=facet_part,
    )
    return fields.respond(body, items="items")


@router.get("", response_model=ItemPage)
async def list_items(
    db: DbDep,
    page: ItemPageDep,
    fields: ItemFields,
    facets: FacetsParam = False,
    category: str | None = None,
    sort: Literal["volume", "created-at"] = "volume",
    order: Literal["asc", "desc"] = "desc",
) -> ItemPage | Response:
    return await _list(db, page, fields, facets=facets, category=category, sort=sort, order=order)


@router.get("/again", response_model=ItemPage)
async def list_items_again(
    db: DbDep,
    page: ItemPageDep,
    fields: ItemFields,
    sort: Literal["volume", "created-at"] = "volume",
    order: Literal["asc", "desc"] = "desc",
) -> ItemPage | Response:
    """The same list at another path: its cursors must not work here."""
    return await _list(db, page, fields, facets=False, category=None, sort=sort, order=order)
