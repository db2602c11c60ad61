"""Market reads: stateless functions over one connection (the request's unit of work).

Every function takes the connection first and an optional ``now`` (the clock; tests pin it):
a market's trading state depends on the time, not only on the rows.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.alephium.address import is_valid_address
from predmarket.exchange.units import TICK_SCALE
from predmarket.kit.errors import InvalidRequest
from predmarket.kit.facets import Facets
from predmarket.kit.fields import FieldSelection
from predmarket.kit.pagination import Keyset, PageRequest, paginate, paginate_items
from predmarket.markets import _fuzzy, _trending, queries
from predmarket.markets.errors import EventNotFound, MarketNotFound
from predmarket.markets.queries import MarketFilter, SortName, Terms
from predmarket.markets.schemas import (
    Category,
    CategoryHit,
    CategoryPage,
    ClaimabilityPhase,
    ClosedBy,
    CreatorBrief,
    CreatorHit,
    EventGroup,
    EventGroupBrief,
    EventGroupPage,
    EventGroupRef,
    EventHit,
    MarketDetail,
    MarketHit,
    MarketPage,
    MarketPhases,
    MarketStats,
    MarketStatus,
    MarketSummary,
    MarketTokens,
    MatchKind,
    PayoutTicks,
    RegistrationPhase,
    ResolutionPhase,
    SearchPage,
    SearchQuery,
    SearchResult,
    SearchType,
    SettlementPhase,
    Tag,
    TagHit,
    TagPage,
    TradingPhase,
    TrendingAlgorithm,
    TrendingComponents,
    TrendingMarket,
    TrendingPage,
    TrendingWindow,
)
from predmarket.store.tables.event_group import event_group
from predmarket.store.tables.market import market

if TYPE_CHECKING:
    from predmarket.markets.cache import MarketListCache

#: Largest id a market can have (``market.id`` is a 32-bit integer column).
MAX_MARKET_ID: Final = 2**31 - 1
#: Search reads at most this many hits of each type before ranking (markets: the most traded).
SEARCH_CAP: Final = 500
#: Most terms a free-text parameter may have.
MAX_TERMS: Final = 10
# Search ranks taxonomy before events, events before markets, creators last.
_TYPE_RANK: Final[dict[str, int]] = {"category": 0, "tag": 1, "event": 2, "market": 3, "creator": 4}
#: No ``?fields=``: every field of the summary.
_ALL_FIELDS: Final = FieldSelection()
# Collateral ticks one share of (yes, no) redeems, per resolution (claims: winning share base
# unit = one collateral base unit; invalid pays half for either).
_PAYOUT_TICKS: Final[dict[str, tuple[int, int]]] = {
    "yes": (TICK_SCALE, 0),
    "no": (0, TICK_SCALE),
    "invalid": (TICK_SCALE // 2, TICK_SCALE // 2),
}


Row = Mapping[Any, Any]
"""A result row (``RowMapping``) or any mapping with the same keys."""


def utcnow() -> datetime:
    return datetime.now(UTC)


# -- input ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MarketRef:
    """A market named by its database id or its contract address."""

    id: int | None = None
    address: str | None = None


def parse_market_ref(text: str, *, field: str = "path.market") -> MarketRef:
    """Digits are an id; anything else must be a valid address."""
    if text.isascii() and text.isdigit():
        return MarketRef(id=int(text))
    if not is_valid_address(text):
        raise InvalidRequest.for_field(
            field, "expected a market id (digits) or a market contract address", type="address"
        )
    return MarketRef(address=text)


def parse_terms(text: str | None, *, field: str) -> list[str]:
    """Whitespace-separated terms of a free-text parameter (at most 10)."""
    if text is None:
        return []
    terms = text.split()
    if len(terms) > MAX_TERMS:
        raise InvalidRequest.for_field(field, f"at most {MAX_TERMS} terms", type="too_long")
    return terms


def parse_tags(text: str | None, *, field: str = "query.tags") -> list[str]:
    """``a, B ,c`` → ``["a", "b", "c"]`` (trimmed, lower case, as tags are stored)."""
    if text is None:
        return []
    tags = list(dict.fromkeys(t.strip().lower() for t in text.split(",") if t.strip()))
    if len(tags) > MAX_TERMS:
        raise InvalidRequest.for_field(field, f"at most {MAX_TERMS} tags", type="too_long")
    if any(len(t) > 64 for t in tags):
        raise InvalidRequest.for_field(field, "a tag has at most 64 characters", type="too_long")
    return tags


def check_address(text: str | None, *, field: str) -> str | None:
    if text is not None and not is_valid_address(text):
        raise InvalidRequest.for_field(field, "not a valid address", type="address")
    return text


# -- rows to schemas -----------------------------------------------------------------------------


def market_status(row: Row, now: datetime) -> MarketStatus:
    if row["status"] == "resolved":
        return "resolved"
    return "closed" if now >= row["close_at"] else "open"


def _summary_fields(row: Row, now: datetime) -> dict[str, Any]:
    return summary_values(row, market_status(row, now))


def summary_values(row: Row, status: MarketStatus) -> dict[str, Any]:
    """The :class:`MarketSummary` fields of a row of :func:`queries.summaries`, with the
    market's ``status`` at the time of the read (it moves with the clock at ``closeAt``)."""
    resolved = row["status"] == "resolved"
    return {
        "id": row["id"],
        "market_address": row["market_address"],
        "question": row["question"],
        "category": row["category"],
        "tags": queries.tags_in(row),
        "resolved": resolved,
        "final_outcome": row["resolution"] if resolved else None,
        "volume": row["volume"],
        "best_bid_yes": row["best_bid_yes"],
        "best_ask_yes": row["best_ask_yes"],
        "best_bid_no": row["best_bid_no"],
        "best_ask_no": row["best_ask_no"],
        "created_at": row["created_at"],
        "status": status,
        "close_at": row["close_at"],
        "creator": row["creator"],
        "event_slug": row["event_slug"],
        "trade_count": row["trade_count"],
        "last_trade_at": row["last_trade_at"],
        "last_price_yes": row["last_price_yes"],
    }


