"""Migrations: from empty to head builds exactly ``metadata``; down to base; schema checks.

Each test migrates a private database (SQLite, or PostgreSQL with
``PREDMARKET_TEST_DATABASE_URL``), so the suite's shared database is never touched.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, inspect, text
from sqlalchemy.engine import Connection

from predmarket.store import migrate
from predmarket.store.engine import create_engine
from predmarket.store.meta import metadata
from predmarket.store.migrate import (
    SchemaAheadError,
    SchemaBehindError,
    check_schema,
    current_revision,
    head_revision,
    migrate_command,
)

pytestmark = pytest.mark.db

FUTURE_REVISION = "9999_from_the_future"
EmptyDatabase = Callable[[], AbstractContextManager[str]]


def _diff(url: str, target: MetaData) -> list[object]:
    """Alembic autogenerate's differences between the database at ``url`` and ``target``."""

    def compare(connection: Connection) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, target))

    async def run() -> list[object]:
        engine = migrate.migration_engine(url)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(compare)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def _tables(url: str) -> set[str]:
    async def run() -> set[str]:
        engine = migrate.migration_engine(url)
        try:
            async with engine.connect() as conn:
                return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        finally:
            await engine.dispose()

    return asyncio.run(run())


def _stamp(url: str, revision: str) -> None:
    async def run() -> None:
        engine = migrate.migration_engine(url)
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    text("UPDATE alembic_version SET version_num = :r"), {"r": revision}
                )
        finally:
            await engine.dispose()

    asyncio.run(run())


class TestUpgrade:
    def test_empty_to_head_creates_exactly_the_metadata(
        self, empty_database: EmptyDatabase
    ) -> None:
        with empty_database() as url:
            assert current_revision(url) is None
            before, after = migrate.upgrade(url)
            assert (before, after) == (None, head_revision())
            assert _diff(url, metadata) == []
            assert _tables(url) == set(metadata.tables) | {"alembic_version"}

    def test_the_comparison_sees_a_missing_index(self, empty_database: EmptyDatabase) -> None:
        # Guard against a vacuous "no diff": a metadata lacking one index must differ.
        with empty_database() as url:
            migrate.upgrade(url)
            trimmed = MetaData(naming_convention=metadata.naming_convention)
            for table in metadata.sorted_tables:
                table.to_metadata(trimmed)
            market = trimmed.tables["market"]
            market.indexes.remove(
                next(i for i in market.indexes if i.name == "ix_market_status_volume_id")
            )
            diff = _diff(url, trimmed)
            assert [d[0] for d in diff if isinstance(d, tuple)] == ["remove_index"]

    def test_upgrade_twice_is_a_no_op(self, empty_database: EmptyDatabase) -> None:
        with empty_database() as url:
            assert (
                migrate_command(url) == f"database schema upgraded from empty to {head_revision()}"
            )
            assert migrate_command(url) == f"database schema is up to date ({head_revision()})"
            assert check_schema(url) == head_revision()

    def test_concurrent_upgrades_serialise(self, empty_database: EmptyDatabase) -> None:
        # Several processes starting at once (workers with auto-upgrade): one migrates, the
        # others wait for it and find the schema at head.
        with empty_database() as url:
            results: list[tuple[str | None, str]] = []
            errors: list[BaseException] = []

            def run() -> None:
                try:
                    results.append(migrate.upgrade(url))
                except BaseException as e:
                    errors.append(e)

            threads = [threading.Thread(target=run) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert errors == []
            head = head_revision()
            assert sorted(results, key=str) == sorted(
                [(None, head), (head, head), (head, head)], key=str
            )
            assert _diff(url, metadata) == []

    def test_a_failed_upgrade_changes_nothing(
        self, empty_database: EmptyDatabase, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The whole upgrade is one transaction on both backends: fail after the DDL ran and
        # the database is as it was (SQLite too, thanks to the migration engine's BEGIN).
        real_upgrade = migrate.command.upgrade

        def upgrade_then_fail(config: object, revision: str) -> None:
            real_upgrade(config, revision)  # type: ignore[arg-type]
            raise RuntimeError("disk full")

        monkeypatch.setattr(migrate.command, "upgrade", upgrade_then_fail)
        with empty_database() as url:
            with pytest.raises(RuntimeError, match="disk full"):
                migrate.upgrade(url)
            assert current_revision(url) is None
            assert _tables(url) <= {"alembic_version"}


class TestDowngrade:
    def test_down_to_base_and_up_again(self, empty_database: EmptyDatabase) -> None:
        with empty_database() as url:
            migrate.upgrade(url)
            assert migrate.downgrade(url, "base") is None
            assert current_revision(url) is None
            assert _tables(url) <= {"alembic_version"}
            migrate.upgrade(url)
            assert _diff(url, metadata) == []


class TestSchemaChecks:
    def test_refuses_a_database_from_a_newer_predmarket(
        self, empty_database: EmptyDatabase
    ) -> None:
        with empty_database() as url:
            migrate.upgrade(url)
            _stamp(url, FUTURE_REVISION)
            expected = (
                f"database schema {FUTURE_REVISION} is newer than this predmarket "
                f"({head_revision()}); upgrade predmarket"
            )
            with pytest.raises(SchemaAheadError) as info:
                check_schema(url)
            assert str(info.value) == expected
            assert (info.value.current, info.value.head) == (FUTURE_REVISION, head_revision())
            # Neither an upgrade nor `predmarket migrate` touches it.
            with pytest.raises(SchemaAheadError, match=re.escape(expected)):
                migrate.upgrade(url)
            with pytest.raises(SchemaAheadError, match=re.escape(expected)):
                migrate_command(url)
            assert current_revision(url) == FUTURE_REVISION

    def test_an_empty_database_is_behind(self, empty_database: EmptyDatabase) -> None:
        with empty_database() as url:
            with pytest.raises(SchemaBehindError) as info:
                check_schema(url)
            assert info.value.current is None
            assert "run `predmarket migrate`" in str(info.value)

    async def test_ensure_schema_upgrades_only_when_asked(
        self, empty_database: EmptyDatabase
    ) -> None:
        with empty_database() as url:
            engine = create_engine(url)  # the app's engine, as at startup
            try:
                with pytest.raises(SchemaBehindError):
                    await migrate.ensure_schema_async(engine, upgrade=False)
                assert await migrate.current_revision_async(engine) is None
                assert await migrate.ensure_schema_async(engine, upgrade=True) == head_revision()
                assert await migrate.check_schema_async(engine) == head_revision()
            finally:
                await engine.dispose()


class TestPackaging:
    def test_scripts_ship_inside_the_package(self) -> None:
        assert migrate.MIGRATIONS_DIR.parent.name == "store"
        assert (migrate.MIGRATIONS_DIR / "env.py").is_file()
        assert (migrate.MIGRATIONS_DIR / "script.py.mako").is_file()

    def test_revision_files_have_date_slug_names(self) -> None:
        names = sorted(
            p.name
            for p in (migrate.MIGRATIONS_DIR / "versions").glob("*.py")
            if p.name != "__init__.py"
        )
        assert names
        for name in names:
            assert re.fullmatch(r"\d{4}_\d{2}_\d{2}_\d{4}-[a-z0-9_]+\.py", name), name
        assert names[0] == "2026_11_22_0001-initial_read_model.py"
