"""Who may talk to the gateway (no I/O): the Host a request names, and the Origin a WebSocket or POST comes from."""
from __future__ import annotations

from dataclasses import dataclass

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class Guard:
    """The gateway's own names (`host:port`, lower-case) and the origins of its pages (`scheme://host:port`).

    A Host outside `hosts` is a DNS-rebinding page (a name of the attacker's pointed at 127.0.0.1), so it is
    refused on every request; an Origin outside `origins` is another site's page."""

    hosts: frozenset[str]
    origins: frozenset[str]

    @classmethod
    def listening(cls, host: str, port: int, tls: bool, extra_hosts: tuple[str, ...] = ()) -> Guard:
        """The names a browser uses for a gateway listening on `host:port` (and `localhost` for loopback), plus
        `extra_hosts`: `NAME[:PORT]` in the gateway's own scheme, or `https://NAME[:PORT]` for a TLS proxy."""
        scheme = "https" if tls else "http"
        named = [(scheme, _authority(host, port))]
        if host in LOOPBACK:
            named.append((scheme, _authority("localhost", port)))
        for extra in extra_hosts:
            given_scheme, separator, rest = extra.partition("://")
            if separator:
                extra_scheme, name = given_scheme.lower(), rest.rstrip("/")
                default = _default_port(extra_scheme)
            else:
                extra_scheme, name, default = scheme, extra, port
            named.append((extra_scheme, name if _has_port(name) else _authority(name, default)))
        hosts: set[str] = set()
        origins: set[str] = set()
        for named_scheme, authority in named:
            # Browsers leave the scheme's default port out of Origin and often out of Host.
            forms = {authority.lower()}
            if authority.endswith(f":{_default_port(named_scheme)}"):
                forms.add(authority.rsplit(":", 1)[0].lower())
            hosts |= forms
            origins |= {f"{named_scheme}://{form}" for form in forms}
        return cls(frozenset(hosts), frozenset(origins))

    def host_allowed(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts

    def origin_allowed(self, origin: str | None) -> bool:
        return origin is not None and origin.lower() in self.origins


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _authority(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"{shown}:{port}"


def _has_port(name: str) -> bool:
    head, separator, tail = name.rpartition(":")
    return bool(separator) and tail.isdigit() and (":" not in head or head.endswith("]"))
