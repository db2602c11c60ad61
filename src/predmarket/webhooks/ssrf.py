"""Where a webhook may point: the SSRF guard (docs/webhooks.md, "Allowed URLs").

A webhook URL is chosen by an integration, and the service POSTs to it from inside the
deployment's network, so the URL must not reach the service's own neighbours:

- only ``http`` and ``https``; no user name or password in the URL; a host is required;
- every address the host resolves to must be a public unicast address: loopback, private
  (RFC 1918, unique-local), link-local (169.254.0.0/16 with the cloud metadata endpoint,
  fe80::/10), carrier-grade NAT, multicast, unspecified, reserved and documentation ranges are
  refused, and so are IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64, 6to4, Teredo)
  when the embedded address is not public;
- the check runs when a webhook is created or its URL changes AND before every delivery attempt,
  and the attempt connects to the very address that was checked (the TCP connection goes to the
  IP, with the original ``Host`` header and TLS server name), so a DNS answer that changes
  between the check and the connection (DNS rebinding) cannot redirect it; redirects are never
  followed.

``allow_private`` turns the address check off (tests with a local receiver; the devnet profile
by default). The scheme and user-info rules always hold.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Final

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

SCHEMES: Final = ("http", "https")
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_CGNAT: Final = ipaddress.IPv4Network("100.64.0.0/10")
_RESOLVE_TIMEOUT_S: Final = 5.0


class TargetRefused(Exception):
    """The URL may not be used; ``reason`` is a stable token, the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL and the address to connect to."""

    url: httpx.URL
    address: IPAddress

    def pinned(self) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
        """The URL to request (host replaced by the checked IP), the headers that keep the
        original host, and the request extensions carrying the TLS server name."""
        host = self.url.host
        ip = str(self.address)
        pinned = self.url.copy_with(host=ip)
        default_port = 443 if self.url.scheme == "https" else 80
        port = self.url.port
        host_header = host if ":" not in host else f"[{host}]"
        if port is not None and port != default_port:
            host_header = f"{host_header}:{port}"
        extensions = {"sni_hostname": host} if self.url.scheme == "https" else {}
        return pinned, {"host": host_header}, extensions


def parse_url(raw: str) -> httpx.URL:
    """The URL if its form is acceptable, else :class:`TargetRefused`."""
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise TargetRefused("invalid_url", "not a valid absolute URL") from None
    if url.scheme not in SCHEMES:
        raise TargetRefused("scheme_not_allowed", "only http:// and https:// URLs are allowed")
    if not url.host:
        raise TargetRefused("invalid_url", "the URL has no host")
    if url.userinfo:
        raise TargetRefused("userinfo_not_allowed", "the URL may not carry a user or password")
    if url.port == 0:
        raise TargetRefused("invalid_url", "port 0 is not a port")
    return url


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def is_public(ip: IPAddress) -> bool:
    """Whether ``ip`` is a public unicast address a webhook may reach."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return is_public(inner)
        if ip.scope_id:
            return False
    if ip.is_multicast or ip.is_unspecified or ip.is_loopback or ip.is_link_local:
        return False
    if ip.is_private or ip.is_reserved:
        return False
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return False
    return ip.is_global


async def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), _RESOLVE_TIMEOUT_S
        )
    except (OSError, TimeoutError):
        raise TargetRefused("unresolvable_host", "the URL's host does not resolve") from None
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise TargetRefused("unresolvable_host", "the URL's host does not resolve")
    return addresses


async def check(raw: str | httpx.URL, *, allow_private: bool) -> Target:
    """Parse and resolve ``raw``; :class:`TargetRefused` unless every address is allowed."""
    url = raw if isinstance(raw, httpx.URL) else parse_url(raw)
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await _resolve(url.host, port)
    if not allow_private:
        for ip in addresses:
            if not is_public(ip):
                raise TargetRefused(
                    "address_not_allowed",
                    "the URL's host resolves to a loopback, private, link-local or otherwise "
                    "non-public address",
                )
    return Target(url=url, address=addresses[0])
