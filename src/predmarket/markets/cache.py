"""The in-memory market list: every market's summary row, kept current from the outbox, so
``GET /v1/markets`` is answered without a query per request (``docs/markets.md``).

How it stays right:

- **Loading.** At start every market is read in one database snapshot together with the
  outbox's last id ``E`` (the indexer writes the read model and the outbox in one transaction),
  so the list is exactly the state after event ``E``. The rows are the SQL path's own rows
  (:func:`queries.list_rows`: the summary columns, the tags, the event slug, the
  ``recently-traded`` key and the question folded by the database), so both paths compare,
  sort and render the same values.
- **Following.** One task reads ``outbox WHERE id > last_seen ORDER BY id`` every
  ``poll_interval_ms`` (at once after :meth:`MarketListCache.notify`). A ``market`` row of
  ``market:{address}:orders`` (a market created or its summary changed) or a ``trade`` row of
  ``market:{address}:fills`` names a market whose row changed; the batch's markets are read
  again from the database in one statement and replace what is held. The events say *which*
  markets changed; the rows say *what* they are, so nothing here re-derives a column.
- **Reading.** Applying a batch never awaits, so a request sees the list between batches, never
  half of one. Each market's summary JSON is rendered once per row version and status (the
  status moves with the clock at ``closeAt``); a page is a join of those bytes.

Per sort, a list of ``(sort key, id)`` kept sorted serves the keyset order and the cursors of
:mod:`predmarket.kit.pagination` (the same positions the SQL path puts in its cursors). A
category, tag, creator or ``status=resolved`` filter narrows to the markets it names when they
are few, instead of walking the whole order.

Nothing here is the only copy of anything: a restart rebuilds it from the database.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_left, bisect_right, insort
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Final

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from predmarket.books import queries as book_queries
from predmarket.kit.errors import InvalidRequest
from predmarket.kit.facets import Facets, facet_counts
from predmarket.kit.fields import FieldSelection
from predmarket.kit.follower import OutboxFollower
from predmarket.kit.pagination import CursorValue, PageRequest, paginate_items
from predmarket.markets import queries, service
from predmarket.markets.queries import MarketFilter, SortName
from predmarket.markets.schemas import MarketStatus, MarketSummary
from predmarket.settings import MarketListSettings
from predmarket.store.tables.market import market

log = logging.getLogger("predmarket.markets")

#: The sorts of ``GET /v1/markets`` and the row column each orders by (``queries.SORT_KEYS``).
_SORTS: Final[tuple[str, ...]] = tuple(queries.SORT_KEYS)
_SORT_COLUMNS: Final[tuple[str, ...]] = tuple(str(c.key) for c in queries.SORT_KEYS.values())
_SORT_INDEX: Final[dict[str, int]] = {name: n for n, name in enumerate(_SORTS)}
#: Largest ``IN (...)`` list sent at once (SQLite caps bound parameters).
_IN_CHUNK: Final = 500
#: A filter narrows to the markets it names when they are at most 1/8 of all markets: sorting
#: those few beats walking the whole order past the markets that do not match.
_NARROW_RATIO: Final = 8
#: ``lower()`` of SQLite (and of ASCII text anywhere): A-Z only.
_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_JSON_SEPARATORS: Final = (",", ":")

Key = tuple[Any, int]
"""A market's position in one sort: ``(sort key, id)``."""


def _cursor_misfit() -> InvalidRequest:
    return InvalidRequest.for_field(
        "query.cursor", "cursor does not fit this list", type="cursor_invalid"
    )


# -- one market ----------------------------------------------------------------------------------


