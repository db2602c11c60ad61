"""Schemas of the platform banner (``settings:banner``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from predmarket.kit.schemas import BaseSchema, InputSchema, UtcDateTime, example

BannerLevel = Literal["info", "warning", "critical"]


class Banner(BaseSchema):
    """The platform banner; ``message`` is null when none is shown."""

    model_config = example(
        {
            "message": "Trading pauses at 12:00 UTC for maintenance.",
            "level": "warning",
            "updatedAt": "2026-11-23T10:00:00.000Z",
        }
    )

    message: str | None
    level: BannerLevel | None
    updated_at: UtcDateTime | None


class BannerUpdate(InputSchema):
    """``PUT /v1/admin/banner``."""

    model_config = example({"message": "Trading pauses at 12:00 UTC.", "level": "warning"})

    message: str = Field(min_length=1, max_length=500)
    level: BannerLevel = "info"
