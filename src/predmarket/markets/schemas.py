"""Responses of the market reads (spec 2.1, 4.2; the shapes the spec leaves open are designed
here and documented in ``docs/markets.md``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from predmarket.kit.facets import OptionalFacets
from predmarket.kit.pagination import Pagination
from predmarket.kit.schemas import Amount, BaseSchema, UtcDateTime, example

MarketStatus = Literal["open", "closed", "resolved"]
"""``open``: trading (before the close time, unresolved); ``closed``: past the close time and
awaiting resolution; ``resolved``: the outcome is final."""
FinalOutcome = Literal["yes", "no", "invalid"]
ClosedBy = Literal["close-time", "resolution"]
SummaryTick = Annotated[int, Field(ge=0, le=1000, description="tick 0..1000")]

_ADDRESS = "21LXYgofiQXaQMW8gPSfhaXwvsdumdAKYmiLU9sVjmXah"
_CREATOR = "14sxms3YU7F8KStxbJ6b5NSXwAMeLnfEtdyPBhj5VKdi3"
_T_CREATED = "2026-01-05T10:00:00.000Z"
_T_CLOSE = "2026-03-01T00:00:00.000Z"
_T_TRADE = "2026-01-20T08:15:30.250Z"


def _first_example(model: type[BaseSchema]) -> dict[str, Any]:
    """The first example of ``model`` (to nest it in the examples of the models that hold it)."""
    extra = model.model_config.get("json_schema_extra")
    assert isinstance(extra, dict)
    examples = extra["examples"]
    assert isinstance(examples, list)
    first = examples[0]
    assert isinstance(first, dict)
    return first


SUMMARY_EXAMPLE: dict[str, Any] = {
    "id": 7,
    "marketAddress": _ADDRESS,
    "question": "Will it rain in London on 1 March 2026?",
    "category": "weather",
    "tags": ["london", "rain"],
    "resolved": False,
    "finalOutcome": None,
    "volume": "1250000000000000000000",
    "bestBidYes": 610,
    "bestAskYes": 640,
    "bestBidNo": 360,
    "bestAskNo": 390,
    "createdAt": _T_CREATED,
    "status": "open",
    "closeAt": _T_CLOSE,
    "creator": _CREATOR,
    "eventSlug": "london-weather-march-2026",
    "tradeCount": 42,
    "lastTradeAt": _T_TRADE,
    "lastPriceYes": 625,
}


class MarketSummary(BaseSchema):
    """Spec 2.1's market summary, then the extra fields documented in ``docs/markets.md``."""

    model_config = example(SUMMARY_EXAMPLE)

    id: int = Field(description="database identifier")
    market_address: str = Field(description="on-chain contract address; used for trading")
    question: str
    category: str
    tags: list[str] = Field(description="normalised (trimmed, lower case), alphabetical")
    resolved: bool
    final_outcome: FinalOutcome | None = Field(description="null while unresolved")
    volume: Amount = Field(
        description="collateral base units traded: the notional of normal trades plus the "
        "quantity of mints and merges"
    )
    best_bid_yes: SummaryTick = Field(description="0 when the yes book has no bid")
    best_ask_yes: SummaryTick = Field(description="0 when the yes book has no ask")
    best_bid_no: SummaryTick = Field(description="0 when the no book has no bid")
    best_ask_no: SummaryTick = Field(description="0 when the no book has no ask")
    created_at: UtcDateTime = Field(description="block time of the market's creation")
    # -- extras (not in spec 2.1) --
    status: MarketStatus = Field(
        description="open (trading), closed (past closeAt, awaiting resolution) or resolved"
    )
    close_at: UtcDateTime = Field(description="trading stops at this time")
    creator: str = Field(description="address that created the market")
    event_slug: str | None = Field(description="slug of the market's event group, if any")
    trade_count: int = Field(ge=0)
    last_trade_at: UtcDateTime | None
    last_price_yes: SummaryTick | None = Field(
        description="yes tick of the latest trade (no = 1000 - yes); null before the first"
    )


class MarketPage(BaseSchema):
    """``GET /v1/markets``."""

    model_config = example(
        {
            "markets": [SUMMARY_EXAMPLE],
            "pagination": {"limit": 50, "nextCursor": "Yx3k…"},
        }
    )

    markets: list[MarketSummary]
    pagination: Pagination
    facets: OptionalFacets = None


