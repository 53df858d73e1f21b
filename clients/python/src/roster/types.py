"""The shapes rosterd's answers share, written once so the generated methods can name them."""
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class Contact(TypedDict):
    """One contact; absent fields are None, times are Unix milliseconds."""

    id: int
    uid: str
    etag: str
    name: str
    phone: str | None
    email: str | None
    note: str | None
    created_at: int
    updated_at: int


class ContactCard(TypedDict):
    """A contact's vCard by uid, byte for byte as it was put, and its etag (`contacts.get_vcards`)."""

    uid: str
    vcard: str
    etag: str


class ContactMatch(TypedDict):
    """Which characters of a found contact's field the query matched: [start, length] pairs in UTF-16 code units."""

    field: Literal["name", "phone"]
    ranges: list[list[int]]


class FoundContact(Contact):
    """A contact in search results; `match` is there when the query marks part of it."""

    match: NotRequired[ContactMatch]


class User(TypedDict):
    """Who a session is logged in as."""

    username: str
    email: NotRequired[str]


class FieldSnapshot(TypedDict):
    """A field as `form.open` answers it."""

    name: str
    enabled: bool
    state: str
    code: str
    message: str
    rev: int


class ImportRejection(TypedDict):
    """A card or row `contacts.import` refused, with why."""

    line: int
    reason: str


MailKind = Literal["verification", "recovery", "password_changed", "email_changed", "totp_disabled",
                   "recovery_codes_made", "account_deleted"]
MailStatus = Literal["queued", "sent", "failed"]


class MailListing(TypedDict):
    """One outbox message as `admin.mail.list` lists it: never its body or code; times are RFC 3339 UTC strings."""

    id: int
    recipient: str
    kind: MailKind
    status: MailStatus
    # Hand-offs tried so far, and why the last one failed (a sendmail failure's reason, never its output).
    attempts: int
    last_error: str | None
    queued_at: str
    # When it is tried next (queued) and when it was handed off (sent).
    next_attempt_at: str | None
    sent_at: str | None


class MailCounts(TypedDict):
    """`admin.stats` `mail`: the outbox's messages by status (null while the storage cannot count)."""

    queued: int
    failed: int
    sent: int


class PasskeyInfo(TypedDict):
    """One passkey as `passkey.list` and `account.export` list it: never its key or counter. `id` (the credential
    id, base64url) is what `passkey.remove` takes; times are RFC 3339 UTC strings, `last_used_at` None until it
    first logs in. The generated results of those methods have exactly these members."""

    id: str
    name: str
    created_at: str
    last_used_at: str | None

class MethodDescription(TypedDict):
    """One method as `rpc.describe` lists it; optional params end in `?`."""

    name: str
    summary: str
    params: dict[str, Any]
    result: Any