def summary(row: Row, now: datetime) -> MarketSummary:
    """A summary from a row of :func:`queries.summaries`."""
    return MarketSummary(**_summary_fields(row, now))


def _phases(row: Row, now: datetime) -> MarketPhases:
    resolved = row["status"] == "resolved"
    resolved_at: datetime | None = row["resolved_at"] if resolved else None
    close_at: datetime = row["close_at"]
    stops: list[tuple[datetime, ClosedBy]] = []
    if now >= close_at:
        stops.append((close_at, "close-time"))
    if resolved_at is not None:
        stops.append((resolved_at, "resolution"))
    elif resolved:
        stops.append((close_at, "resolution"))
    closed_at, closed_by = min(stops) if stops else (None, None)
    outcome = row["resolution"] if resolved else None
    payout = _PAYOUT_TICKS.get(outcome) if outcome else None
    return MarketPhases(
        registration=RegistrationPhase(
            status="registered", registered_at=row["created_at"], tx_id=row["created_tx_id"]
        ),
        trading=TradingPhase(
            status="closed" if stops else "open",
            opens_at=row["created_at"],
            closes_at=close_at,
            closed_at=closed_at,
            closed_by=closed_by,
        ),
        resolution=ResolutionPhase(
            status="resolved" if resolved else "pending",
            due_at=close_at,
            outcome=outcome,
            resolved_at=resolved_at,
            tx_id=row["resolved_tx_id"] if resolved else None,
        ),
        settlement=SettlementPhase(
            status="settled" if resolved else "pending",
            settled_at=resolved_at,
            payout=PayoutTicks(yes=payout[0], no=payout[1]) if payout else None,
        ),
        claimability=ClaimabilityPhase(
            status="claimable" if resolved else "not-claimable", claimable_from=resolved_at
        ),
    )


def _description(metadata: object) -> str | None:
    if isinstance(metadata, dict):
        text = metadata.get("description")
        if isinstance(text, str) and text:
            return text
    return None


# -- markets -------------------------------------------------------------------------------------


async def list_markets(
    db: AsyncConnection,
    *,
    page: PageRequest,
    where: MarketFilter,
    sort: SortName = "created-at",
    descending: bool = True,
    facets: bool = False,
    now: datetime | None = None,
) -> MarketPage:
    """``GET /v1/markets``: one page of the filtered, sorted markets."""
    now = now or utcnow()
    conditions = where.conditions(now)
    keyset = Keyset(queries.SORT_KEYS[sort], market.c.id, descending=descending)
    result = await paginate(db, queries.summaries(*conditions), page, keyset)
    facet_part = None
    if facets:
        facet_part = Facets(**await queries.market_facets(db, queries.market_ids(*conditions), now))
    return MarketPage(
        markets=[summary(r, now) for r in result.items],
        pagination=result.pagination,
        facets=facet_part,
    )


