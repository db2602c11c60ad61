"""Dependencies of the books routes: the in-memory books and the path and query parameters."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Depends, Path, Query
from starlette.requests import Request

from predmarket.alephium.address import is_valid_address
from predmarket.books.cache import BookCache
from predmarket.books.schemas import MAX_DEPTH
from predmarket.kit.errors import InvalidRequest, Unavailable

#: A transaction id: 32 bytes of hex (upper case is accepted and lowered).
TX_ID_PATTERN: Final = r"^[0-9a-fA-F]{64}$"
_EXAMPLE_MARKET: Final = "25LVfdNKnpMPMvwBaBLcBTVRgrGJcCNRwDjW7ehNHvDVd"


def get_books(request: Request) -> BookCache:
    books = getattr(request.app.state, "books", None)
    if not isinstance(books, BookCache):  # only outside the app's lifespan
        raise Unavailable("the order books are not running")
    return books


async def market_address(
    market_address: Annotated[
        str,
        Path(
            alias="marketAddress",
            min_length=30,
            max_length=80,
            description="the market's contract address",
            examples=[_EXAMPLE_MARKET],
        ),
    ],
) -> str:
    if not is_valid_address(market_address):
        raise InvalidRequest.for_field(
            "path.marketAddress", "not a valid contract address", type="address"
        )
    return market_address


BooksDep = Annotated[BookCache, Depends(get_books)]
MarketAddressDep = Annotated[str, Depends(market_address)]
DepthQuery = Annotated[
    int,
    Query(ge=1, le=MAX_DEPTH, description=f"price levels per side, 1..{MAX_DEPTH}"),
]
TxIdQuery = Annotated[
    str,
    Query(
        alias="txId",
        pattern=TX_ID_PATTERN,
        description="the transaction id (64 hex characters)",
        examples=["7f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b"],
    ),
]
