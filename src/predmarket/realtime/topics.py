"""The topic grammar of spec 6.1 and who may subscribe to what.

Public: ``market:{address}:orders``, ``market:{address}:fills``, ``dispute:{marketId}``,
``settings:banner``, ``health:indexer``. Session-only, for the session's own wallet:
``user:{address}:orders|fills|parlays|notifications``, ``user:{address}:reveals:{marketId}``,
``user:{address}:rewards:{marketId}``. An address may carry a ``:N`` group suffix, so topics are
read from both ends, never split blindly on ``:``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from predmarket.auth.principal import Principal
from predmarket.auth.wallets import canonical_wallet, same_wallet
from predmarket.kit.errors import InvalidRequest
from predmarket.realtime.errors import RealtimeTopicForbidden

#: Spec 4.2's address rule: 30..80 characters of base58 plus ``:``, optional ``:N`` suffix.
_ADDRESS: Final = re.compile(r"[1-9A-HJ-NP-Za-km-z]{30,78}(?::[0-9]{1,2})?")
_MARKET_ID: Final = re.compile(r"[1-9][0-9]{0,18}")
_FIXED: Final = frozenset({"settings:banner", "health:indexer"})
_MARKET_KINDS: Final = ("orders", "fills")
_USER_KINDS: Final = ("orders", "fills", "parlays", "notifications")
_USER_MARKET_KINDS: Final = ("reveals", "rewards")
#: Longest topic list accepted in the query (20 topics of ~100 characters each, with commas).
MAX_TOPICS_LENGTH: Final = 4096
SESSION_AUTH: Final = ("cookie", "bearer")


@dataclass(frozen=True, slots=True)
class Subscription:
    """The validated topics of one stream: as asked (``requested``, in order, without
    duplicates) and the outbox topics that feed them (``outbox_topics``)."""

    requested: tuple[str, ...]
    outbox_topics: frozenset[str]


def _user_topic(topic: str) -> tuple[str, str] | None:
    """``user:{address}:{rest}`` → (address, rest) when ``rest`` is a known kind."""
    body = topic[len("user:") :]
    for kind in _USER_KINDS:
        if body.endswith(":" + kind):
            return body[: -len(kind) - 1], kind
    for kind in _USER_MARKET_KINDS:
        head, sep, market_id = body.rpartition(":")
        if sep and head.endswith(":" + kind) and _MARKET_ID.fullmatch(market_id):
            return head[: -len(kind) - 1], f"{kind}:{market_id}"
    return None


def parse_topics(raw: str | None) -> list[str]:
    """The ``topics`` query parameter as a list; 400 when it is missing, empty or malformed."""
    if raw is None or not raw.strip():
        raise InvalidRequest.for_field(
            "query.topics", "topics is required: a comma-separated list", type="missing"
        )
    if len(raw) > MAX_TOPICS_LENGTH:
        raise InvalidRequest.for_field(
            "query.topics", f"topics is longer than {MAX_TOPICS_LENGTH} characters"
        )
    topics = [t.strip() for t in raw.split(",")]
    if any(not t for t in topics):
        raise InvalidRequest.for_field("query.topics", "topics has an empty entry")
    return list(dict.fromkeys(topics))


def _forbidden(topic: str, reason: str, message: str) -> RealtimeTopicForbidden:
    return RealtimeTopicForbidden(
        f"{message}: {topic[:120]}", details={"topic": topic[:200], "reason": reason}
    )


def authorize(
    topics: list[str], principal: Principal, *, anonymous_cap: int, signed_in_cap: int
) -> Subscription:
    """Check every topic against the grammar and the caller; 403 ``realtime_topic_forbidden``
    for an unknown topic, another wallet's ``user:`` topic, or more topics than the cap."""
    cap = signed_in_cap if principal.signed_in else anonymous_cap
    if len(topics) > cap:
        raise RealtimeTopicForbidden(
            f"at most {cap} topics per connection ({len(topics)} asked)",
            details={"reason": "too-many-topics", "limit": cap, "count": len(topics)},
        )
    feeds: set[str] = set()
    for topic in topics:
        feeds.update(_feeds(topic, principal))
    return Subscription(tuple(topics), frozenset(feeds))


def _feeds(topic: str, principal: Principal) -> set[str]:
    if topic in _FIXED:
        return {topic}
    kind, _, rest = topic.partition(":")
    if kind == "market":
        address, _, which = rest.rpartition(":")
        if which in _MARKET_KINDS and _ADDRESS.fullmatch(address):
            return {topic}
    elif kind == "dispute":
        if _MARKET_ID.fullmatch(rest):
            return {topic}
    elif kind == "user":
        parsed = _user_topic(topic)
        if parsed is not None and _ADDRESS.fullmatch(parsed[0]):
            address, tail = parsed
            wallet = principal.wallet
            if wallet is None or principal.auth not in SESSION_AUTH:
                raise _forbidden(topic, "session-required", "user topics need a wallet session")
            if not same_wallet(address, wallet):
                raise _forbidden(topic, "other-wallet", "a user topic of another wallet")
            # The outbox names a wallet as the chain does; a groupless wallet is one wallet in
            # every group, so its topics are followed under the address asked and the canonical.
            canonical = canonical_wallet(address) or address
            return {topic, f"user:{canonical}:{tail}"}
    raise _forbidden(topic, "unknown-topic", "unknown topic")