def market_page_json(body: MarketPage, fields: FieldSelection) -> bytes:
    """A page's JSON, its items projected onto ``fields`` (as ``FieldSelection.respond``)."""
    if fields.names is None:
        return body.model_dump_json(by_alias=True).encode()
    data = body.model_dump(mode="json", by_alias=True)
    data["markets"] = [fields.project(item) for item in data["markets"]]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


async def market_list_json(
    engine: AsyncEngine,
    cache: MarketListCache | None,
    *,
    page: PageRequest,
    where: MarketFilter,
    sort: SortName = "created-at",
    descending: bool = True,
    facets: bool = False,
    fields: FieldSelection = _ALL_FIELDS,
    now: datetime | None = None,
) -> bytes:
    """``GET /v1/markets`` as JSON: from the in-memory list (``markets.cache``) when it can
    answer, else from the database (:func:`list_markets`) — the same body either way."""
    now = now or utcnow()
    if cache is not None:
        body = cache.page_json(
            where,
            sort=sort,
            descending=descending,
            page=page,
            facets=facets,
            fields=fields,
            now=now,
        )
        if body is not None:
            return body
    async with engine.connect() as db:
        result = await list_markets(
            db, page=page, where=where, sort=sort, descending=descending, facets=facets, now=now
        )
    return market_page_json(result, fields)


async def get_market(
    db: AsyncConnection, ref: MarketRef, *, now: datetime | None = None
) -> MarketDetail | None:
    """One market with its phases, tokens, event group and statistics."""
    now = now or utcnow()
    if ref.id is not None:
        if ref.id > MAX_MARKET_ID:
            return None
        row = await queries.market_detail(db, id=ref.id)
    else:
        row = await queries.market_detail(db, address=ref.address)
    if row is None:
        return None
    last_yes: int | None = row["last_price_yes"]
    event = None
    if row["event_group_id"] is not None:
        event = EventGroupRef(
            id=row["event_group_id"], slug=row["event_slug"], title=row["event_title"]
        )
    return MarketDetail(
        **_summary_fields(row, now),
        contract_id=row["contract_id"],
        description=_description(row["metadata"]),
        tokens=MarketTokens(yes=row["yes_token_id"], no=row["no_token_id"]),
        event=event,
        phases=_phases(row, now),
        stats=MarketStats(
            volume=row["volume"],
            trade_count=row["trade_count"],
            last_trade_at=row["last_trade_at"],
            last_price_yes=last_yes,
            last_price_no=None if last_yes is None else TICK_SCALE - last_yes,
            open_interest=row["open_interest"],
        ),
        book_version=row["book_version"],
    )


async def get_market_or_raise(
    db: AsyncConnection, ref: MarketRef, *, now: datetime | None = None
) -> MarketDetail:
    detail = await get_market(db, ref, now=now)
    if detail is None:
        raise MarketNotFound()
    return detail


# -- taxonomy ------------------------------------------------------------------------------------


def _count_fields(row: Row) -> dict[str, Any]:
    return {
        "name": row["name"],
        "market_count": int(row["market_count"]),
        "open_market_count": int(row["open_market_count"] or 0),
        "resolved_market_count": int(row["resolved_market_count"] or 0),
    }


