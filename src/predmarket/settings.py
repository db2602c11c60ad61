"""Process settings, from ``PREDMARKET_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PREDMARKET_", env_nested_delimiter="__")

    data_dir: Path = Field(default=Path("data"), description="where the embedded state lives")
    database_url: str | None = Field(
        default=None, description="sqlite:///… or postgresql://…; default: SQLite in data_dir"
    )

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'predmarket.db').resolve()}"
