"""The topic grammar of spec 6.1 and its access rules, without a server."""

from __future__ import annotations

import pytest

from helpers.auth import new_key, wallet_of
from predmarket.auth.principal import ANONYMOUS, Principal
from predmarket.kit.errors import InvalidRequest
from predmarket.realtime.errors import RealtimeTopicForbidden
from predmarket.realtime.topics import authorize, parse_topics

MARKET = "2" + "A" * 44


def _session(address: str) -> Principal:
    return Principal(wallet=address, auth="bearer")


def test_parse_dedupes_and_refuses_empty_entries() -> None:
    assert parse_topics("a, b,a") == ["a", "b"]
    for raw in (None, "", " ", "a,,b", "x" * 5000):
        with pytest.raises(InvalidRequest):
            parse_topics(raw)


def test_public_topics() -> None:
    topics = [f"market:{MARKET}:orders", f"market:{MARKET}:fills", "dispute:7",
              "settings:banner", "health:indexer"]  # fmt: skip
    sub = authorize(topics, ANONYMOUS, anonymous_cap=8, signed_in_cap=20)
    assert sub.outbox_topics == frozenset(topics)


@pytest.mark.parametrize("kind", ["orders", "fills", "parlays", "notifications",
                                  "reveals:12", "rewards:3"])  # fmt: skip
def test_user_topics_of_the_sessions_wallet(kind: str) -> None:
    address, _ = wallet_of(new_key())
    sub = authorize(
        [f"user:{address}:{kind}"], _session(address), anonymous_cap=8, signed_in_cap=20
    )
    assert f"user:{address}:{kind}" in sub.outbox_topics


def test_groupless_wallet_with_group_suffix_follows_the_canonical_topic() -> None:
    address, _ = wallet_of(new_key(), "gl-secp256k1")
    sub = authorize(
        [f"user:{address}:2:orders"], _session(address), anonymous_cap=8, signed_in_cap=20
    )
    assert sub.outbox_topics == {f"user:{address}:2:orders", f"user:{address}:orders"}


@pytest.mark.parametrize(
    "topic",
    ["user:{a}:reveals", "user:{a}:rewards:0", "user:{a}:other", "market:{a}", "dispute:-1"],
)
def test_malformed_topics_are_forbidden(topic: str) -> None:
    address, _ = wallet_of(new_key())
    with pytest.raises(RealtimeTopicForbidden):
        authorize([topic.format(a=address)], _session(address), anonymous_cap=8, signed_in_cap=20)


def test_legacy_api_key_is_not_a_session() -> None:
    address, _ = wallet_of(new_key())
    key = Principal(wallet=address, auth="api_key")
    with pytest.raises(RealtimeTopicForbidden) as info:
        authorize([f"user:{address}:orders"], key, anonymous_cap=8, signed_in_cap=20)
    assert info.value.details["reason"] == "session-required"