class _Entry:
    """One market's row, what the filters compare, and its rendered summaries."""

    __slots__ = (
        "_json",
        "_wire",
        "address",
        "category",
        "close_at",
        "creator",
        "folded",
        "id",
        "keys",
        "row",
        "tags",
        "unresolved",
        "volume",
    )

    def __init__(self, row: RowMapping) -> None:
        self.row = row
        self.id = int(row["id"])
        self.address: str = row["market_address"]
        self.category: str = row["category"]
        self.creator: str = row["creator"]
        self.tags = frozenset(queries.tags_in(row))
        self.volume = int(row["volume"])
        self.unresolved = row["status"] != "resolved"
        self.close_at: datetime = row["close_at"]
        self.folded: str = row["question_folded"]
        self.keys: tuple[Key, ...] = tuple((row[c], self.id) for c in _SORT_COLUMNS)
        self._json: dict[str, bytes] = {}
        self._wire: dict[str, dict[str, Any]] = {}

    def status(self, now: datetime) -> MarketStatus:
        """As ``service.market_status``: closed from ``closeAt`` on until resolved."""
        if not self.unresolved:
            return "resolved"
        return "closed" if now >= self.close_at else "open"

    def summary(self, status: MarketStatus) -> MarketSummary:
        return MarketSummary(**service.summary_values(self.row, status))

    def json(self, status: MarketStatus) -> bytes:
        """The summary's JSON, rendered once per row version and status."""
        body = self._json.get(status)
        if body is None:
            body = self.summary(status).model_dump_json(by_alias=True).encode()
            self._json[status] = body
        return body

    def wire(self, status: MarketStatus) -> dict[str, Any]:
        """The summary as JSON values (for ``?fields=`` projections)."""
        body = self._wire.get(status)
        if body is None:
            body = self.summary(status).model_dump(mode="json", by_alias=True)
            self._wire[status] = body
        return body


def _touched_market(row: RowMapping) -> str | None:
    """The market whose row an outbox event says has changed, if any."""
    topic: str = row["topic"]
    if not topic.startswith("market:"):
        return None
    entity = row["entity"]
    if topic.endswith(":orders") and entity == "market":
        return topic[len("market:") : -len(":orders")]
    if topic.endswith(":fills") and entity == "trade":
        return topic[len("market:") : -len(":fills")]
    return None


class _Index:
    """Every market held, each sort's order, and the sets the narrowing filters use."""

    def __init__(self) -> None:
        self.entries: dict[int, _Entry] = {}
        self.by_address: dict[str, int] = {}
        self.orders: tuple[list[Key], ...] = tuple([] for _ in _SORTS)
        self.by_category: dict[str, set[int]] = {}
        self.by_tag: dict[str, set[int]] = {}
        self.by_creator: dict[str, set[int]] = {}
        self.resolved: set[int] = set()

    @classmethod
    def build(cls, entries: Iterable[_Entry]) -> _Index:
        index = cls()
        for entry in entries:
            index._link(entry)
        for keys in index.orders:
            keys.sort()
        return index

    def _link(self, entry: _Entry) -> None:
        self.entries[entry.id] = entry
        self.by_address[entry.address] = entry.id
        for keys, key in zip(self.orders, entry.keys, strict=True):
            keys.append(key)
        self.by_category.setdefault(entry.category, set()).add(entry.id)
        for tag in entry.tags:
            self.by_tag.setdefault(tag, set()).add(entry.id)
        self.by_creator.setdefault(entry.creator, set()).add(entry.id)
        if not entry.unresolved:
            self.resolved.add(entry.id)

    @staticmethod
    def _discard(groups: dict[str, set[int]], name: str, market_id: int) -> None:
        members = groups.get(name)
        if members is not None:
            members.discard(market_id)
            if not members:
                del groups[name]

    def remove(self, market_id: int) -> None:
        entry = self.entries.pop(market_id, None)
        if entry is None:
            return
        if self.by_address.get(entry.address) == market_id:
            del self.by_address[entry.address]
        for keys, key in zip(self.orders, entry.keys, strict=True):
            at = bisect_left(keys, key)
            if at < len(keys) and keys[at] == key:
                del keys[at]
        self._discard(self.by_category, entry.category, market_id)
        for tag in entry.tags:
            self._discard(self.by_tag, tag, market_id)
        self._discard(self.by_creator, entry.creator, market_id)
        self.resolved.discard(market_id)

    def put(self, entry: _Entry) -> None:
        """Add a market or replace what is held of it."""
        self.remove(entry.id)
        other = self.by_address.get(entry.address)
        if other is not None:  # an address is unique: a row under another id is gone
            self.remove(other)
        self.entries[entry.id] = entry
        self.by_address[entry.address] = entry.id
        for keys, key in zip(self.orders, entry.keys, strict=True):
            insort(keys, key)
        self.by_category.setdefault(entry.category, set()).add(entry.id)
        for tag in entry.tags:
            self.by_tag.setdefault(tag, set()).add(entry.id)
        self.by_creator.setdefault(entry.creator, set()).add(entry.id)
        if not entry.unresolved:
            self.resolved.add(entry.id)