# -- detail --------------------------------------------------------------------------------------


class RegistrationPhase(BaseSchema):
    """The market exists on chain (every market the API knows has been registered)."""

    model_config = example({"status": "registered", "registeredAt": _T_CREATED, "txId": "ab" * 32})

    status: Literal["registered"]
    registered_at: UtcDateTime
    tx_id: str = Field(description="transaction that created the market")


class TradingPhase(BaseSchema):
    """Orders are accepted from creation until the close time or the resolution."""

    model_config = example(
        {
            "status": "open",
            "opensAt": _T_CREATED,
            "closesAt": _T_CLOSE,
            "closedAt": None,
            "closedBy": None,
        },
        {
            "status": "closed",
            "opensAt": _T_CREATED,
            "closesAt": _T_CLOSE,
            "closedAt": _T_CLOSE,
            "closedBy": "close-time",
        },
    )

    status: Literal["open", "closed"]
    opens_at: UtcDateTime
    closes_at: UtcDateTime
    closed_at: UtcDateTime | None = Field(description="when trading stopped; null while open")
    closed_by: ClosedBy | None


class ResolutionPhase(BaseSchema):
    """The outcome: pending until the MarketResolved event."""

    model_config = example(
        {"status": "pending", "dueAt": _T_CLOSE, "outcome": None, "resolvedAt": None, "txId": None},
        {
            "status": "resolved",
            "dueAt": _T_CLOSE,
            "outcome": "yes",
            "resolvedAt": "2026-03-01T09:00:00.000Z",
            "txId": "cd" * 32,
        },
    )

    status: Literal["pending", "resolved"]
    due_at: UtcDateTime = Field(description="the close time; resolution is expected after it")
    outcome: FinalOutcome | None
    resolved_at: UtcDateTime | None
    tx_id: str | None


class PayoutTicks(BaseSchema):
    """Collateral one share redeems, in ticks (1000 = one collateral unit per share)."""

    model_config = example({"yes": 1000, "no": 0}, {"yes": 500, "no": 500})

    yes: int = Field(ge=0, le=1000)
    no: int = Field(ge=0, le=1000)


class SettlementPhase(BaseSchema):
    """The book is settled at resolution: resting orders are cancelled and refunded, and the
    payout of each share is fixed."""

    model_config = example(
        {"status": "pending", "settledAt": None, "payout": None},
        {
            "status": "settled",
            "settledAt": "2026-03-01T09:00:00.000Z",
            "payout": {"yes": 1000, "no": 0},
        },
    )

    status: Literal["pending", "settled"]
    settled_at: UtcDateTime | None
    payout: PayoutTicks | None


class ClaimabilityPhase(BaseSchema):
    """Holders redeem shares for collateral once the market is resolved."""

    model_config = example(
        {"status": "not-claimable", "claimableFrom": None},
        {"status": "claimable", "claimableFrom": "2026-03-01T09:00:00.000Z"},
    )

    status: Literal["not-claimable", "claimable"]
    claimable_from: UtcDateTime | None


class MarketPhases(BaseSchema):
    """The lifecycle as separate phases instead of one active flag (spec 2.1)."""

    model_config = example(
        {
            "registration": _first_example(RegistrationPhase),
            "trading": _first_example(TradingPhase),
            "resolution": _first_example(ResolutionPhase),
            "settlement": _first_example(SettlementPhase),
            "claimability": _first_example(ClaimabilityPhase),
        }
    )

    registration: RegistrationPhase
    trading: TradingPhase
    resolution: ResolutionPhase
    settlement: SettlementPhase
    claimability: ClaimabilityPhase


class MarketTokens(BaseSchema):
    """Token ids of the market's share tokens."""

    model_config = example({"yes": "a1" * 32, "no": "b2" * 32})

    yes: str
    no: str


class EventGroupRef(BaseSchema):
    """An event group a market belongs to."""

    model_config = example(
        {"id": 3, "slug": "london-weather-march-2026", "title": "London weather, March 2026"}
    )

    id: int
    slug: str
    title: str


