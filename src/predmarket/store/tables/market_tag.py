"""Tags of markets, and the category and tag tallies the taxonomy endpoints and facets read.

``market_tag`` is the many-to-many link (``tags=a,b`` is an AND: one semi-join per tag, each
served by the ``(tag, market_id)`` index). ``category`` and ``tag`` hold running market counts,
updated by the indexer in the transaction that creates or resolves a market, so
``GET /v1/categories`` and ``GET /v1/tags`` never count the whole market table.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, String, Table

from predmarket.store.meta import metadata
from predmarket.store.tables._columns import LABEL_LENGTH, timestamp

market_tag = Table(
    "market_tag",
    metadata,
    Column("market_id", Integer, ForeignKey("market.id"), primary_key=True),
    Column("tag", String(LABEL_LENGTH), primary_key=True),
    comment="Tags of a market, from its metadata (normalised: trimmed, lower case).",
)

# tags=a,b filter (markets having a tag) and the per-tag facet counts.
Index(None, market_tag.c.tag, market_tag.c.market_id)


def _tally(name: str, comment: str) -> Table:
    return Table(
        name,
        metadata,
        Column("name", String(LABEL_LENGTH), primary_key=True),
        Column("market_count", BigInteger, nullable=False, server_default="0"),
        Column("open_market_count", BigInteger, nullable=False, server_default="0"),
        timestamp("updated_at"),
        comment=comment,
    )


category = _tally("category", "Every category with its market counts (all and open).")
tag = _tally("tag", "Every tag with its market counts (all and open).")

# GET /v1/categories and /v1/tags: most used first.
Index(None, category.c.market_count, category.c.name)
Index(None, tag.c.market_count, tag.c.name)
