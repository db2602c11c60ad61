"""Pagination: the spec 2.11 envelope, signed cursors, keyset and offset paging.

Two modes on every list:

- **cursor** (default): ``?limit=&cursor=``. A cursor is ``base64url(mac ‖ payload)`` where the
  payload holds the position of the last row returned (its sort key and id) and a digest of the
  query it belongs to, and ``mac`` is HMAC-SHA256 (truncated to 16 bytes) under a key derived from
  the server secret. A cursor that was forged or edited, or that is sent with different filters,
  sort or path than the request that produced it, is a 400 naming ``query.cursor``.
- **offset**: ``?page=N`` (0-based) returns ``page`` and ``total`` and no cursor.

Routers take a :data:`PageRequest` from a :func:`page_params` dependency; services hand it with a
SQLAlchemy Core ``select`` and a :class:`Keyset` to :func:`paginate` (or, for lists held in
memory, to :func:`paginate_items`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Query
from pydantic import Field, WithJsonSchema
from sqlalchemy import ColumnElement, Select, func, select, tuple_
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.requests import Request

from predmarket.kit.errors import InvalidRequest
from predmarket.kit.schemas import BaseSchema, example

T = TypeVar("T")

MAX_LIMIT = 200
MAX_PAGE = 2**53 - 1  # the largest integer every JSON client holds exactly
MAX_CURSOR_LENGTH = 1024
# Query parameters that do not change which rows a list holds, so they may vary between pages.
PAGING_PARAMS = frozenset({"cursor", "page", "limit", "fields", "facets"})

CursorValue = int | float | str | bool | datetime | Decimal
"""What a sort key may be made of (a NULL sort key cannot be paged: coalesce it in SQL)."""

_MAC_BYTES = 16
_VERSION = 1
_SORT_LABEL = "_page_sort"
_ID_LABEL = "_page_id"


def _is_none(value: object) -> bool:
    return value is None


class Pagination(BaseSchema):
    """Spec 2.11: ``limit`` and ``nextCursor`` always; ``page`` and ``total`` in offset mode."""

    model_config = example(
        {"limit": 50, "nextCursor": "AbC…"},
        {"limit": 50, "nextCursor": None, "page": 2, "total": 137},
    )

    limit: int = Field(ge=1, le=MAX_LIMIT, description="page size requested")
    next_cursor: str | None = Field(description="opaque; null on the last page and in offset mode")
    page: Annotated[int | None, WithJsonSchema({"type": "integer", "minimum": 0})] = Field(
        default=None, ge=0, exclude_if=_is_none, description="offset mode only (0-based)"
    )
    total: Annotated[int | None, WithJsonSchema({"type": "integer", "minimum": 0})] = Field(
        default=None, ge=0, exclude_if=_is_none, description="offset mode only"
    )


# -- cursors -----------------------------------------------------------------------------------


def _cursor_error(message: str, kind: str = "cursor_invalid") -> InvalidRequest:
    return InvalidRequest.for_field("query.cursor", message, type=kind)


def _encode_value(value: CursorValue) -> object:
    if isinstance(value, datetime):
        return {"t": value.isoformat()}
    if isinstance(value, Decimal):
        return {"d": str(value)}
    if value is None:
        raise ValueError("a NULL sort key cannot be paged; coalesce it in the query")
    return value


def _decode_value(value: object) -> CursorValue:
    if isinstance(value, dict):
        if "d" in value:
            return Decimal(str(value["d"]))
        return datetime.fromisoformat(str(value["t"]))
    if isinstance(value, int | float | str | bool):
        return value
    raise ValueError(f"unexpected cursor value {value!r}")


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    """Makes and checks cursors with a key derived from the server secret."""

    def __init__(self, secret: str) -> None:
        # A key of its own, so a cursor MAC can never be replayed as another HMAC of the service.
        self._key = hmac.new(secret.encode(), b"predmarket/cursor/v1", hashlib.sha256).digest()

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(self, position: Sequence[CursorValue], query: str) -> str:
        payload = json.dumps(
            {"v": _VERSION, "q": query, "p": [_encode_value(v) for v in position]},
            separators=(",", ":"),
        ).encode()
        return _b64encode(self._mac(payload) + payload)

    def decode(self, token: str, query: str) -> tuple[CursorValue, ...]:
        """The position in ``token``, or :class:`InvalidRequest` naming ``query.cursor``."""
        try:
            raw = _b64decode(token)
        except (binascii.Error, ValueError):
            raise _cursor_error("cursor is not a cursor this server issued") from None
        mac, payload = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
        if len(mac) != _MAC_BYTES or not hmac.compare_digest(mac, self._mac(payload)):
            raise _cursor_error("cursor is not a cursor this server issued")
        try:
            data = json.loads(payload)
            if data["v"] != _VERSION:
                raise ValueError("version")
            issued_for = data["q"]
            position = tuple(_decode_value(v) for v in data["p"])
        except (ValueError, KeyError, TypeError, ArithmeticError):
            raise _cursor_error("cursor is not a cursor this server issued") from None
        if not hmac.compare_digest(str(issued_for), query):
            raise _cursor_error(
                "cursor belongs to a different query: repeat the filters and sort of the request "
                "that returned it, or start again without a cursor",
                "cursor_query_mismatch",
            )
        return position


def query_digest(request: Request) -> str:
    """What pins a cursor to its list: the path and every parameter except paging ones.

    Parameter order does not matter; values are compared as sent.
    """
    params = sorted((k, v) for k, v in request.query_params.multi_items() if k not in PAGING_PARAMS)
    material = json.dumps([request.url.path, params], separators=(",", ":")).encode()
    return hashlib.sha256(material).hexdigest()[:32]


# -- the request side --------------------------------------------------------------------------


@dataclass(frozen=True)
class PageRequest:
    """One list request's paging: a limit and either a cursor position, a page, or neither."""

    limit: int
    codec: CursorCodec
    query: str
    after: tuple[CursorValue, ...] | None = None
    page: int | None = None

    @property
    def offset_mode(self) -> bool:
        return self.page is not None

    def cursor_for(self, position: Sequence[CursorValue]) -> str:
        """The cursor that continues after ``position`` (sort key values, then the id)."""
        return self.codec.encode(position, self.query)

    def offset_pagination(self, total: int) -> Pagination:
        return Pagination(limit=self.limit, next_cursor=None, page=self.page, total=total)

    def cursor_pagination(self, last: Sequence[CursorValue] | None) -> Pagination:
        """``last`` is the position of the page's last row when more rows follow, else None."""
        cursor = None if last is None else self.cursor_for(last)
        return Pagination(limit=self.limit, next_cursor=cursor)


