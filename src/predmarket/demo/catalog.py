"""What the demo seeds: the markets, their metadata and how much trading each one gets.

The markets are fictional. Categories, tags and one linked event group exercise the list filters,
facets, categories, tags, events and search; the trading levels give the books, fills, prices and
sorts something to show.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Final


class Activity(enum.Enum):
    """How much a demo market trades."""

    #: No orders at all: an empty book, prices 0.5/0.5, zero volume.
    NONE = "none"
    #: Resting orders on both books, never a trade.
    BOOK = "book"
    #: A mint, a normal trade and a merge, then resting orders on both books.
    TRADED = "traded"


@dataclass(frozen=True, slots=True)
class DemoMarket:
    question: str
    category: str
    tags: tuple[str, ...]
    description: str
    #: Days from seeding to the market's close time.
    close_in_days: int
    activity: Activity
    #: Where the YES price sits (a tick 100..900); ignored for ``Activity.NONE``.
    yes_tick: int = 500
    #: Share count of the opening trades; the resting orders are fractions of it.
    size: int = 40
    event_slug: str | None = None
    event_title: str | None = None

    def metadata(self) -> bytes:
        """The ``createMarket`` metadata: UTF-8 JSON per the shared contract."""
        doc: dict[str, object] = {"tags": list(self.tags), "description": self.description}
        if self.event_slug is not None:
            doc["eventSlug"] = self.event_slug
            doc["eventTitle"] = self.event_title
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


_MIDTERMS: Final = ("us-midterms-2026", "US midterm elections 2026")

CATALOG: Final[tuple[DemoMarket, ...]] = (
    DemoMarket(
        question="Will Bitcoin trade above $150,000 on any major exchange before the end of 2026?",
        category="crypto",
        tags=("bitcoin", "price"),
        description="Resolves YES if BTC/USD prints above 150,000 on a top-5 exchange.",
        close_in_days=120,
        activity=Activity.TRADED,
        yes_tick=420,
        size=60,
    ),
    DemoMarket(
        question="Will Ethereum's Pectra-successor upgrade activate on mainnet in 2026?",
        category="crypto",
        tags=("ethereum", "upgrade"),
        description="Resolves YES when the upgrade's fork block is finalized on mainnet.",
        close_in_days=200,
        activity=Activity.TRADED,
        yes_tick=710,
        size=30,
    ),
    DemoMarket(
        question="Will the Democratic Party win a majority in the House in the 2026 midterms?",
        category="politics",
        tags=("elections", "us", "house"),
        description="Resolves on the certified results of the November 2026 elections.",
        close_in_days=90,
        activity=Activity.TRADED,
        yes_tick=580,
        size=80,
        event_slug=_MIDTERMS[0],
        event_title=_MIDTERMS[1],
    ),
    DemoMarket(
        question="Will the Republican Party keep a majority in the Senate in the 2026 midterms?",
        category="politics",
        tags=("elections", "us", "senate"),
        description="Resolves on the certified results of the November 2026 elections.",
        close_in_days=90,
        activity=Activity.TRADED,
        yes_tick=640,
        size=50,
        event_slug=_MIDTERMS[0],
        event_title=_MIDTERMS[1],
    ),
    DemoMarket(
        question="Will turnout in the 2026 US midterm elections exceed 50%?",
        category="politics",
        tags=("elections", "us", "turnout"),
        description="Resolves on the turnout of the voting-eligible population.",
        close_in_days=95,
        activity=Activity.BOOK,
        yes_tick=470,
        size=20,
        event_slug=_MIDTERMS[0],
        event_title=_MIDTERMS[1],
    ),
    DemoMarket(
        question="Will the reigning champion win the 2026 football world cup final?",
        category="sports",
        tags=("football", "world-cup"),
        description="Resolves YES if the 2022 champion wins the 2026 final.",
        close_in_days=45,
        activity=Activity.TRADED,
        yes_tick=180,
        size=40,
    ),
    DemoMarket(
        question="Will a crewed mission land on the Moon before 2028?",
        category="science",
        tags=("space", "moon"),
        description="Resolves YES on a crewed lunar landing by any agency before 2028-01-01.",
        close_in_days=365,
        activity=Activity.NONE,
    ),
    DemoMarket(
        question="Will the central bank cut its policy rate at its next meeting?",
        category="economics",
        tags=("rates", "central-bank"),
        description="Resolves YES if the announced target rate is lower than today's.",
        close_in_days=30,
        activity=Activity.TRADED,
        yes_tick=330,
        size=100,
    ),
)
