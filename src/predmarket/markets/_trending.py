"""The trending ranking, version 1 ("activity-24h"): pure scoring, no I/O.

Each candidate market (trading now) gets four components, each normalised to 0..1 and weighted:

- ``volume24h``: collateral traded in the window (``Market.volume`` semantics: the notional of a
  normal trade, the quantity of a mint or merge), as ``sqrt(v / v_max)`` over the candidates —
  the square root keeps one whale market from flattening everyone else;
- ``trades24h``: fills in the window, ``n / n_max``;
- ``traders24h``: distinct makers and takers in the window, ``n / n_max``;
- ``recency``: ``0.5 ** (hours since the market's last trade / 6)``; 0 if it never traded.

``score = sum(weight * component)``, rounded to 6 decimals; ties rank the newer market (higher id)
first. Changing any of this is a new version (``docs/markets.md`` keeps the history).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from predmarket.exchange import TradeKind, notional

NAME: Final = "activity-24h"
VERSION: Final = 1
WINDOW: Final = timedelta(hours=24)
HALF_LIFE_HOURS: Final = 6.0
WEIGHTS: Final[Mapping[str, float]] = {
    "volume24h": 0.4,
    "trades24h": 0.25,
    "traders24h": 0.2,
    "recency": 0.15,
}
DESCRIPTION: Final = (
    "Markets trading now, ranked by activity in the last 24 hours. score = 0.4 * volume24h + "
    "0.25 * trades24h + 0.2 * traders24h + 0.15 * recency, where volume24h = sqrt(volume / "
    "the largest volume among the candidates), trades24h and traders24h = count / the largest "
    "count, and recency = 0.5 ** (hours since the last trade / 6), 0 if never traded. Volume "
    "counts the notional of normal trades and the quantity of mints and merges. Ties: newer "
    "market first."
)
_PLACES: Final = 6


def fill_volume(kind: str, price: int, quantity: int) -> int:
    """What one fill adds to a market's volume (``exchange.Market.volume`` semantics)."""
    if kind == TradeKind.NORMAL:
        return notional(price, quantity)
    return quantity


@dataclass
class Activity:
    """One market's fills in the window."""

    volume: int = 0
    trades: int = 0
    traders: set[str] = field(default_factory=set)

    def add(self, *, kind: str, price: int, quantity: int, maker: str, taker: str) -> None:
        self.volume += fill_volume(kind, price, quantity)
        self.trades += 1
        self.traders.update((maker, taker))


@dataclass(frozen=True)
class Component:
    value: int
    score: float
    weight: float

    @property
    def contribution(self) -> float:
        return round(self.score * self.weight, _PLACES)


@dataclass(frozen=True)
class Recency:
    hours: float | None
    last_trade_at: datetime | None
    score: float
    weight: float

    @property
    def contribution(self) -> float:
        return round(self.score * self.weight, _PLACES)


@dataclass(frozen=True)
class Scored:
    market_id: int
    score: float
    volume: Component
    trades: Component
    traders: Component
    recency: Recency

    @property
    def sort_key(self) -> tuple[int, int]:
        """Ascending order = best first: score (in millionths) down, then id down."""
        return (-round(self.score * 10**_PLACES), -self.market_id)


def _ratio(value: int, largest: int) -> float:
    return round(value / largest, _PLACES) if largest else 0.0


def rank(
    candidates: Iterable[tuple[int, datetime | None]],
    activity: Mapping[int, Activity],
    *,
    now: datetime,
) -> list[Scored]:
    """Score ``(market id, last trade time)`` candidates; best first."""
    pairs = list(candidates)
    empty = Activity()
    of = {market_id: activity.get(market_id, empty) for market_id, _ in pairs}
    max_volume = max((a.volume for a in of.values()), default=0)
    max_trades = max((a.trades for a in of.values()), default=0)
    max_traders = max((len(a.traders) for a in of.values()), default=0)
    scored: list[Scored] = []
    for market_id, last_trade_at in pairs:
        a = of[market_id]
        volume = Component(
            a.volume,
            round(math.sqrt(a.volume / max_volume), _PLACES) if max_volume else 0.0,
            WEIGHTS["volume24h"],
        )
        trades = Component(a.trades, _ratio(a.trades, max_trades), WEIGHTS["trades24h"])
        traders = Component(
            len(a.traders), _ratio(len(a.traders), max_traders), WEIGHTS["traders24h"]
        )
        if last_trade_at is None:
            recency = Recency(None, None, 0.0, WEIGHTS["recency"])
        else:
            hours = max(0.0, (now - last_trade_at).total_seconds() / 3600)
            recency = Recency(
                round(hours, 4),
                last_trade_at,
                round(0.5 ** (hours / HALF_LIFE_HOURS), _PLACES),
                WEIGHTS["recency"],
            )
        total = sum(c.contribution for c in (volume, trades, traders)) + recency.contribution
        scored.append(
            Scored(market_id, min(1.0, round(total, _PLACES)), volume, trades, traders, recency)
        )
    scored.sort(key=lambda s: s.sort_key)
    return scored
