"""Logged-in rosterd connections kept between CardDAV requests, so that a client's sync of many requests logs in
once instead of once per request (and its `resume` audit entries do not bury everything else).

A connection is kept only idle and only for the same credentials, browser address, User-Agent and language that
opened it (its session.hello named them, and a connection keeps its remote), for at most `idle_seconds`, and at
most `limit` are kept in all (the oldest idle one goes first). A request takes one for itself alone and gives it
back when it is answered; one that failed on the way is closed instead."""
from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar


class Closable(Protocol):
    """What the pool needs of a kept connection."""

    @property
    def connected(self) -> bool: ...

    async def close(self) -> None: ...


Kept = TypeVar("Kept", bound=Closable)

DEFAULT_LIMIT = 64
DEFAULT_IDLE_SECONDS = 30.0


class ConnectionPool(Generic[Kept]):
    """Idle logged-in connections by what opened them."""

    def __init__(self, limit: int = DEFAULT_LIMIT, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.idle_seconds = idle_seconds
        self._clock = clock
        # (key, serial) → (connection, when it went idle); insertion order is idle order.
        self._idle: OrderedDict[tuple[Hashable, int], tuple[Kept, float]] = OrderedDict()
        self._serial = 0

    def __len__(self) -> int:
        return len(self._idle)

    async def take(self, key: Hashable) -> Kept | None:
        """An idle connection opened for `key`, now the caller's alone; None when there is none."""
        await self._expire()
        for slot in reversed(self._idle):
            if slot[0] == key:
                kept, _ = self._idle.pop(slot)
                if kept.connected:
                    return kept
                await kept.close()
        return None

    async def give(self, key: Hashable, kept: Kept) -> None:
        """Keeps `kept` for the next request of `key`, or closes it when it is no longer connected."""
        if not kept.connected or self.limit <= 0:
            await kept.close()
            return
        await self._expire()
        while len(self._idle) >= self.limit:
            _, (oldest, _) = self._idle.popitem(last=False)
            await oldest.close()
        self._serial += 1
        self._idle[(key, self._serial)] = (kept, self._clock())

    async def drop(self, key: Hashable) -> None:
        """Closes every idle connection of `key` (its credentials stopped holding)."""
        for slot in [slot for slot in self._idle if slot[0] == key]:
            kept, _ = self._idle.pop(slot)
            await kept.close()

    async def close(self) -> None:
        """Closes every idle connection (the gateway is stopping)."""
        while self._idle:
            _, (kept, _) = self._idle.popitem(last=False)
            await kept.close()

    async def _expire(self) -> None:
        now = self._clock()
        while self._idle:
            slot, (kept, since) = next(iter(self._idle.items()))
            if now - since < self.idle_seconds:
                return
            del self._idle[slot]
            await kept.close()