class MarketStats(BaseSchema):
    """Trading statistics."""

    model_config = example(
        {
            "volume": "1250000000000000000000",
            "tradeCount": 42,
            "lastTradeAt": _T_TRADE,
            "lastPriceYes": 625,
            "lastPriceNo": 375,
            "openInterest": "800000000000000000000",
        }
    )

    volume: Amount
    trade_count: int = Field(ge=0)
    last_trade_at: UtcDateTime | None
    last_price_yes: SummaryTick | None
    last_price_no: SummaryTick | None
    open_interest: Amount = Field(description="complete share sets outstanding, base units")


_PHASES_EXAMPLE = _first_example(MarketPhases)


class MarketDetail(MarketSummary):
    """``GET /v1/markets/{market}``: the summary plus the phases, tokens, event and stats."""

    model_config = example(
        {
            **SUMMARY_EXAMPLE,
            "contractId": "62c66a7a5dd70c3146618063c344e531e6d4b59e379808443ce962b3abd63c5a",
            "description": "Resolves yes if the Met Office records any rain at Heathrow.",
            "tokens": {"yes": "a1" * 32, "no": "b2" * 32},
            "event": {"id": 3, "slug": "london-weather-march-2026", "title": "London weather"},
            "phases": _PHASES_EXAMPLE,
            "stats": _first_example(MarketStats),
            "bookVersion": 118,
        }
    )

    contract_id: str
    description: str | None = Field(description="from the market's metadata")
    tokens: MarketTokens
    event: EventGroupRef | None
    phases: MarketPhases
    stats: MarketStats
    book_version: int = Field(
        ge=0, description="bumped by every change to either book (the order book's version)"
    )


# -- taxonomy ------------------------------------------------------------------------------------


class Category(BaseSchema):
    """A category with its market counts."""

    model_config = example(
        {"name": "weather", "marketCount": 12, "openMarketCount": 9, "resolvedMarketCount": 2}
    )

    name: str
    market_count: int = Field(ge=0, description="all markets")
    open_market_count: int = Field(ge=0, description="markets trading now (status open)")
    resolved_market_count: int = Field(ge=0)


class CategoryPage(BaseSchema):
    """``GET /v1/categories``."""

    model_config = example(
        {
            "categories": [Category.model_config["json_schema_extra"]["examples"][0]],  # type: ignore[index]
            "pagination": {"limit": 50, "nextCursor": None},
        }
    )

    categories: list[Category]
    pagination: Pagination
    facets: OptionalFacets = None


class Tag(BaseSchema):
    """A tag with its market counts."""

    model_config = example(
        {"name": "rain", "marketCount": 5, "openMarketCount": 4, "resolvedMarketCount": 1}
    )

    name: str
    market_count: int = Field(ge=0, description="all markets")
    open_market_count: int = Field(ge=0, description="markets trading now (status open)")
    resolved_market_count: int = Field(ge=0)


class TagPage(BaseSchema):
    """``GET /v1/tags``."""

    model_config = example(
        {
            "tags": [Tag.model_config["json_schema_extra"]["examples"][0]],  # type: ignore[index]
            "pagination": {"limit": 50, "nextCursor": None},
        }
    )

    tags: list[Tag]
    pagination: Pagination
    facets: OptionalFacets = None


# -- events --------------------------------------------------------------------------------------

EVENT_EXAMPLE: dict[str, Any] = {
    "id": 3,
    "slug": "london-weather-march-2026",
    "title": "London weather, March 2026",
    "category": "weather",
    "createdAt": _T_CREATED,
    "status": "open",
    "marketCount": 1,
    "volume": "1250000000000000000000",
    "markets": [SUMMARY_EXAMPLE],
}


class EventGroup(BaseSchema):
    """A linked-market group with its markets' summaries."""

    model_config = example(EVENT_EXAMPLE)

    id: int
    slug: str
    title: str
    category: str
    created_at: UtcDateTime
    status: MarketStatus = Field(
        description="open when any market trades, resolved when all are, else closed"
    )
    market_count: int = Field(ge=0)
    volume: Amount = Field(description="sum of the markets' volumes")
    markets: list[MarketSummary] = Field(description="oldest first")


