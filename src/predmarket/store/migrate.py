"""Schema migrations, driven from code: no ``alembic.ini``, the scripts ship inside the package.

The migration environment lives in ``predmarket/store/migrations`` so an installed predmarket
can migrate its database (``predmarket migrate``) without a source checkout.

Policy:

- **Ahead** (the database is stamped with a revision this code does not know — a newer
  predmarket migrated it): always refused with :class:`SchemaAheadError`. Nothing is changed;
  running old code on a newer schema could corrupt it. Upgrade predmarket.
- **Behind** (an empty database, or an older known revision): :func:`check_schema` raises
  :class:`SchemaBehindError`. :func:`ensure_schema_async` upgrades instead when asked to, which
  is what the one-command embedded start does. Scaled deployments run ``predmarket migrate``
  once per release and start workers without auto-upgrade; several upgraders at once are safe
  anyway (PostgreSQL: an advisory lock; SQLite: ``BEGIN IMMEDIATE``), the later ones find the
  schema at head and do nothing.
- Downgrades exist for development and tests only; the service never downgrades by itself.

Each upgrade runs in one transaction on both backends (PostgreSQL has transactional DDL; the
SQLite migration connection is switched to explicit ``BEGIN IMMEDIATE``), so a failed migration
leaves the database at the revision it started from.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.pool import NullPool

from predmarket.store.engine import create_engine

MIGRATIONS_DIR: Final = Path(__file__).resolve().parent / "migrations"
#: Key of the PostgreSQL advisory lock that serialises concurrent upgrades of one database.
MIGRATION_LOCK_KEY: Final = 0x70726D_6D696772  # "prm" "migr"
#: Date-slug file names: ``2026_11_22_0001-initial_read_model.py``; revision ids are
#: zero-padded sequence numbers (``--rev-id 0002``) so the order is readable from the name.
FILE_TEMPLATE: Final = "%(year)d_%(month).2d_%(day).2d_%(rev)s-%(slug)s"

T = TypeVar("T")


class SchemaError(Exception):
    """The database schema does not match this predmarket."""

    def __init__(self, message: str, *, current: str | None, head: str) -> None:
        super().__init__(message)
        self.current = current
        self.head = head


class SchemaAheadError(SchemaError):
    """The database was migrated by a newer predmarket: refuse to touch it."""

    def __init__(self, current: str, head: str) -> None:
        super().__init__(
            f"database schema {current} is newer than this predmarket ({head}); upgrade predmarket",
            current=current,
            head=head,
        )


class SchemaBehindError(SchemaError):
    """The database is empty or at an older revision: it needs ``predmarket migrate``."""

    def __init__(self, current: str | None, head: str) -> None:
        shown = "empty" if current is None else current
        super().__init__(
            f"database schema {shown} is older than this predmarket ({head}); "
            "run `predmarket migrate`",
            current=current,
            head=head,
        )


# -- configuration ------------------------------------------------------------------------------


def alembic_config(database_url: str | None = None) -> Config:
    """An Alembic config pointing at the packaged scripts (and ``database_url``, if given).

    For development: ``command.revision(alembic_config(url), message="...", rev_id="0002",
    autogenerate=True)`` writes the next migration from the difference with ``metadata``.
    """
    config = Config()
    # ConfigParser interpolates '%': the template's are doubled here, and the URL (which may
    # hold a percent-encoded password) travels in ``attributes`` instead of the parser.
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("file_template", FILE_TEMPLATE.replace("%", "%%"))
    config.set_main_option("truncate_slug_length", "40")
    if database_url is not None:
        config.attributes["database_url"] = database_url
    return config


def _script() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The newest revision this code knows."""
    head = _script().get_current_head()
    if head is None:  # pragma: no cover - the package always ships the initial revision
        raise RuntimeError("no migrations found")
    return head


def is_known_revision(revision: str) -> bool:
    return any(s.revision == revision for s in _script().walk_revisions())


