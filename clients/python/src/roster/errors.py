"""What a call can raise: the daemon's refusal (RosterError, PasskeyRejected for a WebAuthn response that did not
verify) or the end of the connection (ConnectionLost)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

# `passkey_rejected`'s `data.why`: the check a WebAuthn response failed (protocol.md "Passkeys").
PasskeyRejection = Literal["challenge", "origin", "rp_id", "type", "user_present", "signature", "format", "duplicate",
                           "counter"]
PASSKEY_REJECTIONS: tuple[PasskeyRejection, ...] = ("challenge", "origin", "rp_id", "type", "user_present",
                                                    "signature", "format", "duplicate", "counter")


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


class PasskeyRejected(RosterError):
    """`passkey_rejected` (1019): a registration or log-in response that did not verify. `why` is the check that
    failed, one of PASSKEY_REJECTIONS ("" if the daemon named none; a newer daemon's may be another string)."""

    why: str

    def __init__(self, error: Mapping[str, Any]) -> None:
        super().__init__(error)
        why = self.data.get("why")
        self.why = why if isinstance(why, str) else ""

    def __str__(self) -> str:
        return f"{self.message} ({self.reason}: {self.why}, {self.code})"


def error_from(error: Mapping[str, Any]) -> RosterError:
    """The exception for a JSON-RPC error object: PasskeyRejected for `passkey_rejected`, else RosterError."""
    data = error.get("data")
    reason = data.get("reason") if isinstance(data, Mapping) else None
    return PasskeyRejected(error) if reason == "passkey_rejected" else RosterError(error)


class ConnectionLost(ConnectionError):
    """The connection to rosterd ended (the daemon closed it, it broke, or the client was closed)."""
