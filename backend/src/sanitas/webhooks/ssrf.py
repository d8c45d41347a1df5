"""Where a webhook may point: http(s) URLs whose host resolves only to public addresses.

A webhook makes the server send requests to a URL a user chose, so without a check any account
could reach what only the server can: its own loopback services, the private network, a
cloud's metadata service. `check_url` is called when an endpoint is created or changed (the
caller gets a 422 with a code) and `resolve_target` again before every attempt, and the request
then goes to the address that was checked (sender.py), so a name that resolved to a public
address at creation and to 127.0.0.1 later (DNS rebinding) is still refused.

Refused: loopback, private (RFC 1918, unique local fc00::/7), link-local, shared (CGNAT),
reserved, multicast, unspecified and every other non-global address, in IPv4 and IPv6,
including IPv4 addresses written inside IPv6 (mapped ::ffff:a.b.c.d, 6to4, Teredo, NAT64).
When a name resolves to several addresses, one refused address refuses the URL.
`allow_private` (SANITAS_WEBHOOK_ALLOW_PRIVATE, development and tests) lifts that rule,
except for the cloud metadata addresses, which are never allowed.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from sanitas.models.webhook import WEBHOOK_URL_MAX

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services: AWS/GCP/Azure/OpenStack (IPv4), AWS (IPv6), Alibaba.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "fd00:ec2::254", "100.100.100.200"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeUrl(Exception):
    """The URL may not be used as a webhook endpoint; `code` says why, for programs."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Target:
    """Where one attempt goes: the parsed URL and the checked address to connect to."""

    url: SplitResult
    host: str  # as written in the URL (IPv6 without brackets), lowercased
    port: int
    addresses: tuple[IPAddress, ...]  # every one checked, in the resolver's order


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal(ip: IPAddress, allow_private: bool) -> str | None:
    """Why `ip` may not be called (None: it may)."""
    inner = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    for candidate in (inner, ip):
        if candidate is None:
            continue
        if candidate in METADATA_ADDRESSES:
            return "a cloud metadata address"
        if allow_private:
            continue
        if candidate.is_loopback:
            return "a loopback address"
        if candidate.is_link_local:
            return "a link-local address"
        if candidate.is_multicast:
            return "a multicast address"
        if candidate.is_private:
            return "a private address"
        if candidate.is_unspecified or candidate.is_reserved or not candidate.is_global:
            return "a reserved address"
    return None


def parse(url: str) -> tuple[SplitResult, str, int]:
    """The URL, its host and port, or UnsafeUrl `invalid_webhook_url`."""
    def bad(why: str) -> UnsafeUrl:
        return UnsafeUrl("invalid_webhook_url", f"url: {why}")

    if len(url) > WEBHOOK_URL_MAX:
        raise bad(f"at most {WEBHOOK_URL_MAX} characters")
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise bad("must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise bad("not a valid URL") from None
    if parts.scheme not in ("http", "https"):
        raise bad("must start with https:// (or http://)")
    if parts.username is not None or parts.password is not None:
        raise bad("must not contain a user name or password")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise bad("has no host")
    if parts.fragment:
        raise bad("must not have a #fragment")
    return parts, host, port or (443 if parts.scheme == "https" else 80)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _addresses(host: str, port: int) -> list[IPAddress]:
    literal = _literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        infos = []
    found: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    if not found:
        raise UnsafeUrl("webhook_url_unresolvable",
                        f"url: the host {host!r} could not be resolved.")
    return found


def resolve_target(url: str, allow_private: bool) -> Target:
    """Check `url` and resolve its host; every address must be allowed. Returns them, to
    connect to. Raises UnsafeUrl."""
    parts, host, port = parse(url)
    addresses = _addresses(host.lower(), port)
    for address in addresses:
        why = refusal(address, allow_private)
        if why is not None:
            verb = "is" if addresses == [_literal(host)] else "resolves to"
            raise UnsafeUrl("webhook_url_not_allowed",
                            f"url: {host} {verb} {why}; webhooks may only call public "
                            "addresses.")
    return Target(url=parts, host=host.lower(), port=port, addresses=tuple(addresses))


def check_url(url: str, allow_private: bool) -> None:
    """Raises UnsafeUrl if `url` may not be a webhook endpoint."""
    resolve_target(url, allow_private)
