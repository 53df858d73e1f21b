"""The parts of a connection both clients share: framing a request, and sorting what the daemon sends."""
from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import RosterError, error_from
from .events import Event, parse_event

# One answer may be a whole address book exported; past this a line is taken as a broken peer, not data.
MAX_LINE_BYTES = 64 * 1024 * 1024
# Events nobody reads are kept up to this many; older ones are dropped (and counted) so memory stays bounded.
MAX_QUEUED_EVENTS = 10_000


def encode_request(request_id: int, method: str, params: Mapping[str, Any] | None) -> bytes:
    """One request line, ending in a newline."""
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params or {})}
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass(frozen=True)
class Answer:
    """An answer: `request_id` is None when the daemon could not tie it to a request (e.g. a line too long)."""

    request_id: int | None
    result: Any
    error: RosterError | None


def decode_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object a line holds; None for a blank line, one that is not JSON, or JSON that is not an object."""
    if not line.strip():
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def parse_line(line: bytes) -> Answer | Event | None:
    """What one line from the daemon is; None for a blank line or anything that is neither answer nor event."""
    message = decode_object(line)
    if message is None:
        return None
    if message.get("method") == "event":
        params = message.get("params")
        return parse_event(params if isinstance(params, dict) else {})
    if "result" not in message and "error" not in message:
        return None
    raw_id = message.get("id")
    request_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
    error = message.get("error")
    return Answer(request_id, message.get("result"), error_from(error) if isinstance(error, dict) else None)


class EventQueue:
    """Events in arrival order, bounded; a reader may take the first one matching what it waits for."""

    def __init__(self, limit: int = MAX_QUEUED_EVENTS) -> None:
        self._events: deque[Event] = deque()
        self._limit = limit
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._events)

    def append(self, event: Event) -> None:
        if len(self._events) >= self._limit:
            self._events.popleft()
            self.dropped += 1
        self._events.append(event)

    def take(self, wanted: Callable[[Event], bool]) -> Event | None:
        """Removes and returns the oldest event `wanted` accepts, leaving the others queued in order."""
        for index, event in enumerate(self._events):
            if wanted(event):
                del self._events[index]
                return event
        return None


def any_event(_: Event) -> bool:
    return True
