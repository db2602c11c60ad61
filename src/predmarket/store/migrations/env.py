"""Alembic environment: migrations on our async engine, for SQLite and PostgreSQL.

``predmarket.store.migrate`` hands a connection in ``config.attributes["connection"]`` (already
in the transaction the whole upgrade runs in); without one — plain ``alembic`` commands with a
config from ``migrate.alembic_config(url)`` — this opens its own engine.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection

import predmarket.store.tables  # noqa: F401  (registers every table on the metadata)
from predmarket.store import types
from predmarket.store.meta import metadata

config = context.config


def _database_url() -> str:
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: use predmarket.store.migrate.alembic_config(url)")
    return str(url)


_OUR_TYPES = (types.Amount, types.UtcDateTime, types.JsonDocument)


def _render_item(kind: str, obj: Any, autogen: AutogenContext) -> str | Literal[False]:
    """Autogenerate writes our column types as ``types.Amount()`` with their import."""
    if kind == "type" and isinstance(obj, _OUR_TYPES):
        autogen.imports.add("from predmarket.store import types")
        return f"types.{type(obj).__name__}()"
    return False


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite cannot ALTER most things: batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )


def _run(connection: Connection) -> None:
    _configure(connection)
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_own_engine() -> None:
    from predmarket.store.migrate import migration_engine

    engine = migration_engine(_database_url())
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_run)
    finally:
        await engine.dispose()


def run_offline() -> None:
    """``--sql`` mode: print the SQL instead of running it."""
    context.configure(
        url=_database_url(),
        target_metadata=metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if isinstance(connection, Connection):
        _run(connection)
    else:
        asyncio.run(_run_with_own_engine())


if context.is_offline_mode():
    run_offline()
else:
    run_online()
