"""Every TCP connection before aiohttp reads a byte of it: at most so many open per peer address and in all, and
each one's first request head within a deadline, so half-sent requests (slowloris) cannot hold the gateway's
descriptors. Later heads on a kept-alive connection are aiohttp's keep-alive timeout, set to the same deadline."""
from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from .forwarded import TrustedProxies, _address, address_bucket

log = logging.getLogger("roster.web")


def _answer(status: str, text: str, retry: bool) -> bytes:
    """A whole HTTP/1.1 answer written before closing, so a browser (or a script) learns why and when to return."""
    body = (text + "\n").encode()
    retry_after = "Retry-After: 5\r\n" if retry else ""
    return (f"HTTP/1.1 {status}\r\n{retry_after}Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


TOO_MANY = _answer("429 Too Many Requests", "Too many connections from this address.", retry=True)
BUSY = _answer("503 Service Unavailable", "The gateway has too many connections.", retry=True)
TOO_SLOW = _answer("408 Request Timeout", "The request head came too slowly.", retry=False)


class ConnectionGate:
    """Open connections by peer address (an IPv6 peer by its /64) and in all (no I/O). A trusted proxy's
    connections count only in all: everyone behind it shares its one address, and the proxy bounds its own."""

    def __init__(self, per_address: int, total: int, proxies: TrustedProxies = TrustedProxies()) -> None:
        self.per_address = per_address
        self.total = total
        self._proxies = proxies
        self._open: Counter[str] = Counter()
        self._all = 0

    def admit(self, peer: str | None) -> str | bytes:
        """Counts one connection from `peer`; returns the key to `release` it with, or the answer to close it
        with (`TOO_MANY` for its address, `BUSY` for the gateway)."""
        if self._all >= self.total:
            return BUSY
        address = _address((peer or "").partition("%")[0])
        key = "*proxy*" if address is not None and self._proxies.trusts(address) else address_bucket(peer)
        if key != "*proxy*" and self._open[key] >= self.per_address:
            return TOO_MANY
        self._open[key] += 1
        self._all += 1
        return key

    def release(self, key: str) -> None:
        self._open[key] -= 1
        if self._open[key] <= 0:
            del self._open[key]
        self._all -= 1

    @property
    def open(self) -> int:
        return self._all


class GatedConnection(asyncio.Protocol):
    """aiohttp's protocol for one connection (`inner`), let in by `gate` and given `head_seconds` for its first
    request head; `heads` is told which inner protocols have had one (the gateway's first middleware says so)."""

    def __init__(self, inner: asyncio.Protocol, gate: ConnectionGate, head_seconds: float,
                 waiting: dict[object, GatedConnection]) -> None:
        self._inner = inner
        self._gate = gate
        self._head_seconds = head_seconds
        self._waiting = waiting
        self._key: str | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        peer = transport.get_extra_info("peername")
        admitted = self._gate.admit(str(peer[0]) if isinstance(peer, tuple) and peer else None)
        if isinstance(admitted, bytes):
            log.warning("refused a connection: %s", "too many from its address" if admitted is TOO_MANY
                        else "too many open in all")
            transport.write(admitted)
            transport.close()
            return
        self._key = admitted
        self._timer = asyncio.get_running_loop().call_later(self._head_seconds, self._head_too_slow)
        self._waiting[self._inner] = self
        self._inner.connection_made(transport)

    def head_arrived(self) -> None:
        """The first request head is in: from now on aiohttp's own timeouts hold the connection."""
        self._waiting.pop(self._inner, None)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _head_too_slow(self) -> None:
        self._timer = None
        self._waiting.pop(self._inner, None)
        log.warning("closed a connection whose first request head took over %g s", self._head_seconds)
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(TOO_SLOW)
            self._transport.close()

    def data_received(self, data: bytes) -> None:
        if self._key is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._key is not None else None

    def pause_writing(self) -> None:
        if self._key is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._key is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._key is None:
            return
        self.head_arrived()
        self._gate.release(self._key)
        self._key = None
        self._inner.connection_lost(exc)


def gated(factory: Callable[[], Any], gate: ConnectionGate, head_seconds: float,
          waiting: dict[object, GatedConnection]) -> Callable[[], asyncio.Protocol]:
    """A protocol factory for `loop.create_server`: each of `factory`'s protocols behind the gate."""
    return lambda: GatedConnection(factory(), gate, head_seconds, waiting)
