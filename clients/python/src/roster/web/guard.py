"""Who may talk to the gateway (no I/O): the Host a request names, and the Origin a WebSocket or POST comes from."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Guard:
    """The gateway's own names (`host:port`, lower-case) and scheme.

    A Host outside `hosts` is a DNS-rebinding page (a name of the attacker's pointed at 127.0.0.1), so it is
    refused on every request; an Origin other than `scheme://` + one of `hosts` is another site's page."""

    hosts: frozenset[str]
    scheme: str

    @classmethod
    def listening(cls, host: str, port: int, scheme: str, extra_hosts: tuple[str, ...] = ()) -> Guard:
        """The names a browser uses for a gateway listening on `host:port`, plus `extra_hosts` (a proxy's name)."""
        names = {_authority(host, port)}
        if host in ("127.0.0.1", "::1", "localhost"):
            names.add(_authority("localhost", port))
        for extra in extra_hosts:
            names.add(extra if _has_port(extra) else _authority(extra, port))
        default_port = 443 if scheme == "https" else 80
        if port == default_port:
            names |= {name.rsplit(":", 1)[0] for name in set(names)}
        return cls(frozenset(name.lower() for name in names), scheme)

    def host_allowed(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts

    def origin_allowed(self, origin: str | None) -> bool:
        if origin is None:
            return False
        scheme, separator, authority = origin.partition("://")
        return separator == "://" and scheme.lower() == self.scheme and authority.lower() in self.hosts


def _authority(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"{shown}:{port}"


def _has_port(name: str) -> bool:
    head, separator, tail = name.rpartition(":")
    return bool(separator) and tail.isdigit() and (":" not in head or head.endswith("]"))
