"""The real tables, as migrated: column types, conventions, constraints and round trips."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Table, delete, insert, select, update
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import predmarket.store.tables  # noqa: F401  (registers every table)
from predmarket.store.meta import metadata
from predmarket.store.tables.event_group import event_group
from predmarket.store.tables.fill import fill
from predmarket.store.tables.indexer import chain_event
from predmarket.store.tables.market import market
from predmarket.store.tables.order import order
from predmarket.store.types import AMOUNT_MAX, Amount, JsonDocument, UtcDateTime

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
# Every money column of the read model: they must all be exact and ordered on both backends.
AMOUNT_COLUMNS = {
    "market": {"volume", "open_interest"},
    "order": {"quantity", "remaining", "locked_collateral", "locked_shares", "deposit"},
    "fill": {"quantity", "maker_fee", "taker_fee"},
    "position": {"yes_shares", "no_shares", "yes_cost", "no_cost", "claimed_payout"},
}


def market_row(n: int, **overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "market_address": f"m{n:040d}",
        "contract_id": f"{n:064x}",
        "registry_address": "registry",
        "registry_index": n,
        "yes_token_id": f"{n + 1:064x}",
        "no_token_id": f"{n + 2:064x}",
        "question": f"Question {n}?",
        "category": "weather",
        "creator": "creator",
        "close_at": T0 + timedelta(days=1),
        "created_at": T0 + timedelta(seconds=n),
        "created_block_hash": "b" * 64,
        "created_tx_id": f"{n:064x}",
        "updated_at": T0,
    }
    row.update(overrides)
    return row


def order_row(market_id: int, n: int, **overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "market_id": market_id,
        "chain_order_id": n,
        "owner": "owner",
        "side": "buy",
        "outcome": "yes",
        "price": 500,
        "quantity": 10**18,
        "remaining": 10**18,
        "placed_tx_id": f"{n:064x}",
        "placed_block_hash": "b" * 64,
        "created_at": T0,
        "updated_at": T0,
    }
    row.update(overrides)
    return row


async def _clear(conn: AsyncConnection) -> None:
    for table in reversed(metadata.sorted_tables):
        await conn.execute(delete(table))


@pytest.fixture
async def db(migrated_engine: AsyncEngine) -> Any:
    async with migrated_engine.begin() as conn:
        await _clear(conn)
    return migrated_engine


class TestConventions:
    def test_singular_snake_case_table_names(self) -> None:
        for name in metadata.tables:
            assert re.fullmatch(r"[a-z]+(_[a-z]+)*", name), name
            assert not name.endswith("s"), f"{name} looks plural"

    def test_every_constraint_and_index_is_named_by_the_convention(self) -> None:
        for table in metadata.sorted_tables:
            for index in table.indexes:
                assert str(index.name).startswith(f"ix_{table.name}_"), index.name
            for constraint in table.constraints:
                assert constraint.name is not None, (table.name, constraint)

    def test_amount_columns_use_the_amount_type(self) -> None:
        found = {
            t.name: {c.name for c in t.columns if isinstance(c.type, Amount)}
            for t in metadata.sorted_tables
        }
        assert {k: v for k, v in found.items() if v} == AMOUNT_COLUMNS

    def test_timestamps_are_utc_and_named_at(self) -> None:
        for table in metadata.sorted_tables:
            for column in table.columns:
                if column.name.endswith("_at"):
                    assert isinstance(column.type, UtcDateTime), (table.name, column.name)
                if isinstance(column.type, UtcDateTime):
                    assert column.name.endswith("_at"), (table.name, column.name)

    def test_json_columns_use_the_portable_json_type(self) -> None:
        json_columns = {
            (t.name, c.name)
            for t in metadata.sorted_tables
            for c in t.columns
            if isinstance(c.type, JsonDocument)
        }
        assert json_columns == {
            ("market", "metadata"),
            ("chain_event", "fields"),
            ("outbox", "key"),
            ("outbox", "payload"),
            ("developer_key_event", "details"),
            ("platform_setting", "value"),
            ("webhook_subscription", "topics"),
            ("webhook_subscription", "feeds"),
            ("webhook_delivery", "event"),
        }


class TestRoundTrips:
    async def test_amount_columns_hold_any_u256_and_sort_numerically(self, db: AsyncEngine) -> None:
        volumes = [0, 9, 10, 10**18, 10**18 + 1, 2**128, AMOUNT_MAX]
        async with db.begin() as conn:
            await conn.execute(
                insert(market), [market_row(i, volume=v) for i, v in enumerate(reversed(volumes))]
            )
            got = (await conn.execute(select(market.c.volume).order_by(market.c.volume))).scalars()
            assert list(got) == volumes
            at_least = await conn.execute(
                select(market.c.volume).where(market.c.volume >= 10**18).order_by(market.c.volume)
            )
            assert list(at_least.scalars()) == [v for v in volumes if v >= 10**18]

    @pytest.mark.parametrize(
        ("table", "column"), [(t, c) for t, cols in AMOUNT_COLUMNS.items() for c in sorted(cols)]
    )
    def test_every_amount_column_is_exact_on_the_backend(self, table: str, column: str) -> None:
        from sqlalchemy.dialects import postgresql, sqlite

        col = metadata.tables[table].c[column]
        assert str(col.type.compile(dialect=postgresql.dialect())) == "NUMERIC(78, 0)"
        assert str(col.type.compile(dialect=sqlite.dialect())) == "VARCHAR(78)"

    async def test_timestamps_come_back_aware_in_utc(self, db: AsyncEngine) -> None:
        plus_two = timezone(timedelta(hours=2))
        async with db.begin() as conn:
            await conn.execute(
                insert(market),
                [market_row(1, created_at=datetime(2026, 1, 1, 14, tzinfo=plus_two))],
            )
            created = (await conn.execute(select(market.c.created_at))).scalar_one()
        assert created == datetime(2026, 1, 1, 12, tzinfo=UTC)
        assert created.tzinfo is not None and created.utcoffset() == timedelta(0)

    async def test_naive_timestamps_are_refused(self, db: AsyncEngine) -> None:
        with pytest.raises(StatementError, match="timezone-aware"):
            async with db.begin() as conn:
                await conn.execute(insert(market), [market_row(1, created_at=datetime(2026, 1, 1))])

    async def test_json_documents_and_null(self, db: AsyncEngine) -> None:
        doc = {"tags": ["rain", "uk"], "eventGroup": {"slug": "uk-weather"}, "n": 1}
        async with db.begin() as conn:
            await conn.execute(
                insert(market), [market_row(1, metadata=doc), market_row(2, metadata=None)]
            )
            rows = await conn.execute(select(market.c.id, market.c.metadata).order_by(market.c.id))
            assert [r.metadata for r in rows] == [doc, None]
            nulls = await conn.execute(select(market.c.id).where(market.c.metadata.is_(None)))
            assert len(nulls.all()) == 1

    async def test_defaults_of_a_new_market(self, db: AsyncEngine) -> None:
        async with db.begin() as conn:
            await conn.execute(insert(market), [market_row(1)])
            row = (await conn.execute(select(market))).one()
        assert row.status == "open"
        assert (row.volume, row.open_interest, row.trade_count, row.last_fill_id) == (0, 0, 0, 0)
        # An empty side reports 0, bids and asks alike.
        best = (row.best_bid_yes, row.best_ask_yes, row.best_bid_no, row.best_ask_no)
        assert best == (0, 0, 0, 0)
        assert row.book_version == 0 and row.last_price_yes is None


class TestConstraints:
    async def _insert_fails(
        self, db: AsyncEngine, table: Table, rows: list[dict[str, Any]]
    ) -> None:
        with pytest.raises(IntegrityError):
            async with db.begin() as conn:
                await conn.execute(insert(table), rows)

    async def test_enumerations_and_ticks_are_checked(self, db: AsyncEngine) -> None:
        async with db.begin() as conn:
            market_id = (await conn.execute(insert(market), [market_row(1)])).inserted_primary_key
        mid = 1 if market_id is None else market_id[0]
        for bad in (
            {"price": 0},
            {"price": 1000},
            {"side": "hold"},
            {"outcome": "yo"},
            {"status": "paused"},
            {"cancel_reason": "bored"},
        ):
            await self._insert_fails(db, order, [order_row(mid, 1, **bad)])
        await self._insert_fails(db, market, [market_row(2, status="closing")])
        await self._insert_fails(db, market, [market_row(3, best_ask_yes=1001)])

    async def test_unique_keys(self, db: AsyncEngine) -> None:
        async with db.begin() as conn:
            await conn.execute(insert(market), [market_row(1)])
            mid = (await conn.execute(select(market.c.id))).scalar_one()
            await conn.execute(insert(order), [order_row(mid, 7)])
        await self._insert_fails(db, market, [market_row(1, registry_index=99)])  # same address
        await self._insert_fails(db, order, [order_row(mid, 7)])  # same chain order id
        async with db.begin() as conn:
            await conn.execute(insert(event_group), [{"slug": "g", "title": "G", "created_at": T0}])
        await self._insert_fails(db, event_group, [{"slug": "g", "title": "H", "created_at": T0}])

    async def test_a_chain_event_applies_at_most_once(self, db: AsyncEngine) -> None:
        event = {
            "contract_address": "m1",
            "event_counter": 4,
            "event_position": 0,
            "event_index": 1,
            "tx_id": "a" * 64,
            "block_hash": "b" * 64,
            "block_at": T0,
            "fields": [{"type": "U256", "value": "1"}],
            "applied_at": T0,
        }
        async with db.begin() as conn:
            await conn.execute(insert(chain_event), [event, {**event, "event_position": 1}])
        await self._insert_fails(db, chain_event, [event])

    async def test_fill_and_order_foreign_keys(self, db: AsyncEngine) -> None:
        await self._insert_fails(db, order, [order_row(12345, 1)])
        row = {
            "market_id": 12345,
            "trade_seq": 1,
            "kind": "normal",
            "maker_order_id": 1,
            "maker_owner": "a",
            "maker_side": "sell",
            "maker_outcome": "yes",
            "taker_order_id": 2,
            "taker_owner": "b",
            "taker_side": "buy",
            "taker_outcome": "yes",
            "price": 400,
            "taker_price": 400,
            "quantity": 10**7,
            "tx_id": "c" * 64,
            "block_hash": "b" * 64,
            "event_counter": 1,
            "event_position": 1,
            "traded_at": T0,
        }
        await self._insert_fails(db, fill, [row])

    async def test_ids_follow_insert_order(self, db: AsyncEngine) -> None:
        async with db.begin() as conn:
            await conn.execute(insert(market), [market_row(i) for i in range(3)])
            ids = list((await conn.execute(select(market.c.id).order_by(market.c.id))).scalars())
            mid = ids[0]
            await conn.execute(insert(order), [order_row(mid, n) for n in range(5)])
            await conn.execute(
                update(order).where(order.c.chain_order_id == 2).values(status="filled")
            )
            chain_ids = await conn.execute(
                select(order.c.chain_order_id).where(order.c.market_id == mid).order_by(order.c.id)
            )
        assert list(chain_ids.scalars()) == [0, 1, 2, 3, 4]
        assert ids == sorted(ids) and len(set(ids)) == 3