def cursor_codec_of(request: Request) -> CursorCodec:
    codec = request.app.state.cursors
    assert isinstance(codec, CursorCodec)
    return codec


def page_params(
    *, default_limit: int = 50, max_limit: int = MAX_LIMIT
) -> Callable[..., Awaitable[PageRequest]]:
    """A dependency reading ``limit``, ``cursor`` and ``page`` for one kind of list.

    ``MarketPageDep = Annotated[PageRequest, Depends(page_params(default_limit=50))]``
    """
    if not 1 <= default_limit <= max_limit <= MAX_LIMIT:
        raise ValueError("need 1 <= default_limit <= max_limit <= 200")

    async def dependency(
        request: Request,
        limit: int = Query(
            default_limit, ge=1, le=max_limit, description=f"page size, 1..{max_limit}"
        ),
        cursor: str | None = Query(
            None,
            max_length=MAX_CURSOR_LENGTH,
            description="`pagination.nextCursor` of the previous page; same filters and sort",
        ),
        page: int | None = Query(
            None, ge=0, le=MAX_PAGE, description="offset mode: 0-based page number"
        ),
    ) -> PageRequest:
        query = query_digest(request)
        codec = cursor_codec_of(request)
        if page is not None:
            if cursor is not None:
                raise InvalidRequest.for_field(
                    "query.page", "page and cursor cannot be combined", type="exclusive"
                )
            return PageRequest(limit=limit, codec=codec, query=query, page=page)
        after = codec.decode(cursor, query) if cursor else None
        return PageRequest(limit=limit, codec=codec, query=query, after=after)

    return dependency


