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
except for ALWAYS_REFUSED: the cloud metadata addresses and the whole link-local ranges they
live in, never allowed, also when written inside IPv6 (IPv4-mapped, -compatible, -translated,
6to4, Teredo, NAT64) or with an IPv6 zone.

Names are resolved with a time limit (`timeout`): a resolver that does not answer in time gets
the same refusal as a name that does not resolve, and the caller is not held longer.
"""

from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from sanitas.models.webhook import WEBHOOK_URL_MAX

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Never called, whatever SANITAS_WEBHOOK_ALLOW_PRIVATE says: where clouds serve instance
# metadata and credentials. Link-local 169.254.0.0/16 holds AWS/GCP/Azure/OpenStack/Oracle/
# DigitalOcean/IBM's 169.254.169.254, AWS ECS's task metadata 169.254.170.2 and .23, Tencent's
# 169.254.0.23; fe80::/10 is its IPv6 counterpart. The rest sit outside those ranges.
METADATA_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "fd00:ec2::/32",       # AWS's on-instance services: IMDS fd00:ec2::254, ECS ::23, DNS, NTP
    "fd20:ce::254/128",    # Google Cloud's metadata server over IPv6
    "100.100.100.200/32",  # Alibaba Cloud
    "192.0.0.192/32",      # Oracle Cloud (its older metadata address)
    "168.63.129.16/32",    # Azure's host endpoint (WireServer)
))
LINK_LOCAL_NETWORKS = tuple(ipaddress.ip_network(n) for n in ("169.254.0.0/16", "fe80::/10"))
# IPv6 prefixes whose last 32 bits are an IPv4 address: IPv4-compatible (deprecated),
# IPv4-translated (SIIT), NAT64 well-known and local-use (RFC 6052, 8215). Mapped (::ffff:0:0/96),
# 6to4 and Teredo are read by `ipaddress` itself.
_LAST_32_BITS_IPV4 = tuple(ipaddress.ip_network(n) for n in (
    "::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48"))


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
    if any(ip in network for network in _LAST_32_BITS_IPV4) and int(ip) & 0xFFFFFFFF > 1:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)  # (not :: and ::1 themselves)
    return None


def always_refused(ip: IPAddress) -> str | None:
    """Why `ip` is refused even with SANITAS_WEBHOOK_ALLOW_PRIVATE (None: it is not). An IPv6
    zone (`fe80::1%eth0`) does not change the answer: networks compare the bits alone."""
    if any(ip in network for network in METADATA_NETWORKS):
        return "a cloud metadata address"
    if any(ip in network for network in LINK_LOCAL_NETWORKS):
        return "a link-local address (where cloud metadata services live)"
    return None


def refusal(ip: IPAddress, allow_private: bool) -> str | None:
    """Why `ip` may not be called (None: it may)."""
    inner = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    for candidate in (inner, ip):
        if candidate is None:
            continue
        why = always_refused(candidate)
        if why is not None:
            return why
        if allow_private:
            continue
        if candidate.is_loopback:
            return "a loopback address"
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


# getaddrinfo cannot be interrupted, so it runs on these threads and the caller waits at most
# its time limit. A resolver that hangs holds one of them until the system's own resolver
# timeout (resolv.conf); while all are held, further lookups wait in the queue and time out in
# their callers just the same.
_resolvers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="sanitas-webhook-dns")


def _addresses(host: str, port: int, timeout: float) -> list[IPAddress]:
    literal = _literal(host)
    if literal is not None:
        return [literal]
    unresolvable = UnsafeUrl("webhook_url_unresolvable",
                             f"url: the host {host!r} could not be resolved.")
    if timeout <= 0:
        raise unresolvable
    lookup = _resolvers.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=timeout)
    except TimeoutError:
        lookup.cancel()
        raise UnsafeUrl("webhook_url_unresolvable",
                        f"url: the host {host!r} could not be resolved in time.") from None
    except (OSError, UnicodeError):
        infos = []
    found: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    if not found:
        raise unresolvable
    return found


def resolve_target(url: str, allow_private: bool, timeout: float) -> Target:
    """Check `url` and resolve its host within `timeout` seconds; every address must be
    allowed. Returns them, to connect to. Raises UnsafeUrl."""
    parts, host, port = parse(url)
    addresses = _addresses(host.lower(), port, timeout)
    for address in addresses:
        why = refusal(address, allow_private)
        if why is not None:
            verb = "is" if addresses == [_literal(host)] else "resolves to"
            raise UnsafeUrl("webhook_url_not_allowed",
                            f"url: {host} {verb} {why}; webhooks may only call public "
                            "addresses.")
    return Target(url=parts, host=host.lower(), port=port, addresses=tuple(addresses))


def check_url(url: str, allow_private: bool, timeout: float) -> None:
    """Raises UnsafeUrl if `url` may not be a webhook endpoint."""
    resolve_target(url, allow_private, timeout)
