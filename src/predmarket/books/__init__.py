"""Order books, prices and activity of markets: ``GET /v1/markets/{marketAddress}/orderbook``,
``…/prices`` and ``GET /v1/markets/{market}/activity``.

Books and prices are served from :mod:`predmarket.books.cache`, an in-memory copy of the open
orders kept current from the outbox (never a query per request); see ``docs/books.md``.
"""