# -- a query -------------------------------------------------------------------------------------


def _matcher(
    where: MarketFilter, terms: Sequence[Sequence[str]], now: datetime
) -> Callable[[_Entry], bool]:
    """The filter of ``MarketFilter.conditions`` as a predicate on an entry."""
    status = where.status
    category = where.category
    tags = frozenset(where.tags)
    creator = where.creator
    min_volume = where.min_volume

    def match(e: _Entry) -> bool:
        if status == "open":
            if not e.unresolved or now >= e.close_at:
                return False
        elif status == "closed":
            if not e.unresolved or now < e.close_at:
                return False
        elif status == "resolved" and e.unresolved:
            return False
        if category is not None and e.category != category:
            return False
        if tags and not tags <= e.tags:
            return False
        if creator is not None and e.creator != creator:
            return False
        if min_volume is not None and e.volume < min_volume:
            return False
        return all(any(a in e.folded for a in alternatives) for alternatives in terms)

    return match


def _json_bytes(value: Any) -> bytes:
    # What JSONResponse renders (json.dumps, UTF-8, no spaces).
    return json.dumps(value, ensure_ascii=False, separators=_JSON_SEPARATORS).encode()


class MarketListCache(OutboxFollower):
    """Every market's summary in memory; see the module's docstring. One per process
    (``app.state.markets_cache``), started and stopped by the app's lifespan (:func:`running`)."""

    label = "market list"

    def __init__(
        self, engine: AsyncEngine, *, poll_interval_s: float = 0.2, batch_size: int = 1000
    ) -> None:
        super().__init__(engine, poll_interval_s=poll_interval_s, batch_size=batch_size)
        self._dialect = engine.dialect.name
        self._index = _Index()

    # -- state -----------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once every market has been loaded; until then lists are served by SQL."""
        return self._ready

    def __len__(self) -> int:
        return len(self._index.entries)

    # -- life cycle ------------------------------------------------------------------------------

    async def _load_all(self) -> None:
        await self.reload()

    async def reload(self) -> None:
        """Replace everything held with one snapshot of the database (all markets and the
        outbox position they reflect)."""
        async with self._lock:
            async with book_queries.snapshot(self._engine) as conn:
                event_id = await queries.outbox_max_id(conn)
                rows = await self._read(conn)
            self._index = _Index.build(_Entry(r) for r in rows)
            self._last_seen = max(self._last_seen, event_id)
            self._ready = True
            log.info("market list: %d markets, at event %d", len(rows), event_id)

    # -- reading the database --------------------------------------------------------------------

    @staticmethod
    async def _read(
        conn: AsyncConnection, addresses: Sequence[str] | None = None
    ) -> list[RowMapping]:
        if addresses is None:
            return list((await conn.execute(queries.list_rows())).mappings())
        rows: list[RowMapping] = []
        for at in range(0, len(addresses), _IN_CHUNK):
            chunk = addresses[at : at + _IN_CHUNK]
            stmt = queries.list_rows(market.c.market_address.in_(chunk))
            rows.extend((await conn.execute(stmt)).mappings())
        return rows

    async def _poll_once(self) -> int:
        async with self._lock:
            async with self._engine.connect() as conn:
                events = await book_queries.outbox_after(conn, self._last_seen, self._batch_size)
                if not events:
                    return 0
                touched = sorted({a for e in events if (a := _touched_market(e)) is not None})
                # Read after the events: the rows are at least as new as the last of them.
                rows = await self._read(conn, touched) if touched else []
            # From here to the end nothing awaits: readers never see half a batch.
            index = self._index
            found = set()
            for row in rows:
                entry = _Entry(row)
                index.put(entry)
                found.add(entry.address)
            for address in touched:
                gone = index.by_address.get(address) if address not in found else None
                if gone is not None:
                    index.remove(gone)
            self._last_seen = int(events[-1]["id"])
            return len(events)

    # -- serving ---------------------------------------------------------------------------------

    def _fold_terms(self, where: MarketFilter) -> list[list[str]] | None:
        """The text terms folded as the database folds them, or None when only the database
        can: PostgreSQL lowers non-ASCII text by its locale."""
        out: list[list[str]] = []
        for alternatives in where.terms:
            folded = []
            for term in alternatives:
                if self._dialect != "sqlite" and not term.isascii():
                    return None
                folded.append(term.translate(_ASCII_LOWER))
            out.append(folded)
        return out

    def _order(self, where: MarketFilter, sort_at: int) -> list[Key]:
        """The ``(key, id)`` positions to walk, ascending: the whole sort order, or the sorted
        positions of the few markets a category, tag, creator or status filter names."""
        index = self._index
        full = index.orders[sort_at]
        groups: list[set[int]] = []
        if where.category is not None:
            groups.append(index.by_category.get(where.category, set()))
        groups.extend(index.by_tag.get(t, set()) for t in where.tags)
        if where.creator is not None:
            groups.append(index.by_creator.get(where.creator, set()))
        if where.status == "resolved":
            groups.append(index.resolved)
        if not groups:
            return full
        fewest = min(groups, key=len)
        if len(fewest) * _NARROW_RATIO > len(full):
            return full
        entries = index.entries
        return sorted(entries[i].keys[sort_at] for i in fewest)

    def _walk(
        self,
        order: list[Key],
        match: Callable[[_Entry], bool],
        *,
        descending: bool,
        after: tuple[CursorValue, ...] | None,
        floor: Any = None,
    ) -> Iterator[_Entry]:
        """The matching entries in the requested order, from just after ``after``; ``floor``
        is a lower bound of the sort key every match has (``minVolume`` under the volume
        sort), which bounds the walk."""
        entries = self._index.entries
        lo, hi = 0, len(order)
        if floor is not None:
            lo = bisect_left(order, (floor,))
        if after is not None:
            try:
                if descending:
                    hi = min(hi, bisect_left(order, after))
                else:
                    lo = max(lo, bisect_right(order, after))
            except TypeError:
                raise _cursor_misfit() from None
        positions = range(hi - 1, lo - 1, -1) if descending else range(lo, hi)
        for at in positions:
            entry = entries[order[at][1]]
            if match(entry):
                yield entry

    def page_json(
        self,
        where: MarketFilter,
        *,
        sort: SortName,
        descending: bool,
        page: PageRequest,
        facets: bool,
        fields: FieldSelection,
        now: datetime,
    ) -> bytes | None:
        """The ``GET /v1/markets`` response body, exactly what :func:`service.list_markets`
        returns for the same database state and ``now``; None when it must be asked of the
        database (not loaded yet, or a text term only the database can fold)."""
        if not self._ready:
            return None
        if page.after is not None and len(page.after) != 2:
            raise _cursor_misfit()
        terms = self._fold_terms(where)
        if terms is None:
            return None
        sort_at = _SORT_INDEX[sort]
        match = _matcher(where, terms, now)
        order = self._order(where, sort_at)
        floor = where.min_volume if sort == "volume" else None
        facet_part: Facets | None = None
        if facets or page.offset_mode:
            every = list(self._walk(order, match, descending=descending, after=None, floor=floor))
            if facets:
                facet_part = Facets(
                    category=facet_counts(e.category for e in every),
                    tag=facet_counts(t for e in every for t in e.tags),
                    status=facet_counts(e.status(now) for e in every),
                )
            result = paginate_items(
                every, page, key=lambda e: e.keys[sort_at], descending=descending
            )
            chunk, pagination = result.items, result.pagination
        else:
            walk = self._walk(order, match, descending=descending, after=page.after, floor=floor)
            chunk = []
            more = False
            for entry in walk:
                if len(chunk) == page.limit:
                    more = True
                    break
                chunk.append(entry)
            pagination = page.cursor_pagination(chunk[-1].keys[sort_at] if more else None)
        if fields.names is None:
            items = b",".join([e.json(e.status(now)) for e in chunk])
        else:
            items = b",".join([_json_bytes(fields.project(e.wire(e.status(now)))) for e in chunk])
        parts = [b'{"markets":[', items, b'],"pagination":', pagination.model_dump_json().encode()]
        if facet_part is not None:
            parts += [b',"facets":', facet_part.model_dump_json().encode()]
        parts.append(b"}")
        return b"".join(parts)


@asynccontextmanager
async def running(
    engine: AsyncEngine, settings: MarketListSettings
) -> AsyncIterator[MarketListCache]:
    """``app.state.markets_cache = await stack.enter_async_context(running(engine, …))``."""
    cache = MarketListCache(
        engine, poll_interval_s=settings.poll_interval_ms / 1000, batch_size=settings.batch_size
    )
    await cache.start()
    try:
        yield cache
    finally:
        await cache.stop()
