from __future__ import annotations

import pytest

from predmarket.store.engine import async_url


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///data/x.db", "sqlite+aiosqlite:///data/x.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://u:p@h:5432/d", "postgresql+asyncpg://u:p@h:5432/d"),
        ("postgresql+asyncpg://h/d", "postgresql+asyncpg://h/d"),
    ],
)
def test_async_url_maps_to_async_drivers(given: str, expected: str) -> None:
    assert async_url(given) == expected


def test_async_url_rejects_other_databases() -> None:
    with pytest.raises(ValueError, match="unsupported database"):
        async_url("mysql://h/d")
