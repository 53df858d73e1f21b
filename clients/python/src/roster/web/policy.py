"""What the gateway lets through, in both directions (no I/O): the page's requests against an allow-list, and
the daemon's lines without their tokens."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .._wire import decode_object

# The methods the pages use. Everything that logs in, resumes or hands out a token or secret (auth.*, of which
# recover_start is POST /forgot and recover POST /recover; users.register, session.resume, account.recovery_codes,
# account.totp_*), that changes who the connection is (session.hello's locale is the gateway's to set,
# session.logout is POST /logout), and every admin.* stays out. Verifying the email proves only that the mail
# arrived, for the session's own account, so its two methods pass. The passkey.* methods act on the session's own
# account and hand out nothing secret (register_begin and remove prove the password, as the daemon limits).
# The passkey log-in is the one log-in on the tab's own connection: its challenge belongs to the connection that
# asked for it, and so does the assertion waiting for a TOTP code. Its answer's token is taken out like every
# other; the relay keeps it for POST /passkey-login and gives the page a one-time ticket in its place
# (LOGS_IN, relay.py, tickets.py). The app passwords (CardDAV's, which open contacts only and never auth.login) are
# listed, made and removed on the account page: a new one's password is the one secret the page is handed, as it
# is shown to its person once (its answer has no `token`).
RELAYED_METHODS = frozenset({
    "form.open", "form.input", "form.close", "form.submit",
    "contacts.list", "contacts.search", "contacts.add", "contacts.update", "contacts.remove",
    "users.check_username",
    "session.whoami", "session.list", "session.revoke", "session.revoke_others",
    "account.show", "account.email_verify_send", "account.email_verify",
    "passkey.register_begin", "passkey.register_finish", "passkey.list", "passkey.remove",
    "auth.passkey_begin", "auth.passkey_finish",
    "account.app_password_create", "account.app_password_list", "account.app_password_remove",
})
# The relayed methods whose answer logs the connection in, with a token.
LOGS_IN = frozenset({"auth.passkey_finish"})
# The register and log-in forms' submits answer a token and log the connection in: they are POST /register and
# POST /login, so that the token only ever lands in the HttpOnly cookie. The password form keeps its session.
SUBMITTABLE_FORMS = frozenset({"password"})


@dataclass(frozen=True)
class Relay:
    """A request to pass on, as one line for the daemon. `logs_in` is the request's id, as `answer_key` writes it,
    when its answer is a log-in's (LOGS_IN) whose token the relay must take out; else None."""

    line: bytes
    logs_in: str | None = None


@dataclass(frozen=True)
class Refuse:
    """A request the gateway answers itself: `answer` is the JSON-RPC error, or None for a notification."""

    answer: str | None


def judge_frame(text: str, refusal_message: str) -> Relay | Refuse:
    """What to do with one text frame from the page.

    The frame is parsed and written again before it is relayed, so what the daemon reads is exactly what was
    judged: JSON may hold raw newlines between tokens, and one frame must never become two requests."""
    try:
        message = json.loads(text)
    except ValueError:
        return Refuse(_error(None, -32700, "parse_error", "not JSON"))
    if not isinstance(message, dict):
        return Refuse(_error(None, -32600, "invalid_request", "one JSON-RPC request object per frame"))
    method = message.get("method")
    params = message.get("params")
    form = params.get("form") if isinstance(params, dict) else None
    allowed = method in RELAYED_METHODS and (method != "form.submit" or form in SUBMITTABLE_FORMS)
    if not allowed:
        if "id" not in message:
            return Refuse(None)
        request_id = message.get("id")
        plain_id = request_id if isinstance(request_id, (str, int, float)) or request_id is None else None
        return Refuse(_error(plain_id, 1031, "forbidden", refusal_message,
                             method=method if isinstance(method, str) else None))
    logs_in = answer_key(message.get("id")) if method in LOGS_IN and "id" in message else None
    return Relay(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n", logs_in)


def answer_key(request_id: Any) -> str:
    """A request's or an answer's id as one string, so that 1 and "1" stay apart."""
    return json.dumps(request_id, separators=(",", ":"))


def with_ticket(message: dict[str, Any], ticket: str) -> dict[str, Any]:
    """A log-in's answer for the page: its token replaced by the ticket that POST /passkey-login takes."""
    result = message.get("result")
    if not isinstance(result, dict):
        return message
    return {**message, "result": {**{key: value for key, value in result.items() if key != "token"},
                                  "ticket": ticket}}


def login_token(message: dict[str, Any]) -> tuple[str, str] | None:
    """The (token, username) of a log-in's successful answer; None for a refusal or anything else."""
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("token"), str) and isinstance(result.get("username"), str):
        return result["token"], result["username"]
    return None


def without_tokens(line: bytes) -> str | None:
    """The daemon's line as a frame for the page, every `token` member removed at any depth; None for a blank or
    unreadable line (the daemon writes neither, and the page has no use for them)."""
    message = decode_object(line)
    return None if message is None else frame_without_tokens(message)


def frame_without_tokens(message: dict[str, Any]) -> str:
    """A decoded message as a frame for the page, every `token` member removed at any depth."""
    return json.dumps(_strip(message), ensure_ascii=False, separators=(",", ":"))


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _strip(item) for key, item in value.items() if key != "token"}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value


def _error(request_id: Any, code: int, reason: str, message: str, **data: Any) -> str:
    details = {"reason": reason, **{key: value for key, value in data.items() if value is not None}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message, "data": details}},
                      ensure_ascii=False, separators=(",", ":"))
