"""Who pays for a request: tiers from the principal, the client IP behind trusted proxies, and
which requests spend a budget at all."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from predmarket.auth.principal import DeveloperIdentity, Principal, set_principal
from predmarket.ratelimit.policy import (
    READS,
    WRITES,
    Policy,
    ip_identity,
    is_counted,
    kind_of,
)
from predmarket.settings import LimitSettings

WALLET = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH"
GROUPLESS = "3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK"
DEV = DeveloperIdentity(
    key_id="k1", builder_code="bc1", owner=WALLET, scopes=frozenset({"public:read"})
)


def scope(
    *,
    principal: Principal | None = None,
    peer: str | None = "203.0.113.7",
    headers: list[tuple[bytes, bytes]] | None = None,
    path: str = "/v1/markets",
    method: str = "GET",
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": headers or [],
        "client": (peer, 5555) if peer is not None else None,
    }
    if principal is not None:
        set_principal(s, principal)
    return s


@pytest.fixture
def policy() -> Policy:
    return Policy(
        LimitSettings(
            elevated_wallets=[GROUPLESS + ":0"],
            trusted_proxies=["10.0.0.0/8", "127.0.0.1"],
        )
    )


class TestTiers:
    def test_no_principal_is_anonymous_per_ip(self, policy: Policy) -> None:
        subject = policy.subject(scope())
        assert subject.tier.name == "anonymous"
        assert (subject.tier.reads, subject.tier.writes) == (60, 10)
        assert subject.identity == "ip:203.0.113.7"

    def test_wallet_session_is_signed_in_per_wallet(self, policy: Policy) -> None:
        p = Principal(wallet=WALLET, auth="bearer", session_id=uuid.uuid4())
        subject = policy.subject(scope(principal=p))
        assert subject.tier.name == "signed-in"
        assert (subject.tier.reads, subject.tier.writes) == (600, 60)
        assert subject.identity == f"wallet:{WALLET}"
        # The same wallet from another IP shares the budget key.
        assert policy.subject(scope(principal=p, peer="198.51.100.1")) == subject

    def test_legacy_api_key_counts_as_its_wallet(self, policy: Policy) -> None:
        p = Principal(wallet=WALLET, auth="api_key", api_key_id="a1")
        assert policy.subject(scope(principal=p)).identity == f"wallet:{WALLET}"

    def test_allowlisted_wallet_is_elevated_with_or_without_group_suffix(
        self, policy: Policy
    ) -> None:
        for address in (GROUPLESS, GROUPLESS + ":0", GROUPLESS + ":3"):
            subject = policy.subject(scope(principal=Principal(wallet=address, auth="cookie")))
            assert subject.tier.name == "elevated"
            assert (subject.tier.reads, subject.tier.writes) == (3000, 300)
            assert subject.identity == f"wallet:{GROUPLESS}"

    def test_developer_key_without_wallet_is_per_key(self, policy: Policy) -> None:
        subject = policy.subject(scope(principal=Principal(developer=DEV)))
        assert subject.tier.name == "developer"
        assert (subject.tier.reads, subject.tier.writes) == (1200, 120)
        assert subject.identity == "developer:k1"

    def test_wallet_wins_over_developer_key(self, policy: Policy) -> None:
        p = Principal(wallet=WALLET, auth="bearer", developer=DEV)
        assert policy.subject(scope(principal=p)).tier.name == "signed-in"

    def test_credential_that_did_not_verify_is_anonymous(self, policy: Policy) -> None:
        p = Principal(credential_error=("UNAUTHORIZED", "unknown token"))
        assert policy.subject(scope(principal=p)).identity == "ip:203.0.113.7"

    def test_configured_numbers(self) -> None:
        policy = Policy(
            LimitSettings(
                anonymous_reads_per_minute=5,
                anonymous_writes_per_minute=2,
                elevated_reads_per_minute=7,
                elevated_writes_per_minute=3,
                developer_reads_per_minute=11,
                developer_writes_per_minute=4,
            )
        )
        assert (policy.anonymous.reads, policy.anonymous.writes) == (5, 2)
        assert (policy.elevated.reads, policy.elevated.writes) == (7, 3)
        assert (policy.developer.reads, policy.developer.writes) == (11, 4)


class TestClientIp:
    def test_forwarded_for_ignored_from_an_untrusted_peer(self, policy: Policy) -> None:
        s = scope(peer="203.0.113.7", headers=[(b"x-forwarded-for", b"1.1.1.1")])
        assert policy.client_ip(s) == "203.0.113.7"

    def test_forwarded_for_ignored_without_trusted_proxies(self) -> None:
        s = scope(peer="127.0.0.1", headers=[(b"x-forwarded-for", b"1.1.1.1")])
        assert Policy(LimitSettings()).client_ip(s) == "127.0.0.1"

    def test_rightmost_untrusted_hop_from_a_trusted_peer(self, policy: Policy) -> None:
        # The client spoofs 9.9.9.9; our proxies 10.1.2.3 and 127.0.0.1 appended the truth.
        xff = b"9.9.9.9, 198.51.100.20, 10.1.2.3"
        s = scope(peer="127.0.0.1", headers=[(b"x-forwarded-for", xff)])
        assert policy.client_ip(s) == "198.51.100.20"

    def test_several_header_lines_are_one_list(self, policy: Policy) -> None:
        headers = [(b"x-forwarded-for", b"198.51.100.20"), (b"x-forwarded-for", b"10.0.0.1")]
        assert policy.client_ip(scope(peer="10.0.0.2", headers=headers)) == "198.51.100.20"

    def test_all_hops_trusted_gives_the_leftmost(self, policy: Policy) -> None:
        s = scope(peer="127.0.0.1", headers=[(b"x-forwarded-for", b"10.0.0.9, 10.0.0.1")])
        assert policy.client_ip(s) == "10.0.0.9"

    def test_garbage_hop_stops_at_the_last_trusted_one(self, policy: Policy) -> None:
        s = scope(peer="127.0.0.1", headers=[(b"x-forwarded-for", b"1.2.3.4, nonsense, 10.0.0.5")])
        assert policy.client_ip(s) == "10.0.0.5"

    def test_ipv6_counts_per_64(self, policy: Policy) -> None:
        a = policy.client_ip(scope(peer="2001:db8:1:2::1"))
        b = policy.client_ip(scope(peer="2001:db8:1:2:ffff::9"))
        c = policy.client_ip(scope(peer="2001:db8:1:3::1"))
        assert a == b == "2001:db8:1:2::/64"
        assert c != a
        assert ip_identity("::ffff:192.0.2.1") == "192.0.2.1"

    def test_no_client_in_scope(self, policy: Policy) -> None:
        assert policy.client_ip(scope(peer=None)) == "unknown"

    def test_bad_trusted_proxy_setting_is_refused(self) -> None:
        with pytest.raises(ValueError, match="not an IP address or network"):
            LimitSettings(trusted_proxies=["proxy.internal"])

    def test_lists_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from predmarket.settings import Settings

        monkeypatch.setenv("PREDMARKET_LIMITS__TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1")
        monkeypatch.setenv("PREDMARKET_LIMITS__ELEVATED_WALLETS", f'["{WALLET}"]')
        limits = Settings().limits
        assert limits.trusted_proxies == ["10.0.0.0/8", "127.0.0.1"]
        assert limits.elevated_wallets == [WALLET]


class TestWhatCounts:
    @pytest.mark.parametrize(
        ("method", "kind"),
        [
            *[(m, READS) for m in ("GET", "HEAD", "OPTIONS")],
            *[(m, WRITES) for m in ("POST", "PUT", "PATCH", "DELETE")],
        ],
    )
    def test_reads_and_writes(self, method: str, kind: str) -> None:
        assert kind_of(method) == kind

    @pytest.mark.parametrize(
        ("path", "counted"),
        [
            ("/v1/health", False),
            ("/v1/health/ready", False),
            ("/v1/realtime/stream", False),
            ("/v1/healthz", True),
            ("/v1/markets", True),
            ("/v1/realtime/streams", True),
            ("/openapi.json", True),
        ],
    )
    def test_exempt_paths(self, path: str, counted: bool) -> None:
        assert is_counted(scope(path=path)) is counted

    def test_cors_preflight_is_not_counted_but_plain_options_is(self) -> None:
        preflight = [
            (b"origin", b"https://app.example"),
            (b"access-control-request-method", b"POST"),
        ]
        assert not is_counted(scope(method="OPTIONS", headers=preflight))
        assert is_counted(scope(method="OPTIONS"))
