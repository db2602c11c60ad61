"""Order books, price quotes and transaction activity of one market."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from predmarket.books import queries
from predmarket.books.cache import BookCache, MarketBook
from predmarket.books.schemas import Activity, PriceQuote
from predmarket.markets.errors import MarketNotFound
from predmarket.markets.service import MarketRef


async def _book_or_raise(books: BookCache, address: str) -> MarketBook:
    book = await books.get(address)
    if book is None:
        raise MarketNotFound()
    return book


async def orderbook_json(books: BookCache, address: str, *, depth: int) -> bytes:
    """The market's book snapshot (spec 2.2) as JSON, ``depth`` levels per side."""
    return (await _book_or_raise(books, address)).render(depth)


async def price_quote(books: BookCache, address: str) -> PriceQuote:
    """The market's price (spec 2.3), from the last trade."""
    return (await _book_or_raise(books, address)).quote()


async def activity(db: AsyncConnection, ref: MarketRef, *, tx_id: str) -> Activity:
    """Whether the indexer has applied ``tx_id``'s events to this market.

    ``indexed`` is true when the transaction is in ``indexed_tx`` for this market (or for no
    particular market). A transaction indexed for another market is ``false`` here.
    """
    row = await queries.get_market_ref(db, id=ref.id, address=ref.address)
    if row is None:
        raise MarketNotFound()
    tx_id = tx_id.lower()
    seen = await queries.get_indexed_tx(db, tx_id)
    indexed = seen is not None and seen["market_id"] in (None, row["id"])
    return Activity(
        market_address=row["market_address"],
        tx_id=tx_id,
        indexed=indexed,
        block_hash=seen["block_hash"] if indexed and seen is not None else None,
        indexed_at=seen["indexed_at"] if indexed and seen is not None else None,
    )
