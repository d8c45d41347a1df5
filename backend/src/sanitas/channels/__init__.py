"""What the channels that run bodies in their own process (ICAP, the mail filter) share; it
imports nothing of sanitas."""

from __future__ import annotations


def peer_address(peer: object) -> str:
    """The address in a connection's `peername` (host of an (address, port) tuple), else the
    name itself (a Unix socket's path; empty when there is none)."""
    if isinstance(peer, tuple):
        return str(peer[0]) if peer else ""
    return str(peer or "")
