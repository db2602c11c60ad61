"""``predmarket migrate`` and the start-up refusals of ``predmarket serve`` (in-process: they exit
before anything is served)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from predmarket.cli import app
from predmarket.store import migrate

pytestmark = pytest.mark.db

EmptyDatabase = Callable[[], AbstractContextManager[str]]
FUTURE_REVISION = "9999_from_the_future"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("DATABASE_URL", "DATA_DIR", "NODE_URL", "WORKERS", "DEMO", "PORT", "HOST"):
        monkeypatch.delenv(f"PREDMARKET_{name}", raising=False)
    return CliRunner()


def stamp_ahead(url: str) -> None:
    async def run() -> None:
        engine = migrate.migration_engine(url)
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    text("UPDATE alembic_version SET version_num = :r"), {"r": FUTURE_REVISION}
                )
        finally:
            await engine.dispose()

    asyncio.run(run())


class TestMigrate:
    def test_upgrades_an_empty_database_then_reports_it_up_to_date(
        self, runner: CliRunner, empty_database: EmptyDatabase
    ) -> None:
        with empty_database() as url:
            first = runner.invoke(app, ["migrate", "--database-url", url])
            assert first.exit_code == 0, first.output
            assert f"upgraded from empty to {migrate.head_revision()}" in first.output
            again = runner.invoke(app, ["migrate", "--database-url", url])
            assert again.exit_code == 0, again.output
            assert "up to date" in again.output
            assert migrate.current_revision(url) == migrate.head_revision()

    def test_default_database_is_the_sqlite_file_of_the_data_dir(
        self, runner: CliRunner, tmp_path: Path
    ) -> None:
        result = runner.invoke(app, ["migrate", "--data-dir", str(tmp_path / "d")])
        assert result.exit_code == 0, result.output
        assert (tmp_path / "d" / "predmarket.db").is_file()
        assert migrate.current_revision(f"sqlite:///{tmp_path / 'd' / 'predmarket.db'}") == (
            migrate.head_revision()
        )

    def test_refuses_a_schema_ahead_of_the_code(
        self, runner: CliRunner, empty_database: EmptyDatabase
    ) -> None:
        with empty_database() as url:
            migrate.upgrade(url)
            stamp_ahead(url)
            result = runner.invoke(app, ["migrate", "--database-url", url])
            assert result.exit_code == 3
            assert f"database schema {FUTURE_REVISION} is newer than this predmarket" in (
                result.output
            )
            assert migrate.current_revision(url) == FUTURE_REVISION


class TestServeRefusals:
    def test_schema_ahead_is_refused_before_anything_starts(
        self, runner: CliRunner, empty_database: EmptyDatabase, tmp_path: Path
    ) -> None:
        with empty_database() as url:
            migrate.upgrade(url)
            stamp_ahead(url)
            data_dir = tmp_path / "data"
            result = runner.invoke(
                app, ["serve", "--database-url", url, "--data-dir", str(data_dir), "--port", "0"]
            )
            assert result.exit_code == 3, result.output
            assert "refusing to start" in result.output
            assert "newer than this predmarket" in result.output
            assert not (data_dir / "devnet").exists()  # no devnet, no demo, no API
            assert migrate.current_revision(url) == FUTURE_REVISION

    def test_workers_need_postgresql(self, runner: CliRunner, tmp_path: Path) -> None:
        result = runner.invoke(
            app, ["serve", "--workers", "2", "--data-dir", str(tmp_path / "data")]
        )
        assert result.exit_code == 2
        assert "workers > 1 needs PostgreSQL" in result.output
        assert not (tmp_path / "data").exists()

    def test_workers_from_the_environment_are_refused_too(
        self, runner: CliRunner, tmp_path: Path
    ) -> None:
        result = runner.invoke(
            app,
            ["serve", "--data-dir", str(tmp_path / "data")],
            env={"PREDMARKET_WORKERS": "3"},
        )
        assert result.exit_code == 2
        assert "workers > 1 needs PostgreSQL" in result.output

    def test_a_busy_api_port_is_a_clear_error(
        self, runner: CliRunner, tmp_path: Path, empty_database: EmptyDatabase
    ) -> None:
        with socket.socket() as busy, empty_database() as url:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            result = runner.invoke(
                app,
                [
                    *("serve", "--port", str(port), "--devnet-port", "0", "--no-demo"),
                    *("--data-dir", str(tmp_path / "data"), "--database-url", url),
                ],
            )
        assert result.exit_code == 1, result.output
        assert f"cannot listen on 127.0.0.1:{port}" in result.output

    def test_an_unreachable_database_is_a_clear_error(self, runner: CliRunner) -> None:
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
            port = closed.getsockname()[1]
            url = f"postgresql://postgres@127.0.0.1:{port}/nothing"
            for command in (["migrate"], ["serve", "--no-demo"]):
                result = runner.invoke(app, [*command, "--database-url", url])
                assert result.exit_code == 1, result.output
                assert f"cannot open the database postgresql://postgres@127.0.0.1:{port}" in (
                    result.output
                )
