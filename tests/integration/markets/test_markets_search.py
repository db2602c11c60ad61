"""GET /v1/search: strict matches first, the typo-tolerant fallback when there are none, results a
union discriminated by ``type``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from helpers.markets import make_event, make_market, row_counts, wallet_address

pytestmark = pytest.mark.db

ALICE = wallet_address(301)


async def search(client: httpx.AsyncClient, q: str, **params: Any) -> dict[str, Any]:
    r = await client.get("/v1/search", params={"q": q, **params})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


IDENTITY = {
    "market": "question",
    "event": "slug",
    "category": "name",
    "tag": "name",
    "creator": "address",
}


def brief(results: list[dict[str, Any]]) -> list[tuple[str, str, float, str]]:
    """(type, identity, score, match) of each result."""
    return [(r["type"], r[r["type"]][IDENTITY[r["type"]]], r["score"], r["match"]) for r in results]


@pytest.fixture
async def data(seed: AsyncEngine) -> dict[str, Any]:
    async with seed.begin() as conn:
        event = await make_event(
            conn, slug="us-election-2028", title="US Presidential Election", category="politics"
        )
        btc = await make_market(
            conn,
            question="Will Bitcoin close above 100k?",
            category="crypto",
            tags=["bitcoin"],
            creator=ALICE,
            volume=10**21,
        )
        rain = await make_market(
            conn,
            question="Will it rain in London tomorrow?",
            category="weather",
            tags=["rain", "london"],
            creator=ALICE,
            volume=10**18,
        )
        league = await make_market(
            conn, question="Will Arsenal win the league?", category="sports", tags=["football"]
        )
        vote = await make_market(
            conn,
            question="Will the Democrat win the election?",
            category="politics",
            event_group_id=event["id"],
            volume=5,
        )
    return {"btc": btc, "rain": rain, "league": league, "vote": vote, "event": event}


class TestStrict:
    async def test_tag_and_market(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        body = await search(client, "bitcoin")
        assert body["query"] == {
            "text": "bitcoin",
            "terms": ["bitcoin"],
            "mode": "strict",
            "corrections": {},
        }
        assert brief(body["results"]) == [
            ("tag", "bitcoin", 1.0, "strict"),
            ("market", "Will Bitcoin close above 100k?", 0.8, "strict"),
        ]
        tag, market = body["results"]
        assert tag["tag"] == {
            "name": "bitcoin",
            "marketCount": 1,
            "openMarketCount": 1,
            "resolvedMarketCount": 0,
        }
        # a market hit carries the full spec 2.1 summary
        assert market["market"]["id"] == data["btc"]["id"]
        assert market["market"]["marketAddress"] == data["btc"]["market_address"]
        assert market["market"]["volume"] == str(10**21)
        assert body["pagination"] == {"limit": 20, "nextCursor": None}

    async def test_case_insensitive_and_ranked_by_type_on_ties(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "ELECTION")
        assert brief(body["results"]) == [
            ("event", "us-election-2028", 0.8, "strict"),
            ("market", "Will the Democrat win the election?", 0.8, "strict"),
        ]
        assert body["results"][0]["event"] == {
            "id": data["event"]["id"],
            "slug": "us-election-2028",
            "title": "US Presidential Election",
            "category": "politics",
            "marketCount": 1,
        }

    async def test_category(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        body = await search(client, "crypto")
        assert brief(body["results"]) == [("category", "crypto", 1.0, "strict")]
        assert body["results"][0]["category"]["marketCount"] == 1

    async def test_every_term_must_match(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "rain london")
        assert brief(body["results"]) == [
            ("market", "Will it rain in London tomorrow?", 0.6, "strict")
        ]

    async def test_creator_by_part_of_the_address(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, ALICE[3:15], types="creator")
        assert body["results"] == [
            {
                "type": "creator",
                "score": 0.6,
                "match": "strict",
                "creator": {"address": ALICE, "marketCount": 2},
            }
        ]
        exact = await search(client, ALICE)
        assert brief(exact["results"]) == [("creator", ALICE, 1.0, "strict")]

    async def test_types_filter(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        body = await search(client, "bitcoin", types="market,event")
        assert [r["type"] for r in body["results"]] == ["market"]
        body = await search(client, "bitcoin", types=" tag ")
        assert [r["type"] for r in body["results"]] == ["tag"]

    async def test_a_strict_hit_prevents_the_fallback(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        # "rai" is in "rain" (strict); the fallback would have read it as other words too
        body = await search(client, "rai")
        assert body["query"]["mode"] == "strict"
        assert {r["match"] for r in body["results"]} == {"strict"}


class TestFuzzy:
    async def test_a_misspelt_tag_and_question_word(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "bitcon")
        assert body["query"] == {
            "text": "bitcon",
            "terms": ["bitcon"],
            "mode": "fuzzy",
            "corrections": {"bitcon": ["bitcoin"]},
        }
        # similarity 1 - 1/7: the strict score times the similarity
        assert brief(body["results"]) == [
            ("tag", "bitcoin", 0.8571, "fuzzy"),
            ("market", "Will Bitcoin close above 100k?", 0.6857, "fuzzy"),
        ]

    async def test_a_misspelt_category(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "wether")
        assert body["query"]["corrections"] == {"wether": ["weather"]}
        assert brief(body["results"]) == [("category", "weather", 0.8571, "fuzzy")]

    async def test_a_transposition_in_an_event_title(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "electoin")
        assert body["query"]["corrections"] == {"electoin": ["election"]}
        assert [(r["type"], r["match"]) for r in body["results"]] == [
            ("event", "fuzzy"),
            ("market", "fuzzy"),
        ]

    async def test_several_terms(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        body = await search(client, "rain londn")
        assert body["query"]["corrections"] == {"rain": ["rain"], "londn": ["london"]}
        assert [r["type"] for r in body["results"]] == ["market"]
        assert body["results"][0]["market"]["id"] == data["rain"]["id"]

    async def test_nothing_close(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        body = await search(client, "zzzzqqq")
        assert body["query"]["mode"] == "fuzzy"
        assert body["query"]["corrections"] == {"zzzzqqq": []}
        assert body["results"] == []
        assert body["pagination"] == {"limit": 20, "nextCursor": None}

    async def test_numbers_are_not_corrected(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "2027")  # the data has 2028
        assert body["query"]["corrections"] == {"2027": []}
        assert body["results"] == []

    async def test_creators_are_never_fuzzy(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        typo = ALICE[:10] + ("x" if ALICE[10] != "x" else "y") + ALICE[11:]
        body = await search(client, typo, types="creator")
        assert body["results"] == []


class TestListing:
    async def test_paging_both_modes(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        everything = brief((await search(client, "will"))["results"])
        assert len(everything) == 4
        # Same score: the most traded market first.
        assert everything[0][1] == "Will Bitcoin close above 100k?"
        walked: list[Any] = []
        cursor = None
        while True:
            body = await search(client, "will", limit=1, **({"cursor": cursor} if cursor else {}))
            walked.extend(brief(body["results"]))
            cursor = body["pagination"]["nextCursor"]
            if cursor is None:
                break
        assert walked == everything
        cursor = (await search(client, "will", limit=1))["pagination"]["nextCursor"]
        r = await client.get("/v1/search", params={"q": "win", "cursor": cursor})
        assert r.status_code == 400
        assert r.json()["details"]["fields"][0]["type"] == "cursor_query_mismatch"
        body = await search(client, "will", limit=3, page=1)
        assert body["pagination"] == {"limit": 3, "nextCursor": None, "page": 1, "total": 4}
        assert brief(body["results"]) == everything[3:]

    async def test_fields(self, client: httpx.AsyncClient, data: dict[str, Any]) -> None:
        body = await search(client, "bitcoin", fields="score")
        assert body["results"] == [
            {"type": "tag", "score": 1.0},
            {"type": "market", "score": 0.8},
        ]

    async def test_facets_count_the_matched_markets(
        self, client: httpx.AsyncClient, data: dict[str, Any]
    ) -> None:
        body = await search(client, "win", facets="true")
        assert body["facets"] == {
            "category": [{"value": "politics", "count": 1}, {"value": "sports", "count": 1}],
            "tag": [{"value": "football", "count": 1}],
            "status": [{"value": "open", "count": 2}],
        }

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({}, "query.q"),
            ({"q": ""}, "query.q"),
            ({"q": "   "}, "query.q"),
            ({"q": "x" * 201}, "query.q"),
            ({"q": " ".join(["w"] * 11)}, "query.q"),
            ({"q": "rain", "types": "market,person"}, "query.types"),
            ({"q": "rain", "limit": 101}, "query.limit"),
            ({"q": "rain", "fields": "question"}, "query.fields"),
            ({"q": "rain", "cursor": "abc"}, "query.cursor"),
        ],
    )
    async def test_bad_input(
        self,
        client: httpx.AsyncClient,
        data: dict[str, Any],
        seed: AsyncEngine,
        params: dict[str, Any],
        field: str,
    ) -> None:
        before = await row_counts(seed)
        r = await client.get("/v1/search", params=params)
        assert r.status_code == 400, r.text
        assert [p["field"] for p in r.json()["details"]["fields"]] == [field]
        assert await row_counts(seed) == before