class EventGroupPage(BaseSchema):
    """``GET /v1/events``."""

    model_config = example(
        {"events": [EVENT_EXAMPLE], "pagination": {"limit": 20, "nextCursor": None}}
    )

    events: list[EventGroup]
    pagination: Pagination
    facets: OptionalFacets = None


# -- search --------------------------------------------------------------------------------------

MatchKind = Literal["strict", "fuzzy"]


class EventGroupBrief(BaseSchema):
    """An event group found by search."""

    model_config = example(
        {"id": 3, "slug": "london-weather-march-2026", "title": "London weather", "marketCount": 4}
    )

    id: int
    slug: str
    title: str
    category: str
    market_count: int = Field(ge=0)


class CreatorBrief(BaseSchema):
    """A market creator found by search."""

    model_config = example({"address": _CREATOR, "marketCount": 6})

    address: str
    market_count: int = Field(ge=0)


_HIT_DOC = (
    "score in 0..1 (higher is better); match: strict, or fuzzy when the typo-tolerant "
    "fallback found it"
)


class MarketHit(BaseSchema):
    """A market whose question matches."""

    model_config = example(
        {"type": "market", "score": 0.8, "match": "strict", "market": SUMMARY_EXAMPLE}
    )

    type: Literal["market"]
    score: float = Field(ge=0, le=1, description=_HIT_DOC)
    match: MatchKind
    market: MarketSummary


class EventHit(BaseSchema):
    """An event group whose title or slug matches."""

    model_config = example(
        {
            "type": "event",
            "score": 0.9,
            "match": "strict",
            "event": _first_example(EventGroupBrief),
        }
    )

    type: Literal["event"]
    score: float = Field(ge=0, le=1, description=_HIT_DOC)
    match: MatchKind
    event: EventGroupBrief


class CategoryHit(BaseSchema):
    """A category whose name matches."""

    model_config = example(
        {
            "type": "category",
            "score": 1.0,
            "match": "strict",
            "category": _first_example(Category),
        }
    )

    type: Literal["category"]
    score: float = Field(ge=0, le=1, description=_HIT_DOC)
    match: MatchKind
    category: Category


class TagHit(BaseSchema):
    """A tag whose name matches."""

    model_config = example(
        {
            "type": "tag",
            "score": 1.0,
            "match": "fuzzy",
            "tag": _first_example(Tag),
        }
    )

    type: Literal["tag"]
    score: float = Field(ge=0, le=1, description=_HIT_DOC)
    match: MatchKind
    tag: Tag


class CreatorHit(BaseSchema):
    """A creator whose address contains the text."""

    model_config = example(
        {
            "type": "creator",
            "score": 0.6,
            "match": "strict",
            "creator": {"address": _CREATOR, "marketCount": 6},
        }
    )

    type: Literal["creator"]
    score: float = Field(ge=0, le=1, description=_HIT_DOC)
    match: MatchKind
    creator: CreatorBrief


SearchResult = Annotated[
    MarketHit | EventHit | CategoryHit | TagHit | CreatorHit, Field(discriminator="type")
]
SearchType = Literal["market", "event", "category", "tag", "creator"]
SEARCH_TYPES: tuple[SearchType, ...] = ("market", "event", "category", "tag", "creator")


class SearchQuery(BaseSchema):
    """How the text was matched: ``strict`` found results, or it found none and the
    typo-tolerant ``fuzzy`` fallback ran with the corrected terms."""

    model_config = example(
        {
            "text": "bitcon",
            "terms": ["bitcon"],
            "mode": "fuzzy",
            "corrections": {"bitcon": ["bitcoin"]},
        }
    )

    text: str
    terms: list[str]
    mode: MatchKind
    corrections: dict[str, list[str]] = Field(
        description="fuzzy mode: the vocabulary words each term was read as"
    )


class SearchPage(BaseSchema):
    """``GET /v1/search``."""

    model_config = example(
        {
            "query": {"text": "rain", "terms": ["rain"], "mode": "strict", "corrections": {}},
            "results": [
                {
                    "type": "tag",
                    "score": 1.0,
                    "match": "strict",
                    "tag": {
                        "name": "rain",
                        "marketCount": 5,
                        "openMarketCount": 4,
                        "resolvedMarketCount": 1,
                    },
                }
            ],
            "pagination": {"limit": 20, "nextCursor": None},
        }
    )

    query: SearchQuery
    results: list[SearchResult]
    pagination: Pagination
    facets: OptionalFacets = None