# -- the query side ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Keyset:
    """A list's order: a sort key and a unique id breaking its ties, both in one direction.

    The sort key must be NOT NULL and an index on ``(sort, id)`` should serve it.
    """

    sort: ColumnElement[Any]
    id: ColumnElement[Any]
    descending: bool = False

    def order_by(self) -> tuple[ColumnElement[Any], ...]:
        if self.descending:
            return (self.sort.desc(), self.id.desc())
        return (self.sort.asc(), self.id.asc())

    def after(self, position: Sequence[CursorValue]) -> ColumnElement[bool]:
        """Rows strictly after ``position`` in this order (a row-value comparison)."""
        if len(position) != 2:
            raise _cursor_error("cursor does not fit this list")
        key = tuple_(self.sort, self.id)
        return key < tuple(position) if self.descending else key > tuple(position)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    pagination: Pagination


async def paginate(
    conn: AsyncConnection, stmt: Select[Any], page: PageRequest, keyset: Keyset
) -> Page[RowMapping]:
    """One page of ``stmt``'s rows in ``keyset`` order (any ORDER BY of ``stmt`` is replaced).

    Cursor mode reads ``limit + 1`` rows to learn whether another page follows; offset mode
    also counts the whole result. The rows carry two extra labelled columns (the position).
    """
    stmt = stmt.order_by(None)
    if page.page is not None:
        total = await conn.scalar(select(func.count()).select_from(stmt.subquery()))
        rows = await conn.execute(
            stmt.order_by(*keyset.order_by()).limit(page.limit).offset(page.page * page.limit)
        )
        return Page(list(rows.mappings()), page.offset_pagination(int(total or 0)))
    query = stmt.add_columns(keyset.sort.label(_SORT_LABEL), keyset.id.label(_ID_LABEL))
    if page.after is not None:
        query = query.where(keyset.after(page.after))
    result = await conn.execute(query.order_by(*keyset.order_by()).limit(page.limit + 1))
    rows_list = list(result.mappings())
    if len(rows_list) > page.limit:
        rows_list = rows_list[: page.limit]
        last = rows_list[-1]
        return Page(rows_list, page.cursor_pagination((last[_SORT_LABEL], last[_ID_LABEL])))
    return Page(rows_list, page.cursor_pagination(None))


def paginate_items(
    items: Sequence[T],
    page: PageRequest,
    key: Callable[[T], tuple[CursorValue, ...]],
    *,
    descending: bool = False,
) -> Page[T]:
    """The same paging over a list already sorted by ``key`` (ascending unless ``descending``).

    For read models held in memory; ``key`` must be unique per item (end it with the id).
    """
    if page.page is not None:
        start = page.page * page.limit
        return Page(list(items[start : start + page.limit]), page.offset_pagination(len(items)))
    start = 0
    if page.after is not None:
        after = page.after

        def beyond(item: T) -> bool:
            k = key(item)
            try:
                return k < after if descending else k > after
            except TypeError:
                raise _cursor_error("cursor does not fit this list") from None

        # Binary search for the first item beyond the cursor (the predicate is monotonic).
        lo, hi = 0, len(items)
        while lo < hi:
            mid = (lo + hi) // 2
            if beyond(items[mid]):
                hi = mid
            else:
                lo = mid + 1
        start = lo
    chunk = list(items[start : start + page.limit])
    more = start + page.limit < len(items)
    return Page(chunk, page.cursor_pagination(key(chunk[-1]) if more and chunk else None))