def migration_engine(database_url: str) -> AsyncEngine:
    """An engine for running migrations: no pool, and on SQLite real transactions around DDL.

    pysqlite (under aiosqlite) does not begin a transaction before DDL, so a failing migration
    would leave half a schema. With the driver's own handling off, ``BEGIN IMMEDIATE`` starts
    every transaction: DDL becomes atomic, and concurrent upgraders queue on the write lock.
    """
    engine = create_engine(database_url, poolclass=NullPool)
    if engine.dialect.name == "sqlite":

        def _no_driver_transactions(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None

        def _begin_immediate(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        event.listen(engine.sync_engine, "connect", _no_driver_transactions)
        event.listen(engine.sync_engine, "begin", _begin_immediate)
    return engine


# -- reading the revision -----------------------------------------------------------------------


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def current_revision_async(engine: AsyncEngine) -> str | None:
    """The revision the database is stamped with; None for a database never migrated."""
    async with engine.connect() as conn:
        return await conn.run_sync(_current)


def _classify(current: str | None, head: str) -> None:
    if current == head:
        return
    if current is not None and not is_known_revision(current):
        raise SchemaAheadError(current, head)
    raise SchemaBehindError(current, head)


async def check_schema_async(engine: AsyncEngine) -> str:
    """Return the head revision when the database is at it; raise SchemaAheadError or
    SchemaBehindError otherwise."""
    head = head_revision()
    _classify(await current_revision_async(engine), head)
    return head


# -- changing the revision ----------------------------------------------------------------------


async def _locked(conn: AsyncConnection) -> None:
    """Serialise schema changes on PostgreSQL (released when the transaction ends)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})


def _run_command(
    connection: Connection, action: Callable[[Config], None], database_url: str
) -> None:
    config = alembic_config(database_url)
    config.attributes["connection"] = connection
    action(config)


@asynccontextmanager
async def _schema_change(engine: AsyncEngine) -> AsyncIterator[tuple[AsyncConnection, str]]:
    """One locked transaction for a schema change, on a migration engine for ``engine``'s
    database — whatever engine the caller holds (the app's SQLite engine would run the DDL
    outside the transaction)."""
    url = engine.url.render_as_string(hide_password=False)
    own = migration_engine(url)
    try:
        async with own.begin() as conn:
            await _locked(conn)
            yield conn, url
    finally:
        await own.dispose()


async def upgrade_async(engine: AsyncEngine, revision: str = "head") -> tuple[str | None, str]:
    """Upgrade to ``revision`` in one transaction; returns (revision before, revision after).

    Raises SchemaAheadError, changing nothing, when the database is ahead of this code.
    """
    async with _schema_change(engine) as (conn, url):
        before = await conn.run_sync(_current)
        head = head_revision()
        if before is not None and not is_known_revision(before):
            raise SchemaAheadError(before, head)
        await conn.run_sync(_run_command, lambda config: command.upgrade(config, revision), url)
        after = await conn.run_sync(_current)
    assert after is not None
    return before, after


async def downgrade_async(engine: AsyncEngine, revision: str) -> str | None:
    """Downgrade to ``revision`` (``"base"``: drop everything); development and tests only."""
    async with _schema_change(engine) as (conn, url):
        await conn.run_sync(_run_command, lambda config: command.downgrade(config, revision), url)
        return await conn.run_sync(_current)


async def ensure_schema_async(engine: AsyncEngine, *, upgrade: bool) -> str:
    """Startup check: at head → fine; ahead → SchemaAheadError; behind → upgrade when
    ``upgrade`` is true, else SchemaBehindError. Returns the head revision."""
    try:
        return await check_schema_async(engine)
    except SchemaBehindError:
        if not upgrade:
            raise
    _, after = await upgrade_async(engine)
    return after


# -- synchronous entry points (CLI, scripts, tests) --------------------------------------------


def _run(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even when this thread runs a loop."""

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _with_engine(database_url: str, use: Callable[[AsyncEngine], Awaitable[T]]) -> T:
    async def main() -> T:
        engine = migration_engine(database_url)
        try:
            return await use(engine)
        finally:
            await engine.dispose()

    return _run(main)


def current_revision(database_url: str) -> str | None:
    """The revision ``database_url`` is stamped with; None when never migrated."""
    return _with_engine(database_url, current_revision_async)


def check_schema(database_url: str) -> str:
    """Return the head revision when the database is at it; raise SchemaAheadError or
    SchemaBehindError otherwise."""
    return _with_engine(database_url, check_schema_async)


def upgrade(database_url: str, revision: str = "head") -> tuple[str | None, str]:
    """Upgrade ``database_url`` to ``revision``; returns (revision before, revision after)."""
    return _with_engine(database_url, lambda engine: upgrade_async(engine, revision))


def downgrade(database_url: str, revision: str) -> str | None:
    """Downgrade ``database_url`` to ``revision``; returns the revision after."""
    return _with_engine(database_url, lambda engine: downgrade_async(engine, revision))


def migrate_command(database_url: str) -> str:
    """What ``predmarket migrate`` runs: upgrade to head and say what happened.

    Raises SchemaAheadError (with the message to show) when the database is newer than the code.
    """
    before, after = upgrade(database_url)
    if before == after:
        return f"database schema is up to date ({after})"
    return f"database schema upgraded from {before or 'empty'} to {after}"