# -- trending ------------------------------------------------------------------------------------


class TrendingWindow(BaseSchema):
    """The time window the activity components count."""

    model_config = example(
        {"seconds": 86400, "start": "2026-01-19T12:00:00.000Z", "end": "2026-01-20T12:00:00.000Z"}
    )

    seconds: int = Field(gt=0)
    start: UtcDateTime
    end: UtcDateTime


class TrendingAlgorithm(BaseSchema):
    """The ranking's definition, published with every response."""

    model_config = example(
        {
            "name": "activity-24h",
            "version": 1,
            "description": "…",
            "weights": {"volume24h": 0.4, "trades24h": 0.25, "traders24h": 0.2, "recency": 0.15},
            "window": _first_example(TrendingWindow),
            "recencyHalfLifeHours": 6.0,
        }
    )

    name: str
    version: int = Field(gt=0)
    description: str
    weights: dict[str, float]
    window: TrendingWindow
    recency_half_life_hours: float = Field(gt=0)


class AmountComponent(BaseSchema):
    """A component measured in base units."""

    model_config = example(
        {"value": "500000000000000000000", "score": 0.7071, "weight": 0.4, "contribution": 0.2828}
    )

    value: Amount
    score: float = Field(ge=0, le=1, description="the value normalised to 0..1")
    weight: float = Field(ge=0, le=1)
    contribution: float = Field(ge=0, le=1, description="score * weight")


class CountComponent(BaseSchema):
    """A component that counts."""

    model_config = example({"value": 12, "score": 0.5, "weight": 0.25, "contribution": 0.125})

    value: int = Field(ge=0)
    score: float = Field(ge=0, le=1, description="the value normalised to 0..1")
    weight: float = Field(ge=0, le=1)
    contribution: float = Field(ge=0, le=1, description="score * weight")


class RecencyComponent(BaseSchema):
    """How recently the market last traded."""

    model_config = example(
        {
            "value": 1.5,
            "lastTradeAt": _T_TRADE,
            "score": 0.8409,
            "weight": 0.15,
            "contribution": 0.1261,
        }
    )

    value: float | None = Field(description="hours since the last trade; null if never traded")
    last_trade_at: UtcDateTime | None
    score: float = Field(ge=0, le=1, description="0.5 ** (hours / half-life); 0 if never traded")
    weight: float = Field(ge=0, le=1)
    contribution: float = Field(ge=0, le=1, description="score * weight")


class TrendingComponents(BaseSchema):
    """Per-market component scores; ``score`` is the sum of the contributions."""

    model_config = example(
        {
            "volume24h": _first_example(AmountComponent),
            "trades24h": _first_example(CountComponent),
            "traders24h": {"value": 5, "score": 0.5, "weight": 0.2, "contribution": 0.1},
            "recency": _first_example(RecencyComponent),
        }
    )

    # Explicit names: the camelCase generator would write "volume24H".
    volume24h: AmountComponent = Field(alias="volume24h")
    trades24h: CountComponent = Field(alias="trades24h")
    traders24h: CountComponent = Field(alias="traders24h")
    recency: RecencyComponent


_TRENDING_MARKET_EXAMPLE: dict[str, Any] = {
    **SUMMARY_EXAMPLE,
    "rank": 1,
    "score": 0.6339,
    "components": _first_example(TrendingComponents),
}


class TrendingMarket(MarketSummary):
    """A market summary with its trending rank, score and components."""

    model_config = example(_TRENDING_MARKET_EXAMPLE)

    rank: int = Field(ge=1, description="1-based position in the ranking")
    score: float = Field(ge=0, le=1)
    components: TrendingComponents


class TrendingPage(BaseSchema):
    """``GET /v1/trending``."""

    model_config = example(
        {
            "algorithm": _first_example(TrendingAlgorithm),
            "markets": [_TRENDING_MARKET_EXAMPLE],
            "pagination": {"limit": 20, "nextCursor": None},
        }
    )

    algorithm: TrendingAlgorithm
    markets: list[TrendingMarket]
    pagination: Pagination
    facets: OptionalFacets = None
