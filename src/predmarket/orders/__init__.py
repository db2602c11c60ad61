"""A market's orders and fills: ``GET /v1/markets/{market}/orders`` and ``…/fills``
(newest first, paginated; ``docs/books.md``)."""
