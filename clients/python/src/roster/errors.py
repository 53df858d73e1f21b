"""What a call can raise: the daemon's refusal (RosterError) or the end of the connection (ConnectionLost)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RosterError(Exception):
    """A JSON-RPC error answer. `reason` is stable snake_case for programs; `message` is localized for people."""

    code: int
    message: str
    data: dict[str, Any]
    reason: str

    def __init__(self, error: Mapping[str, Any]) -> None:
        code = error.get("code")
        message = error.get("message")
        data = error.get("data")
        self.code = code if isinstance(code, int) else 0
        self.message = message if isinstance(message, str) else ""
        self.data = dict(data) if isinstance(data, Mapping) else {}
        reason = self.data.get("reason")
        self.reason = reason if isinstance(reason, str) else ""
        super().__init__(f"{self.message} ({self.reason}, {self.code})")


class ConnectionLost(ConnectionError):
    """The connection to rosterd ended (the daemon closed it, it broke, or the client was closed)."""
