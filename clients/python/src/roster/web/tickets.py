"""The tokens of passkey log-ins on their way to the cookie (no I/O).

A passkey log-in happens on the tab's own rosterd connection, so its token arrives in a WebSocket answer, where the
page must never see it. The relay keeps it here and hands the page a ticket instead: 32 random bytes, good once,
for a short while, and only from the browser address it was issued to. POST /passkey-login trades the ticket for
the HttpOnly cookie. A ticket not traded in time is dropped, and its token handed back to be revoked, so that an
abandoned log-in leaves no session behind."""
from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

# Seconds from the answer to the page's POST: the page sends it at once, so this is only slack for a slow browser.
TICKET_SECONDS = 30.0
# Tickets held at once, over every tab; past it the oldest goes (and its token is revoked).
MAX_TICKETS = 1024


@dataclass(frozen=True)
class Held:
    """A token waiting for its ticket: whose it is, for which browser address, until when."""

    token: str
    username: str
    address: str
    expires: float


class LoginTickets:
    """Tickets by their text, oldest first; bounded in number and in time."""

    def __init__(self, *, seconds: float = TICKET_SECONDS, limit: int = MAX_TICKETS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.limit = limit
        self._clock = clock
        self._held: OrderedDict[str, Held] = OrderedDict()
        self._abandoned: list[str] = []

    def __len__(self) -> int:
        return len(self._held)

    def issue(self, token: str, username: str, address: str) -> str:
        """A new ticket for `token`, good once from `address` (an `address_bucket`) within `seconds`."""
        self._expire()
        while len(self._held) >= self.limit:
            _, oldest = self._held.popitem(last=False)
            self._abandoned.append(oldest.token)
        ticket = secrets.token_urlsafe(32)
        self._held[ticket] = Held(token, username, address, self._clock() + self.seconds)
        return ticket

    def redeem(self, ticket: str, address: str) -> Held | None:
        """The token `ticket` stands for, taken out; None for a ticket unknown, used, expired, or issued to another
        address (which leaves it for its own browser)."""
        self._expire()
        held = self._held.get(ticket)
        if held is None or held.address != address:
            return None
        del self._held[ticket]
        return held

    def abandoned(self) -> list[str]:
        """The tokens whose tickets expired or were pushed out unused, once each: the caller revokes them."""
        self._expire()
        tokens, self._abandoned = self._abandoned, []
        return tokens

    def drain(self) -> list[str]:
        """Every token still held or handed back, once: the gateway is stopping, and none will be traded now."""
        tokens = self.abandoned() + [held.token for held in self._held.values()]
        self._held.clear()
        return tokens

    def _expire(self) -> None:
        now = self._clock()
        while self._held:
            ticket, held = next(iter(self._held.items()))
            if held.expires > now:
                break
            del self._held[ticket]
            self._abandoned.append(held.token)
