"""Amounts survive the database exactly, and order numerically, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, Table, insert, select
from sqlalchemy.exc import StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from predmarket.store.types import AMOUNT_MAX, Amount

pytestmark = pytest.mark.db

EDGE_AMOUNTS = [0, 1, 9, 10, 10**7, 10**18 - 1, 10**18, 10**18 + 1, 2**64, 2**255, AMOUNT_MAX]


def _table(name: str) -> tuple[MetaData, Table]:
    meta = MetaData()
    table = Table(name, meta, Column("id", Integer, primary_key=True), Column("amount", Amount()))
    return meta, table


async def test_round_trip_and_numeric_order(engine: AsyncEngine) -> None:
    meta, table = _table("amount_probe")
    async with engine.begin() as conn:
        await conn.run_sync(meta.create_all)
        shuffled = EDGE_AMOUNTS[::2] + EDGE_AMOUNTS[1::2]
        await conn.execute(insert(table), [{"amount": a} for a in shuffled])
        rows = (await conn.execute(select(table.c.amount).order_by(table.c.amount))).scalars()
        assert list(rows) == sorted(EDGE_AMOUNTS)
        at_least_one_share = await conn.execute(
            select(table.c.amount).where(table.c.amount >= 10**18).order_by(table.c.amount)
        )
        assert list(at_least_one_share.scalars()) == [
            a for a in sorted(EDGE_AMOUNTS) if a >= 10**18
        ]
        await conn.run_sync(meta.drop_all)


@pytest.mark.parametrize("bad", [-1, AMOUNT_MAX + 1, 1.5, True, "10"])
async def test_rejects_what_is_not_an_amount(engine: AsyncEngine, bad: object) -> None:
    meta, table = _table("amount_reject")
    async with engine.begin() as conn:
        await conn.run_sync(meta.create_all)
    with pytest.raises(StatementError):
        async with engine.begin() as conn:
            await conn.execute(insert(table), [{"amount": bad}])
    async with engine.begin() as conn:
        count = (await conn.execute(select(table.c.id))).all()
        await conn.run_sync(meta.drop_all)
    assert count == []


@settings(max_examples=25, deadline=None)
@given(amounts=st.lists(st.integers(0, AMOUNT_MAX), min_size=1, max_size=12))
def test_order_matches_python_for_any_amounts(database_url: str, amounts: list[int]) -> None:
    import asyncio

    from predmarket.store.engine import create_engine

    async def run() -> list[int]:
        eng = create_engine(database_url)
        meta, table = _table("amount_prop")
        try:
            async with eng.begin() as conn:
                await conn.run_sync(meta.create_all)
                await conn.execute(insert(table), [{"amount": a} for a in amounts])
                out = await conn.execute(select(table.c.amount).order_by(table.c.amount.desc()))
                result = list(out.scalars())
                await conn.run_sync(meta.drop_all)
            return result
        finally:
            await eng.dispose()

    assert asyncio.run(run()) == sorted(amounts, reverse=True)
