"""GET /v1/markets/{market}: by id or address, the phases as separate fields, 404 and 400."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import make_event, make_market, row_counts, utcnow, wallet_address
from predmarket.kit.schemas import format_utc

pytestmark = pytest.mark.db


async def detail(client: httpx.AsyncClient, ref: object) -> dict[str, Any]:
    r = await client.get(f"/v1/markets/{ref}")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def at(value: Any) -> str:
    return format_utc(value)


class TestLookup:
    async def test_by_id_and_by_address_are_the_same(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            await make_market(conn)
            m = await make_market(conn, tags=["b", "a"])
        by_id = await detail(client, m["id"])
        assert by_id == await detail(client, m["market_address"])
        assert by_id["id"] == m["id"] and by_id["marketAddress"] == m["market_address"]
        assert by_id["tags"] == ["a", "b"]

    async def test_everything_about_a_trading_market(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        now = utcnow()
        async with seed.begin() as conn:
            event = await make_event(conn, slug="uk-weather", title="UK weather")
            m = await make_market(
                conn,
                event_group_id=event["id"],
                metadata={"tags": ["rain"], "description": "Heathrow rain gauge", "x": 1},
                close_at=now + timedelta(days=2),
                volume=3 * 10**21,
                open_interest=10**20,
                trade_count=12,
                last_trade_at=now - timedelta(minutes=1),
                last_price_yes=640,
                book_version=57,
                best_bid_yes=630,
            )
        body = await detail(client, m["id"])
        assert body["contractId"] == m["contract_id"]
        assert body["description"] == "Heathrow rain gauge"
        assert body["tokens"] == {"yes": m["yes_token_id"], "no": m["no_token_id"]}
        assert body["event"] == {"id": event["id"], "slug": "uk-weather", "title": "UK weather"}
        assert body["eventSlug"] == "uk-weather"
        assert body["bookVersion"] == 57
        assert body["stats"] == {
            "volume": str(3 * 10**21),
            "tradeCount": 12,
            "lastTradeAt": at(m["last_trade_at"]),
            "lastPriceYes": 640,
            "lastPriceNo": 360,
            "openInterest": str(10**20),
        }
        assert body["closeAt"] == at(m["close_at"])
        assert body["status"] == "open"
        assert body["phases"] == {
            "registration": {
                "status": "registered",
                "registeredAt": at(m["created_at"]),
                "txId": m["created_tx_id"],
            },
            "trading": {
                "status": "open",
                "opensAt": at(m["created_at"]),
                "closesAt": at(m["close_at"]),
                "closedAt": None,
                "closedBy": None,
            },
            "resolution": {
                "status": "pending",
                "dueAt": at(m["close_at"]),
                "outcome": None,
                "resolvedAt": None,
                "txId": None,
            },
            "settlement": {"status": "pending", "settledAt": None, "payout": None},
            "claimability": {"status": "not-claimable", "claimableFrom": None},
        }

    @pytest.mark.parametrize("metadata", [None, {}, {"description": 5}, {"description": ""}, []])
    async def test_no_description(
        self, client: httpx.AsyncClient, seed: AsyncEngine, metadata: Any
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn, metadata=metadata)
        body = await detail(client, m["id"])
        assert body["description"] is None
        assert body["event"] is None and body["eventSlug"] is None
        assert body["stats"]["lastPriceYes"] is None and body["stats"]["lastPriceNo"] is None


class TestPhases:
    async def test_past_close_time_awaiting_resolution(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            m = await make_market(conn, close_at=utcnow() - timedelta(hours=1))
        body = await detail(client, m["id"])
        assert body["status"] == "closed" and body["resolved"] is False
        assert body["phases"]["trading"] == {
            "status": "closed",
            "opensAt": at(m["created_at"]),
            "closesAt": at(m["close_at"]),
            "closedAt": at(m["close_at"]),
            "closedBy": "close-time",
        }
        assert body["phases"]["resolution"]["status"] == "pending"
        assert body["phases"]["settlement"]["status"] == "pending"
        assert body["phases"]["claimability"]["status"] == "not-claimable"

    @pytest.mark.parametrize(
        ("outcome", "payout"),
        [
            ("yes", {"yes": 1000, "no": 0}),
            ("no", {"yes": 0, "no": 1000}),
            ("invalid", {"yes": 500, "no": 500}),
        ],
    )
    async def test_resolved_before_the_close_time(
        self, client: httpx.AsyncClient, seed: AsyncEngine, outcome: str, payout: dict[str, int]
    ) -> None:
        now = utcnow()
        resolved_at = now - timedelta(minutes=3)
        tx = "cd" * 32
        async with seed.begin() as conn:
            m = await make_market(
                conn,
                close_at=now + timedelta(days=1),
                status="resolved",
                resolution=outcome,
                resolved_at=resolved_at,
                resolved_tx_id=tx,
            )
        body = await detail(client, m["market_address"])
        assert body["resolved"] is True and body["finalOutcome"] == outcome
        assert body["status"] == "resolved"
        phases = body["phases"]
        assert phases["trading"]["status"] == "closed"
        assert phases["trading"]["closedAt"] == at(resolved_at)
        assert phases["trading"]["closedBy"] == "resolution"
        assert phases["resolution"] == {
            "status": "resolved",
            "dueAt": at(m["close_at"]),
            "outcome": outcome,
            "resolvedAt": at(resolved_at),
            "txId": tx,
        }
        assert phases["settlement"] == {
            "status": "settled",
            "settledAt": at(resolved_at),
            "payout": payout,
        }
        assert phases["claimability"] == {"status": "claimable", "claimableFrom": at(resolved_at)}

    async def test_resolved_after_the_close_time(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        now = utcnow()
        async with seed.begin() as conn:
            m = await make_market(
                conn,
                close_at=now - timedelta(days=1),
                status="resolved",
                resolution="yes",
                resolved_at=now - timedelta(hours=1),
                resolved_tx_id="ef" * 32,
            )
        trading = (await detail(client, m["id"]))["phases"]["trading"]
        assert trading["closedAt"] == at(m["close_at"])
        assert trading["closedBy"] == "close-time"


class TestErrors:
    @pytest.mark.parametrize("ref", ["999999", "0", str(2**31), str(2**63), "9" * 70])
    async def test_unknown_id_is_a_404(
        self, client: httpx.AsyncClient, seed: AsyncEngine, ref: str
    ) -> None:
        r = await client.get(f"/v1/markets/{ref}")
        assert r.status_code == 404, r.text
        body = r.json()
        assert body["code"] == "NOT_FOUND" and body["error"]["code"] == "NOT_FOUND"
        assert body["message"] == "market not found"

    async def test_unknown_address_is_a_404(
        self, client: httpx.AsyncClient, seed: AsyncEngine
    ) -> None:
        async with seed.begin() as conn:
            await make_market(conn)
        # A valid address of a wallet is simply not a market.
        r = await client.get(f"/v1/markets/{wallet_address(7)}")
        assert r.status_code == 404

    @pytest.mark.parametrize(
        "ref", ["not-an-address", "12ab", "-1", "1.5", "0x1234", "I" * 45, "x" * 81, "%20"]
    )
    async def test_malformed_is_a_400_naming_the_path(
        self, client: httpx.AsyncClient, seed: AsyncEngine, ref: str
    ) -> None:
        before = await row_counts(seed)
        r = await client.get(f"/v1/markets/{ref}")
        assert r.status_code == 400, r.text
        assert [p["field"] for p in r.json()["details"]["fields"]] == ["path.market"]
        assert await row_counts(seed) == before
