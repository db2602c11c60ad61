"""The SSRF guard of webhook URLs and the retry schedule."""

from __future__ import annotations

import ipaddress

import httpx
import pytest

from predmarket.settings import WebhookSettings
from predmarket.webhooks import signing, ssrf
from predmarket.webhooks.worker import DeliveryWorker


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
        "192.0.2.1",  # documentation
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2001:db8::1",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not ssrf.is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert ssrf.is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/x", "scheme_not_allowed"),
        ("file:///etc/passwd", "scheme_not_allowed"),
        ("javascript:alert(1)", "scheme_not_allowed"),
        ("gopher://127.0.0.1:6379/_INFO", "scheme_not_allowed"),
        ("http://user:pw@93.184.216.34/", "userinfo_not_allowed"),
        ("https:///nohost", "invalid_url"),
        ("not a url", "scheme_not_allowed"),
        ("http://127.0.0.1:8080/hook", "address_not_allowed"),
        ("http://localhost/hook", "address_not_allowed"),
        ("http://169.254.169.254/latest/meta-data/", "address_not_allowed"),
        ("http://[::1]/hook", "address_not_allowed"),
        ("http://[::ffff:127.0.0.1]/hook", "address_not_allowed"),
        ("http://10.0.0.5/hook", "address_not_allowed"),
        ("http://2130706433/hook", "address_not_allowed"),  # 127.0.0.1 as one number
        ("http://0x7f.1/hook", "address_not_allowed"),
    ],
)
async def test_refused_urls(url: str, reason: str) -> None:
    with pytest.raises(ssrf.TargetRefused) as refused:
        await ssrf.check(url, allow_private=False)
    assert refused.value.reason == reason


async def test_allow_private_lifts_only_the_address_rule() -> None:
    target = await ssrf.check("http://127.0.0.1:8080/hook", allow_private=True)
    assert str(target.address) == "127.0.0.1"
    with pytest.raises(ssrf.TargetRefused):
        await ssrf.check("ftp://127.0.0.1/", allow_private=True)


async def test_the_request_goes_to_the_checked_address_with_the_original_host() -> None:
    target = ssrf.Target(
        url=httpx.URL("https://hooks.example.com:8443/a?b=1"),
        address=ipaddress.ip_address("93.184.216.34"),
    )
    url, headers, extensions = target.pinned()
    assert str(url) == "https://93.184.216.34:8443/a?b=1"
    assert headers == {"host": "hooks.example.com:8443"}
    assert extensions == {"sni_hostname": "hooks.example.com"}
    plain = ssrf.Target(url=httpx.URL("http://h.example/x"), address=ipaddress.ip_address("::2"))
    url, headers, extensions = plain.pinned()
    assert str(url) == "http://[::2]/x" and headers == {"host": "h.example"} and extensions == {}


def test_the_retry_schedule_with_jitter() -> None:
    settings = WebhookSettings(retry_schedule_seconds=[5, 300, 1800], retry_jitter=0.2)
    worker = DeliveryWorker(
        None,  # type: ignore[arg-type]  # never touched by retry_delay
        settings,
        box=signing.SecretBox("x" * 48),
        allow_private=False,
        client=httpx.AsyncClient(),
    )
    for attempt, base in ((1, 5), (2, 300), (3, 1800)):
        delays = [worker.retry_delay(attempt) for _ in range(50)]
        assert all(d is not None and base * 0.8 <= d <= base * 1.2 for d in delays)
        assert len(set(delays)) > 1
    assert worker.retry_delay(4) is None


def test_the_default_schedule_spans_about_three_days() -> None:
    schedule = WebhookSettings().retry_schedule_seconds
    assert len(schedule) + 1 == 10
    assert 2.5 * 86400 < sum(schedule) < 3.5 * 86400
    assert schedule == sorted(schedule)


def test_private_targets_default_per_profile() -> None:
    assert WebhookSettings().private_targets_allowed("devnet")
    assert not WebhookSettings().private_targets_allowed("production")
    assert not WebhookSettings(allow_private=False).private_targets_allowed("devnet")
