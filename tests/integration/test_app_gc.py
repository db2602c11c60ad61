"""The app's GC tuning (``api.gc_tuning``): while it serves, the start-up heap is frozen out of
the cyclic collector and young collections are rarer; on exit both are undone, so apps started
and stopped in one process (the tests, reloads) leave the collector as they found it."""

from __future__ import annotations

import gc

import pytest

from predmarket.app import create_app
from predmarket.settings import ApiSettings, Settings

pytestmark = pytest.mark.db


@pytest.mark.parametrize("tuning", [True, False])
async def test_tuned_while_serving_and_restored_after(
    app_settings: Settings, migrated_url: str, tuning: bool
) -> None:
    api = ApiSettings(gc_tuning=tuning, gc_gen0_threshold=12_345)
    settings = app_settings.model_copy(update={"database_url": migrated_url, "api": api})
    app = create_app(settings)
    before = (gc.get_threshold(), gc.get_freeze_count())
    async with app.router.lifespan_context(app):
        serving = (gc.get_threshold(), gc.get_freeze_count())
    after = (gc.get_threshold(), gc.get_freeze_count())
    assert after == before
    if tuning:
        assert serving[0] == (12_345, 20, 100)
        assert serving[1] > before[1]  # the start-up heap is frozen
    else:
        assert serving == before
