"""Whom a request speaks for (no I/O): the browser's address, from the TCP peer, or from X-Forwarded-For when the
peer is a reverse proxy the gateway was told to trust."""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class TrustedProxies:
    """The addresses (single ones or CIDR blocks) of the reverse proxies whose X-Forwarded-For is believed."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, values: Iterable[str]) -> TrustedProxies:
        """The proxies `values` name, each as `proxy_network` reads it."""
        return cls(tuple(proxy_network(value) for value in values))

    def trusts(self, address: Address) -> bool:
        return any(address.version == network.version and address in network for network in self.networks)


def proxy_network(value: str) -> Network:
    """One `--trusted-proxy`: `203.0.113.7`, `10.0.0.0/8`, `::1`, `2001:db8::/32`; ValueError otherwise. Host bits
    in a CIDR block are allowed (`10.1.2.3/8` is 10.0.0.0/8), as a person writing it means."""
    return ipaddress.ip_network(value.strip(), strict=False)


def browser_address(peer: str | None, forwarded_for: Iterable[str], proxies: TrustedProxies) -> str | None:
    """The address rosterd is told the browser has, in canonical form; None when the peer is not an IP address.

    Without a trusted proxy, or from a peer that is not one, X-Forwarded-For is ignored: anyone can write it. From a
    trusted proxy it is the rightmost entry that is not itself a trusted proxy: each proxy appends the address it
    saw, so everything left of that entry is the browser's to write. An entry the walk from the right reaches and
    cannot read (a name, `unknown`, a port on a bare IPv6 address), or a header with no entry that is not a trusted
    proxy, gives the peer itself: the proxy's one address, shared by everyone behind it, rather than an address
    someone may have chosen. Nothing in the header makes this raise."""
    # A link-local peer's zone names the gateway's own interface, not anything about the browser.
    direct = _address((peer or "").partition("%")[0])
    if direct is None or not proxies.trusts(direct):
        return None if direct is None else str(direct)
    entries = [entry.strip() for value in forwarded_for for entry in value.split(",")]
    for entry in reversed(entries):
        address = _address(entry)
        if address is None:
            return str(direct)
        if not proxies.trusts(address):
            return str(address)
    return str(direct)


def _address(text: str) -> Address | None:
    """An IP address literal, as a proxy may write it: `a.b.c.d`, `a.b.c.d:port`, an IPv6 address, `[v6]` or
    `[v6]:port`. An IPv4-mapped IPv6 address is its IPv4 address; a zone (`%eth0`) is refused."""
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not _is_port(rest)):
            return None
        text = inside
    elif text.count(":") == 1:
        text, _, port = text.partition(":")
        if not _is_port(":" + port):
            return None
    if "%" in text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_port(text: str) -> bool:
    return text.startswith(":") and 1 <= len(text) <= 6 and text[1:].isascii() and text[1:].isdigit() \
        and int(text[1:]) <= 65535


def address_bucket(address: str | None) -> str:
    """What the gateway counts a browser's connections and tabs by: an IPv4 address itself, an IPv6 address by its
    /64 (what one subscriber is handed, as rosterd counts a remote), "" for a peer that is no IP address."""
    parsed = _address((address or "").partition("%")[0])
    if parsed is None:
        return ""
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(parsed) >> 64 << 64, 64)))
    return str(parsed)
