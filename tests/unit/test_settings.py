"""Settings: defaults, environment mapping, and the secret rules of each profile."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from predmarket.app import create_app
from predmarket.settings import SECRET_FILE, Settings, SettingsError

STRONG = "k" * 48


def test_defaults(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    assert (s.host, s.port, s.profile, s.workers, s.demo, s.node_url) == (
        "127.0.0.1",
        8787,
        "devnet",
        1,
        True,
        None,
    )
    assert s.resolved_database_url() == f"sqlite:///{(tmp_path / 'predmarket.db').resolve()}"
    assert s.limits.anonymous_reads_per_minute == 60
    assert s.realtime.heartbeat_seconds == 15


def test_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PREDMARKET_PORT", "9000")
    monkeypatch.setenv("PREDMARKET_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PREDMARKET_DEMO", "false")
    monkeypatch.setenv("PREDMARKET_NODE_URL", "http://node:22973")
    monkeypatch.setenv("PREDMARKET_LIMITS__ANONYMOUS_READS_PER_MINUTE", "120")
    monkeypatch.setenv("PREDMARKET_DB__POOL_SIZE", "9")
    monkeypatch.setenv("PREDMARKET_SECRET_KEY", STRONG)
    s = Settings()
    assert (s.port, s.data_dir, s.demo, s.node_url) == (9000, tmp_path, False, "http://node:22973")
    assert s.limits.anonymous_reads_per_minute == 120
    assert s.db.pool_size == 9
    assert s.resolve_secret_key() == STRONG
    assert STRONG not in repr(s)  # a SecretStr never prints


def test_more_workers_need_postgresql(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="PostgreSQL"):
        Settings(data_dir=tmp_path, workers=2)
    with pytest.raises(ValidationError, match="PostgreSQL"):
        Settings(data_dir=tmp_path, workers=2, database_url="sqlite:///x.db")
    assert Settings(workers=4, database_url="postgresql://db/x").workers == 4


class TestDevnetSecret:
    def test_generated_once_and_kept(self, tmp_path: Path) -> None:
        data_dir = tmp_path / "fresh" / "dir"
        first = Settings(data_dir=data_dir).resolve_secret_key()
        assert len(first) >= 32
        path = data_dir / SECRET_FILE
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert Settings(data_dir=data_dir).resolve_secret_key() == first
        assert [p.name for p in data_dir.iterdir()] == [SECRET_FILE]  # no temp file left

    def test_differs_per_data_dir(self, tmp_path: Path) -> None:
        a = Settings(data_dir=tmp_path / "a").resolve_secret_key()
        assert Settings(data_dir=tmp_path / "b").resolve_secret_key() != a

    def test_an_explicit_secret_wins(self, tmp_path: Path) -> None:
        s = Settings(data_dir=tmp_path, secret_key="short-is-fine-on-devnet")
        assert s.resolve_secret_key() == "short-is-fine-on-devnet"
        assert not (tmp_path / SECRET_FILE).exists()

    def test_an_empty_secret_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(SettingsError, match="empty"):
            Settings(data_dir=tmp_path, secret_key="").resolve_secret_key()


class TestProductionSecret:
    def test_missing_is_refused_at_startup(self, tmp_path: Path) -> None:
        s = Settings(data_dir=tmp_path, profile="production")
        with pytest.raises(SettingsError, match="PREDMARKET_SECRET_KEY is required"):
            s.resolve_secret_key()
        with pytest.raises(SettingsError, match="PREDMARKET_SECRET_KEY"):
            create_app(s)
        assert not (tmp_path / SECRET_FILE).exists()  # never generated outside the devnet

    def test_a_devnet_secret_file_is_not_used(self, tmp_path: Path) -> None:
        Settings(data_dir=tmp_path).resolve_secret_key()
        with pytest.raises(SettingsError):
            Settings(data_dir=tmp_path, profile="production").resolve_secret_key()

    @pytest.mark.parametrize("weak", ["", "secret", "changeme", "x" * 31, " " * 40 + "x"])
    def test_weak_is_refused(self, tmp_path: Path, weak: str) -> None:
        s = Settings(data_dir=tmp_path, profile="production", secret_key=weak)
        with pytest.raises(SettingsError, match="too weak"):
            s.resolve_secret_key()

    def test_strong_is_used(self, tmp_path: Path) -> None:
        s = Settings(data_dir=tmp_path, profile="production", secret_key=STRONG)
        assert s.resolve_secret_key() == STRONG
        assert create_app(s).state.settings is s
