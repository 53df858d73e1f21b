"""How many WebSockets are open: at most so many per session (cookie token) and so many in all (no I/O)."""
from __future__ import annotations

import hashlib
from collections import Counter


class SocketBudget:
    """Counts open sockets by session; a token is kept only as a hash, so the gateway's memory holds no token."""

    def __init__(self, per_session: int, total: int) -> None:
        self.per_session = per_session
        self.total = total
        self._open: Counter[str] = Counter()
        self._all = 0

    def acquire(self, token: str | None) -> str | None:
        """Takes one socket for `token` (None: a tab not logged in); returns the key to release it with, or None
        when the session or the gateway is at its limit."""
        key = _key(token)
        if self._all >= self.total or (token is not None and self._open[key] >= self.per_session):
            return None
        self._open[key] += 1
        self._all += 1
        return key

    def release(self, key: str) -> None:
        self._open[key] -= 1
        if self._open[key] <= 0:
            del self._open[key]
        self._all -= 1


def _key(token: str | None) -> str:
    return "" if token is None else hashlib.blake2b(token.encode(), digest_size=16).hexdigest()