def _by_count(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Most markets first, ties by name."""
    items = [_count_fields(r) for r in rows]
    items.sort(key=_count_key)
    return items


def _count_key(item: Mapping[str, Any]) -> tuple[int, str]:
    return (-int(item["market_count"]), str(item["name"]))


async def list_categories(
    db: AsyncConnection, *, page: PageRequest, facets: bool = False, now: datetime | None = None
) -> CategoryPage:
    """``GET /v1/categories``: every category with its market counts, most used first."""
    now = now or utcnow()
    items = _by_count(await queries.category_counts(db, now))
    result = paginate_items(items, page, key=_count_key)
    facet_part = None
    if facets:
        facet_part = Facets(**await queries.market_facets(db, queries.market_ids(), now))
    return CategoryPage(
        categories=[Category(**i) for i in result.items],
        pagination=result.pagination,
        facets=facet_part,
    )


async def list_tags(
    db: AsyncConnection,
    *,
    page: PageRequest,
    category: str | None = None,
    facets: bool = False,
    now: datetime | None = None,
) -> TagPage:
    """``GET /v1/tags``: every tag with its market counts (within a category), most used first."""
    now = now or utcnow()
    items = _by_count(await queries.tag_counts(db, now, category=category))
    result = paginate_items(items, page, key=_count_key)
    facet_part = None
    if facets:
        conditions = [] if category is None else [market.c.category == category]
        facet_part = Facets(**await queries.market_facets(db, queries.market_ids(*conditions), now))
    return TagPage(
        tags=[Tag(**i) for i in result.items], pagination=result.pagination, facets=facet_part
    )


# -- events --------------------------------------------------------------------------------------


def _event(group: Row, markets: list[MarketSummary]) -> EventGroup:
    statuses = {m.status for m in markets}
    status: MarketStatus
    if "open" in statuses:
        status = "open"
    elif markets and statuses == {"resolved"}:
        status = "resolved"
    else:
        status = "closed"
    return EventGroup(
        id=group["id"],
        slug=group["slug"],
        title=group["title"],
        category=group["category"],
        created_at=group["created_at"],
        status=status,
        market_count=len(markets),
        volume=sum(m.volume for m in markets),
        markets=markets,
    )


async def _events(db: AsyncConnection, groups: Sequence[Row], now: datetime) -> list[EventGroup]:
    ids = [int(g["id"]) for g in groups]
    rows = await queries.markets_of_events(db, ids)
    return [_event(g, [summary(r, now) for r in rows.get(int(g["id"]), [])]) for g in groups]


async def list_events(
    db: AsyncConnection,
    *,
    page: PageRequest,
    category: str | None = None,
    facets: bool = False,
    now: datetime | None = None,
) -> EventGroupPage:
    """``GET /v1/events``: linked-market groups, newest first, each with its markets."""
    now = now or utcnow()
    stmt = queries.events(category=category)
    keyset = Keyset(event_group.c.created_at, event_group.c.id, descending=True)
    result = await paginate(db, stmt, page, keyset)
    facet_part = None
    if facets:
        facet_part = Facets(**await queries.market_facets(db, queries.markets_in_events(stmt), now))
    return EventGroupPage(
        events=await _events(db, result.items, now),
        pagination=result.pagination,
        facets=facet_part,
    )


async def get_event_or_raise(
    db: AsyncConnection, slug: str, *, now: datetime | None = None
) -> EventGroup:
    """One event group by its slug, with its markets."""
    now = now or utcnow()
    group = await queries.event_by_slug(db, slug)
    if group is None:
        raise EventNotFound()
    return (await _events(db, [group], now))[0]


# -- search --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hit:
    type: SearchType
    score: float
    popularity: int
    ident: str
    row: Row

    @property
    def key(self) -> tuple[int, int, int, str]:
        """Ascending = best first: score down, type rank, popularity down, then the identity."""
        return (-round(self.score * 10_000), _TYPE_RANK[self.type], -self.popularity, self.ident)


def _label_score(label: str, phrase: str) -> float:
    """How well a label matches the query phrase it is known to contain term by term."""
    text, wanted = label.casefold(), phrase.casefold()
    if text == wanted:
        return 1.0
    if text.startswith(wanted):
        return 0.9
    if any(word.startswith(wanted) for word in text.split()):
        return 0.8
    if wanted in text:
        return 0.7
    return 0.6


@dataclass(frozen=True)
class _Matcher:
    """How hits are scored: the terms (each with its alternatives and their similarities)."""

    terms: Sequence[Sequence[tuple[str, float]]]

    @property
    def sql_terms(self) -> Terms:
        return [[word for word, _ in alts] for alts in self.terms]

    def score(self, label: str) -> float:
        folded = label.casefold()
        chosen: list[str] = []
        similarity = 1.0
        for alts in self.terms:
            present = [(s, w) for w, s in alts if w.casefold() in folded] or [
                (min(s for _, s in alts), alts[0][0])
            ]
            best_similarity, best_word = max(present)
            chosen.append(best_word)
            similarity *= best_similarity
        return round(_label_score(label, " ".join(chosen)) * similarity, 4)


async def _collect(
    db: AsyncConnection,
    matcher: _Matcher,
    *,
    types: frozenset[str],
    creator_text: str | None,
    now: datetime,
) -> list[_Hit]:
    terms = matcher.sql_terms
    hits: list[_Hit] = []
    if "category" in types:
        for r in await queries.category_counts(db, now, terms=terms):
            hits.append(
                _Hit("category", matcher.score(r["name"]), int(r["market_count"]), r["name"], r)
            )
    if "tag" in types:
        for r in await queries.tag_counts(db, now, terms=terms):
            hits.append(_Hit("tag", matcher.score(r["name"]), int(r["market_count"]), r["name"], r))
    if "event" in types:
        for r in await queries.search_events(db, terms, cap=SEARCH_CAP):
            score = max(matcher.score(r["title"]), matcher.score(r["slug"]))
            hits.append(_Hit("event", score, int(r["market_count"]), r["slug"], r))
    if "market" in types:
        for r in await queries.search_markets(db, terms, cap=SEARCH_CAP):
            hits.append(
                _Hit("market", matcher.score(r["question"]), int(r["volume"]), f"{r['id']:010d}", r)
            )
    if "creator" in types and creator_text:
        for r in await queries.search_creators(db, creator_text, cap=SEARCH_CAP):
            address = str(r["address"])
            score = 1.0 if address.casefold() == creator_text.casefold() else 0.6
            hits.append(_Hit("creator", score, int(r["market_count"]), address, r))
    hits.sort(key=lambda h: h.key)
    return hits


def _search_result(
    hit: _Hit, match: MatchKind, summaries: Mapping[int, MarketSummary]
) -> SearchResult:
    row, score = hit.row, hit.score
    if hit.type == "market":
        return MarketHit(type="market", score=score, match=match, market=summaries[row["id"]])
    if hit.type == "event":
        body = EventGroupBrief(
            id=row["id"],
            slug=row["slug"],
            title=row["title"],
            category=row["category"],
            market_count=int(row["market_count"]),
        )
        return EventHit(type="event", score=score, match=match, event=body)
    if hit.type == "category":
        category = Category(**_count_fields(row))
        return CategoryHit(type="category", score=score, match=match, category=category)
    if hit.type == "tag":
        return TagHit(type="tag", score=score, match=match, tag=Tag(**_count_fields(row)))
    creator = CreatorBrief(address=row["address"], market_count=int(row["market_count"]))
    return CreatorHit(type="creator", score=score, match=match, creator=creator)


async def search(
    db: AsyncConnection,
    text: str,
    *,
    page: PageRequest,
    types: Sequence[SearchType] | None = None,
    facets: bool = False,
    now: datetime | None = None,
) -> SearchPage:
    """``GET /v1/search``: strict (substring) matches; typo-tolerant ones when there are none."""
    now = now or utcnow()
    wanted = frozenset(types or _TYPE_RANK)
    terms = parse_terms(text, field="query.q")
    if not terms:
        raise InvalidRequest.for_field("query.q", "the search text is empty", type="missing")
    # An address has no spaces: creators match on the whole text only.
    creator_text = text.strip() if len(terms) == 1 else None
    strict = _Matcher([[(t, 1.0)] for t in terms])
    hits = await _collect(db, strict, types=wanted, creator_text=creator_text, now=now)
    mode: MatchKind = "strict"
    corrections: dict[str, list[str]] = {}
    # Creators are never fuzzy-matched: a near-miss of an address is another address.
    fuzzy_types = wanted - {"creator"}
    if not hits and fuzzy_types:
        mode = "fuzzy"
        vocab = _fuzzy.vocabulary(await queries.vocabulary_texts(db))
        fuzzy_terms = _fuzzy.words(text)[:MAX_TERMS]
        found = {t: _fuzzy.alternatives(t, vocab) for t in fuzzy_terms}
        corrections = {t: [a.word for a in alts] for t, alts in found.items()}
        # Terms nothing resembles are dropped; the rest must all match.
        usable = [[(a.word, a.similarity) for a in found[t]] for t in fuzzy_terms if found[t]]
        if usable:
            hits = await _collect(
                db, _Matcher(usable), types=fuzzy_types, creator_text=None, now=now
            )
    result = paginate_items(hits, page, key=lambda h: h.key)
    market_hits = [h for h in result.items if h.type == "market"]
    rows = await queries.summaries_by_id(db, [int(h.row["id"]) for h in market_hits])
    summaries = {market_id: summary(r, now) for market_id, r in rows.items()}
    results = [_search_result(hit, mode, summaries) for hit in result.items]
    facet_part = None
    if facets:
        ids = [int(h.row["id"]) for h in hits if h.type == "market"]
        facet_part = Facets(
            **await queries.market_facets(db, queries.market_ids(market.c.id.in_(ids)), now)
        )
    return SearchPage(
        query=SearchQuery(text=text, terms=terms, mode=mode, corrections=corrections),
        results=results,
        pagination=result.pagination,
        facets=facet_part,
    )


# -- trending ------------------------------------------------------------------------------------


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MS: Final = timedelta(milliseconds=1)


def _ms(at: datetime) -> int:
    """Milliseconds since the epoch, truncated (integer arithmetic: no float rounding)."""
    return (at - _EPOCH) // _MS


def _ranking_time(page: PageRequest, now: datetime) -> datetime:
    """``now`` to the millisecond, or the time a cursor's walk started at."""
    if page.after is None:
        return _EPOCH + _ms(now) * _MS
    pinned = page.after[0]
    if len(page.after) != 3 or not isinstance(pinned, int) or isinstance(pinned, bool):
        raise InvalidRequest.for_field(
            "query.cursor", "cursor does not fit this list", type="cursor_invalid"
        )
    return _EPOCH + pinned * _MS


def trending_algorithm(now: datetime) -> TrendingAlgorithm:
    return TrendingAlgorithm(
        name=_trending.NAME,
        version=_trending.VERSION,
        description=_trending.DESCRIPTION,
        weights=dict(_trending.WEIGHTS),
        window=TrendingWindow(
            seconds=int(_trending.WINDOW.total_seconds()), start=now - _trending.WINDOW, end=now
        ),
        recency_half_life_hours=_trending.HALF_LIFE_HOURS,
    )


def _components(s: _trending.Scored) -> TrendingComponents:
    def part(c: _trending.Component) -> dict[str, Any]:
        return {
            "value": c.value,
            "score": c.score,
            "weight": c.weight,
            "contribution": c.contribution,
        }

    return TrendingComponents.model_validate(
        {
            "volume24h": part(s.volume),
            "trades24h": part(s.trades),
            "traders24h": part(s.traders),
            "recency": {
                "value": s.recency.hours,
                "last_trade_at": s.recency.last_trade_at,
                "score": s.recency.score,
                "weight": s.recency.weight,
                "contribution": s.recency.contribution,
            },
        }
    )


async def trending(
    db: AsyncConnection,
    *,
    page: PageRequest,
    category: str | None = None,
    facets: bool = False,
    now: datetime | None = None,
) -> TrendingPage:
    """``GET /v1/trending``: markets trading now, ranked by recent activity (algorithm v1).

    The ranking moves with the clock (recency decays), so a cursor pins the time it was
    computed at: every page of one walk ranks as of the first page's time.
    """
    now = _ranking_time(page, now or utcnow())
    since = now - _trending.WINDOW
    candidates = await queries.trending_candidates(db, now, category=category)
    wanted = {market_id for market_id, _ in candidates}
    activity: dict[int, _trending.Activity] = defaultdict(_trending.Activity)
    first = await queries.first_fill_id_since(db, since)
    if first is not None and wanted:
        for f in await queries.fills_between(db, first, since, now):
            market_id = int(f["market_id"])
            if market_id in wanted:
                activity[market_id].add(
                    kind=f["kind"],
                    price=int(f["price"]),
                    quantity=int(f["quantity"]),
                    maker=f["maker_owner"],
                    taker=f["taker_owner"],
                )
    ranked = _trending.rank(candidates, activity, now=now)
    position = {s.market_id: n for n, s in enumerate(ranked, start=1)}
    as_of = _ms(now)
    result = paginate_items(ranked, page, key=lambda s: (as_of, *s.sort_key))
    rows = await queries.summaries_by_id(db, [s.market_id for s in result.items])
    markets = [
        TrendingMarket(
            **_summary_fields(rows[s.market_id], now),
            rank=position[s.market_id],
            score=s.score,
            components=_components(s),
        )
        for s in result.items
    ]
    facet_part = None
    if facets:
        conditions = [queries.is_open(now)]
        if category is not None:
            conditions.append(market.c.category == category)
        facet_part = Facets(**await queries.market_facets(db, queries.market_ids(*conditions), now))
    return TrendingPage(
        algorithm=trending_algorithm(now),
        markets=markets,
        pagination=result.pagination,
        facets=facet_part,
    )
