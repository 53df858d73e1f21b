"""How many WebSockets are open: at most so many per session (cookie token), per browser address and in all
(no I/O)."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from enum import Enum


class Refusal(Enum):
    """Which bound a WebSocket upgrade met."""

    SESSION = "session"
    ADDRESS = "address"
    TOTAL = "total"


@dataclass(frozen=True)
class Ticket:
    """What `SocketBudget.acquire` took, to be given back to `release` once."""

    session: str
    address: str


class SocketBudget:
    """Counts open sockets by session and by browser address; a token is kept only as a hash, so the gateway's
    memory holds no token. Tabs without a cookie count against their address like any other: without that, one
    client could hold every socket of the gateway."""

    def __init__(self, per_session: int, total: int, per_address: int | None = None) -> None:
        self.per_session = per_session
        self.per_address = total if per_address is None else per_address
        self.total = total
        self._open: Counter[str] = Counter()
        self._by_address: Counter[str] = Counter()
        self._all = 0

    def acquire(self, token: str | None, address: str = "") -> Ticket | Refusal:
        """Takes one socket for `token` (None: a tab not logged in) from `address` (an `address_bucket`; "" when
        the peer has none); returns the ticket to release it with, or the bound it met."""
        key = _key(token)
        if self._all >= self.total:
            return Refusal.TOTAL
        if token is not None and self._open[key] >= self.per_session:
            return Refusal.SESSION
        if self._by_address[address] >= self.per_address:
            return Refusal.ADDRESS
        self._open[key] += 1
        self._by_address[address] += 1
        self._all += 1
        return Ticket(key, address)

    def release(self, ticket: Ticket) -> None:
        for counter, key in ((self._open, ticket.session), (self._by_address, ticket.address)):
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]
        self._all -= 1


def _key(token: str | None) -> str:
    return "" if token is None else hashlib.blake2b(token.encode(), digest_size=16).hexdigest()
