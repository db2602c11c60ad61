"""SQL of the market reads (SQLAlchemy Core), one function per question asked of the store.

Visibility and filter rules live in the statements. Amounts are never summed in SQL (on SQLite
they are zero-padded text): totals are computed in Python by the service.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

from sqlalchemy import ColumnElement, Select, and_, case, false, func, or_, select, true
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.kit.facets import ColumnFacet, FacetCount, LinkFacet, count_facets
from predmarket.store.tables.event_group import event_group
from predmarket.store.tables.fill import fill
from predmarket.store.tables.market import market
from predmarket.store.tables.market_tag import market_tag
from predmarket.store.tables.outbox import outbox

StatusFilter = Literal["open", "closed", "resolved", "all"]
SortName = Literal["created-at", "volume", "best-bid-yes", "recently-traded"]

#: The sort of ``GET /v1/markets`` → its key column (each has an ``(…, key, id)`` index).
SORT_KEYS: Final[dict[str, ColumnElement[Any]]] = {
    "created-at": market.c.created_at,
    "volume": market.c.volume,
    "best-bid-yes": market.c.best_bid_yes,
    # fill.id of the latest trade, 0 before the first: "recently traded" without NULLs.
    "recently-traded": market.c.last_fill_id,
}

Terms = Sequence[Sequence[str]]
"""A text match: every inner list must match (AND), by any of its alternatives (OR)."""

_SUMMARY_COLUMNS: Final = (
    market.c.id,
    market.c.market_address,
    market.c.question,
    market.c.category,
    market.c.creator,
    market.c.close_at,
    market.c.created_at,
    market.c.status,
    market.c.resolution,
    market.c.volume,
    market.c.trade_count,
    market.c.last_trade_at,
    market.c.last_price_yes,
    market.c.best_bid_yes,
    market.c.best_ask_yes,
    market.c.best_bid_no,
    market.c.best_ask_no,
    market.c.event_group_id,
)
_WITH_EVENT: Final = market.outerjoin(event_group, market.c.event_group_id == event_group.c.id)
# A market's tags in the same row (one query per page instead of two): aggregated with a
# separator no normalised tag contains (group_concat on SQLite, string_agg on PostgreSQL).
_TAG_SEPARATOR: Final = "\x1f"
_TAG_LIST: Final = (
    select(func.aggregate_strings(market_tag.c.tag, _TAG_SEPARATOR))
    .where(market_tag.c.market_id == market.c.id)
    .scalar_subquery()
    .label("tag_list")
)


def tags_in(row: Mapping[Any, Any]) -> list[str]:
    """The tags of a row selected with its ``tag_list``, alphabetical."""
    value = row["tag_list"]
    return sorted(str(value).split(_TAG_SEPARATOR)) if value else []


# -- conditions ----------------------------------------------------------------------------------


def is_open(now: datetime) -> ColumnElement[bool]:
    """Trading now: unresolved and before the close time (the contract refuses orders from
    ``closeTimeMs`` on)."""
    return and_(market.c.status == "open", market.c.close_at > now)


def is_closed(now: datetime) -> ColumnElement[bool]:
    """Past the close time, not yet resolved."""
    return and_(market.c.status == "open", market.c.close_at <= now)


def is_resolved() -> ColumnElement[bool]:
    return market.c.status == "resolved"


def status_condition(status: StatusFilter, now: datetime) -> ColumnElement[bool] | None:
    if status == "open":
        return is_open(now)
    if status == "closed":
        return is_closed(now)
    if status == "resolved":
        return is_resolved()
    return None


def status_expression(now: datetime) -> ColumnElement[str]:
    """``open`` / ``closed`` / ``resolved`` of a market row at ``now``."""
    return case(
        (market.c.status == "resolved", "resolved"),
        (market.c.close_at <= now, "closed"),
        else_="open",
    )


def text_match(column: ColumnElement[Any], terms: Terms) -> ColumnElement[bool]:
    """Case-insensitive containment of every term (by any of its alternatives).

    ``icontains`` with ``autoescape``: ``%`` and ``_`` in the text match themselves. SQLite folds
    ASCII case only; PostgreSQL folds every script.
    """
    if not terms:
        return true()
    groups = []
    for alternatives in terms:
        if not alternatives:
            return false()
        groups.append(or_(*(column.icontains(a, autoescape=True) for a in alternatives)))
    return and_(*groups)


def has_tag(name: str) -> ColumnElement[bool]:
    """A semi-join served by ``ix_market_tag_tag_market_id``."""
    return market.c.id.in_(select(market_tag.c.market_id).where(market_tag.c.tag == name))


@dataclass(frozen=True)
class MarketFilter:
    """The filters of ``GET /v1/markets`` (and of the lists built on market rows)."""

    status: StatusFilter = "all"
    category: str | None = None
    tags: Sequence[str] = ()
    terms: Terms = ()
    creator: str | None = None
    min_volume: int | None = None

    def conditions(self, now: datetime) -> list[ColumnElement[bool]]:
        out: list[ColumnElement[bool]] = []
        by_status = status_condition(self.status, now)
        if by_status is not None:
            out.append(by_status)
        if self.category is not None:
            out.append(market.c.category == self.category)
        out.extend(has_tag(t) for t in self.tags)
        if self.terms:
            out.append(text_match(market.c.question, self.terms))
        if self.creator is not None:
            out.append(market.c.creator == self.creator)
        if self.min_volume is not None:
            out.append(market.c.volume >= self.min_volume)
        return out


# -- market rows ---------------------------------------------------------------------------------


def summaries(*conditions: ColumnElement[bool]) -> Select[Any]:
    """Summary rows of the markets matching ``conditions``, with their tags (see
    :func:`tags_in`) and their event group's slug."""
    return (
        select(*_SUMMARY_COLUMNS, _TAG_LIST, event_group.c.slug.label("event_slug"))
        .select_from(_WITH_EVENT)
        .where(*conditions)
    )


