"""The DAV log-ins the gateway remembers (no I/O): HTTP Basic credentials → the token rosterd's auth.dav_login gave
for them, kept only under a keyed hash of the credentials (a random key per process, so the memory holds neither a
password nor anything to try passwords against offline), for a short time and a bounded number of entries.

A DAV client sends its password with every request; asking rosterd for each would cost a password hash per
request and a new session per request. An entry that expires or is pushed out leaves its token in `retired`, for
the gateway to log out (so expired entries do not pile up sessions on the account); a token rosterd no longer
resumes is dropped without that."""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_TTL_SECONDS = 300.0
DEFAULT_MAX_ENTRIES = 1024
# Retired tokens waiting for their log-out; past it the oldest are left to expire in rosterd by themselves.
MAX_RETIRED = 4096
# A retired token is logged out only this long after it left the cache: a request that resumed it just before
# (at most the gateway's 30 s per CardDAV request) finishes in its session.
RETIRE_GRACE_SECONDS = 60.0


@dataclass(frozen=True)
class Entry:
    username: str
    token: str
    expires: float


class CredentialCache:
    def __init__(self, ttl: float = DEFAULT_TTL_SECONDS, max_entries: int = DEFAULT_MAX_ENTRIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        self._secret = secrets.token_bytes(32)
        self._entries: OrderedDict[bytes, Entry] = OrderedDict()
        self._retired: list[tuple[str, float]] = []

    def key(self, username: str, password: str) -> bytes:
        """The entry's key: HMAC-SHA256 under this process's random key, of the length-prefixed pair (so no two
        different pairs run together into the same bytes)."""
        user = username.encode("utf-8", "surrogatepass")
        secret = password.encode("utf-8", "surrogatepass")
        message = len(user).to_bytes(4, "big") + user + secret
        return hmac.new(self._secret, message, hashlib.sha256).digest()

    def get(self, key: bytes) -> Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires <= self._clock():
            del self._entries[key]
            self._retire(entry.token)
            return None
        self._entries.move_to_end(key)
        return entry

    def put(self, key: bytes, username: str, token: str) -> None:
        old = self._entries.pop(key, None)
        if old is not None and old.token != token:
            self._retire(old.token)
        self._entries[key] = Entry(username, token, self._clock() + self.ttl)
        while len(self._entries) > self.max_entries:
            _, pushed = self._entries.popitem(last=False)
            self._retire(pushed.token)
        self._sweep()

    def drop(self, key: bytes, token: str) -> None:
        """Forgets the entry of `key` if it still holds `token` (rosterd refused to resume it: nothing to log out)."""
        entry = self._entries.get(key)
        if entry is not None and entry.token == token:
            del self._entries[key]

    def take_retired(self) -> list[str]:
        """The tokens of expired and pushed-out entries retired over RETIRE_GRACE_SECONDS ago, to log out; each is
        handed out once."""
        self._sweep()
        due = self._clock() - RETIRE_GRACE_SECONDS
        taken = [token for token, when in self._retired if when <= due]
        self._retired = [(token, when) for token, when in self._retired if when > due]
        return taken

    def drain(self) -> list[str]:
        """Every token held, entries and retired alike (the gateway is stopping)."""
        tokens = [entry.token for entry in self._entries.values()] + [token for token, _ in self._retired]
        self._entries.clear()
        self._retired = []
        return tokens

    def __len__(self) -> int:
        return len(self._entries)

    def _sweep(self) -> None:
        now = self._clock()
        for key in [key for key, entry in self._entries.items() if entry.expires <= now]:
            self._retire(self._entries.pop(key).token)

    def _retire(self, token: str) -> None:
        self._retired.append((token, self._clock()))
        del self._retired[:-MAX_RETIRED]
