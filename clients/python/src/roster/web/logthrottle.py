"""Log lines bounded per kind: a flood of one failure (a slowloris, a bad POST again and again) writes one line per
interval, then a count of the rest, instead of a traceback per request."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

# The kind of a line: its logger, level, message template and exception type, never its arguments, which a peer
# may choose (a different Host every time is still one kind).
Kind = tuple[str, int, str, str]
# A record with this attribute set is a throttle's own count of dropped lines, and always passes.
SUMMARY = "roster_throttle_summary"


@dataclass
class _Window:
    opened: float
    suppressed: int = 0


class LogThrottle(logging.Filter):
    """Passes the first record of each kind, then drops that kind's records until `interval` seconds have passed;
    the record that opens the next window says how many were dropped, and so does `flush` for a window that closed
    with drops and no record after them. A traceback is kept only on a record that passes."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._windows: dict[Kind, _Window] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, SUMMARY, False):
            return True
        kind = _kind(record)
        now = self._clock()
        window = self._windows.get(kind)
        if window is not None and now - window.opened < self.interval:
            window.suppressed += 1
            return False
        if window is not None and window.suppressed:
            record.msg = f"{record.msg} ({window.suppressed} more like it in the last {now - window.opened:.0f} s)"
        self._windows[kind] = _Window(now)
        self._forget(now)
        return True

    def flush(self) -> list[str]:
        """The counts of windows that have closed with records dropped since their first line; each is said once."""
        now = self._clock()
        said = []
        for kind, window in list(self._windows.items()):
            if now - window.opened >= self.interval and window.suppressed:
                said.append(f"{window.suppressed} more like \"{kind[2]}\" in the last {now - window.opened:.0f} s")
                del self._windows[kind]
        return said

    def _forget(self, now: float) -> None:
        # Windows long closed with nothing dropped are no longer needed; kinds are few, so this stays small.
        if len(self._windows) > 256:
            for kind, window in list(self._windows.items()):
                if now - window.opened >= self.interval and not window.suppressed:
                    del self._windows[kind]


def _kind(record: logging.LogRecord) -> Kind:
    exception = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] is not None else ""
    return record.name, record.levelno, str(record.msg), exception