def list_rows(*conditions: ColumnElement[bool]) -> Select[Any]:
    """What the in-memory market list holds of each market: the summary row, the
    ``recently-traded`` sort key and the question folded the way the text filter folds it
    (``lower()`` of the database: SQLite folds ASCII only, PostgreSQL's ILIKE every script)."""
    return summaries(*conditions).add_columns(
        market.c.last_fill_id, func.lower(market.c.question).label("question_folded")
    )


async def outbox_max_id(conn: AsyncConnection) -> int:
    """The last outbox id (0 when empty): the event a snapshot of the read model reflects."""
    return int(await conn.scalar(select(func.coalesce(func.max(outbox.c.id), 0))) or 0)


def market_ids(*conditions: ColumnElement[bool]) -> Select[Any]:
    """The plain filtered statement facets count over."""
    return select(market.c.id).where(*conditions)


async def summaries_by_id(conn: AsyncConnection, ids: Sequence[int]) -> dict[int, RowMapping]:
    if not ids:
        return {}
    rows = await conn.execute(summaries(market.c.id.in_(ids)))
    return {int(r["id"]): r for r in rows.mappings()}


async def market_detail(
    conn: AsyncConnection, *, id: int | None = None, address: str | None = None
) -> RowMapping | None:
    """Every column of one market, with its event group's id, slug and title."""
    condition = market.c.id == id if id is not None else market.c.market_address == address
    stmt = (
        select(
            market,
            _TAG_LIST,
            event_group.c.slug.label("event_slug"),
            event_group.c.title.label("event_title"),
        )
        .select_from(_WITH_EVENT)
        .where(condition)
    )
    return (await conn.execute(stmt)).mappings().first()


class _StatusFacet:
    """The status facet: the CASE is evaluated once per row in a subquery, then grouped (on
    PostgreSQL, grouping by a CASE with bound parameters would bind them twice and fail)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def statement(self, base: Select[Any]) -> Select[Any]:
        rows = (
            base.order_by(None)
            .limit(None)
            .offset(None)
            .with_only_columns(status_expression(self.now).label("value"))
            .subquery()
        )
        return select(rows.c.value, func.count().label("count")).group_by(rows.c.value)


async def market_facets(
    conn: AsyncConnection, base: Select[Any], now: datetime
) -> dict[str, list[FacetCount]]:
    """Category, tag and status counts over the markets ``base`` (a select FROM market) selects."""
    return await count_facets(
        conn,
        base,
        {
            "category": ColumnFacet(market.c.category),
            "tag": LinkFacet(market.c.id, market_tag.c.market_id, market_tag.c.tag),
            "status": _StatusFacet(now),
        },
    )


# -- taxonomy ------------------------------------------------------------------------------------


def _counts(now: datetime) -> tuple[ColumnElement[Any], ...]:
    return (
        func.count().label("market_count"),
        func.sum(case((is_open(now), 1), else_=0)).label("open_market_count"),
        func.sum(case((is_resolved(), 1), else_=0)).label("resolved_market_count"),
    )


async def category_counts(
    conn: AsyncConnection, now: datetime, *, terms: Terms = ()
) -> list[RowMapping]:
    """Every (non-empty) category with its market counts; ``terms`` match its name."""
    stmt = (
        select(market.c.category.label("name"), *_counts(now))
        .where(market.c.category != "")
        .group_by(market.c.category)
    )
    if terms:
        stmt = stmt.where(text_match(market.c.category, terms))
    return list((await conn.execute(stmt)).mappings())


async def tag_counts(
    conn: AsyncConnection, now: datetime, *, category: str | None = None, terms: Terms = ()
) -> list[RowMapping]:
    """Every tag with its market counts (within ``category``); ``terms`` match its name."""
    stmt = (
        select(market_tag.c.tag.label("name"), *_counts(now))
        .select_from(market_tag.join(market, market.c.id == market_tag.c.market_id))
        .group_by(market_tag.c.tag)
    )
    if category is not None:
        stmt = stmt.where(market.c.category == category)
    if terms:
        stmt = stmt.where(text_match(market_tag.c.tag, terms))
    return list((await conn.execute(stmt)).mappings())


# -- events --------------------------------------------------------------------------------------


def events(*, category: str | None = None) -> Select[Any]:
    stmt = select(event_group)
    if category is not None:
        stmt = stmt.where(event_group.c.category == category)
    return stmt


async def event_by_slug(conn: AsyncConnection, slug: str) -> RowMapping | None:
    stmt = select(event_group).where(event_group.c.slug == slug)
    return (await conn.execute(stmt)).mappings().first()


async def markets_of_events(
    conn: AsyncConnection, event_ids: Sequence[int]
) -> dict[int, list[RowMapping]]:
    """Summary rows of the markets of each event group, oldest first."""
    out: dict[int, list[RowMapping]] = defaultdict(list)
    if not event_ids:
        return out
    rows = await conn.execute(
        summaries(market.c.event_group_id.in_(event_ids)).order_by(
            market.c.event_group_id, market.c.id
        )
    )
    for row in rows.mappings():
        out[int(row["event_group_id"])].append(row)
    return out


def markets_in_events(events_stmt: Select[Any]) -> Select[Any]:
    """The markets of the event groups ``events_stmt`` selects (for facets)."""
    group_ids = events_stmt.order_by(None).with_only_columns(event_group.c.id)
    return market_ids(market.c.event_group_id.in_(group_ids))


# -- search --------------------------------------------------------------------------------------


async def search_markets(conn: AsyncConnection, terms: Terms, *, cap: int) -> list[RowMapping]:
    """Markets whose question matches, at most ``cap`` of them, the most traded first."""
    stmt = (
        select(market.c.id, market.c.question, market.c.volume)
        .where(text_match(market.c.question, terms))
        .order_by(market.c.volume.desc(), market.c.id.desc())
        .limit(cap)
    )
    return list((await conn.execute(stmt)).mappings())


async def search_events(conn: AsyncConnection, terms: Terms, *, cap: int) -> list[RowMapping]:
    """Event groups whose title or slug matches, with their market counts."""
    count = (
        select(func.count())
        .where(market.c.event_group_id == event_group.c.id)
        .scalar_subquery()
        .label("market_count")
    )
    stmt = (
        select(event_group, count)
        .where(or_(text_match(event_group.c.title, terms), text_match(event_group.c.slug, terms)))
        .order_by(event_group.c.id.desc())
        .limit(cap)
    )
    return list((await conn.execute(stmt)).mappings())


async def search_creators(conn: AsyncConnection, text: str, *, cap: int) -> list[RowMapping]:
    """Creators whose address contains ``text`` (case-insensitive), with market counts."""
    stmt = (
        select(market.c.creator.label("address"), func.count().label("market_count"))
        .where(market.c.creator.icontains(text, autoescape=True))
        .group_by(market.c.creator)
        .order_by(func.count().desc(), market.c.creator)
        .limit(cap)
    )
    return list((await conn.execute(stmt)).mappings())


async def vocabulary_texts(conn: AsyncConnection) -> list[str]:
    """Every text whose words make the search vocabulary: questions, categories, tags and
    event titles."""
    texts: list[str] = []
    for stmt in (
        select(market.c.question, market.c.category),
        select(market_tag.c.tag).distinct(),
        select(event_group.c.title),
    ):
        for row in await conn.execute(stmt):
            texts.extend(str(v) for v in row if v)
    return texts


# -- trending ------------------------------------------------------------------------------------


async def trending_candidates(
    conn: AsyncConnection, now: datetime, *, category: str | None = None
) -> list[tuple[int, datetime | None]]:
    """``(id, last_trade_at)`` of every market trading now."""
    stmt = select(market.c.id, market.c.last_trade_at).where(is_open(now))
    if category is not None:
        stmt = stmt.where(market.c.category == category)
    return [(int(i), t) for i, t in await conn.execute(stmt)]


async def first_fill_id_since(conn: AsyncConnection, since: datetime) -> int | None:
    """The smallest fill id traded at or after ``since``, or None.

    ``fill`` has no index on ``traded_at``, but ids follow chain order (data-model.md), so the
    traded times increase with the id: a bisection over the primary key finds the window's start
    in ~log2(fills) point reads instead of a scan.
    """
    lo, hi = (await conn.execute(select(func.min(fill.c.id), func.max(fill.c.id)))).one()
    if hi is None:
        return None

    async def first_at_or_after(fill_id: int) -> tuple[int, datetime]:
        row = (
            await conn.execute(
                select(fill.c.id, fill.c.traded_at)
                .where(fill.c.id >= fill_id)
                .order_by(fill.c.id)
                .limit(1)
            )
        ).one()
        return int(row[0]), row[1]

    _, last_at = await first_at_or_after(int(hi))
    if last_at < since:
        return None
    # Smallest x in [lo, hi] whose first fill at or after x is in the window; that predicate
    # grows with x, and hi satisfies it.
    lo, hi = int(lo), int(hi)
    while lo < hi:
        mid = (lo + hi) // 2
        found_id, found_at = await first_at_or_after(mid)
        if found_at >= since:
            hi = mid
        else:
            # Every x up to found_id leads to found_id or an earlier fill: all before the window.
            lo = found_id + 1
    return (await first_at_or_after(lo))[0]


async def fills_between(
    conn: AsyncConnection, first_id: int, since: datetime, until: datetime
) -> list[RowMapping]:
    """The fills of the window ``[since, until]``, read by primary-key range from ``first_id``."""
    stmt = select(
        fill.c.market_id,
        fill.c.kind,
        fill.c.price,
        fill.c.quantity,
        fill.c.maker_owner,
        fill.c.taker_owner,
    ).where(fill.c.id >= first_id, fill.c.traded_at >= since, fill.c.traded_at <= until)
    return list((await conn.execute(stmt)).mappings())
