"""The daemon's events (`{"method":"event","params":{"type":…}}`), one small frozen dataclass per type."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from .types import FoundContact

FieldStateName = Literal["empty", "validating", "valid", "invalid"]
SubmitStateName = Literal["running", "succeeded", "failed"]


@dataclass(frozen=True)
class FieldEvent:
    """A field's new verdict; `rev` is the input revision it is for."""

    form: str
    field: str
    state: FieldStateName
    code: str
    message: str
    enabled: bool
    rev: int
    type: Literal["field"] = "field"


@dataclass(frozen=True)
class FormEvent:
    """A form's `submittable` changed."""

    form: str
    submittable: bool
    type: Literal["form"] = "form"


@dataclass(frozen=True)
class SubmitEvent:
    """A submit started or ended."""

    form: str
    state: SubmitStateName
    code: str
    message: str
    type: Literal["submit"] = "submit"


@dataclass(frozen=True)
class SessionEvent:
    """The session logged in (`user` is the username) or out (`user` is None)."""

    user: str | None
    type: Literal["session"] = "session"


@dataclass(frozen=True)
class ResultsEvent:
    """The contacts form's matches for `query` (the first page of `total`), each with its `match` when it has one."""

    form: str
    query: str
    items: list[FoundContact]
    total: int
    type: Literal["results"] = "results"


@dataclass(frozen=True)
class UnknownEvent:
    """An event type this package does not know yet (a newer daemon), or one it could not read."""

    type: str
    params: dict[str, Any] = field(default_factory=dict)


Event = FieldEvent | FormEvent | SubmitEvent | SessionEvent | ResultsEvent | UnknownEvent


def parse_event(params: Mapping[str, Any]) -> Event:
    """The typed event for an event's params; anything unexpected becomes an UnknownEvent, never an exception."""
    kind = params.get("type")
    try:
        if kind == "field":
            return FieldEvent(form=_text(params, "form"), field=_text(params, "field"),
                              state=cast(FieldStateName, _choice(params, "state", ("empty", "validating", "valid", "invalid"))),
                              code=_text(params, "code"), message=_text(params, "message"),
                              enabled=_flag(params, "enabled"), rev=_number(params, "rev"))
        if kind == "form":
            return FormEvent(form=_text(params, "form"), submittable=_flag(params, "submittable"))
        if kind == "submit":
            return SubmitEvent(form=_text(params, "form"),
                               state=cast(SubmitStateName, _choice(params, "state", ("running", "succeeded", "failed"))),
                               code=_text(params, "code"), message=_text(params, "message"))
        if kind == "session":
            user = params.get("user")
            if user is not None and not isinstance(user, str):
                raise ValueError("user")
            return SessionEvent(user=user)
        if kind == "results":
            items = params.get("items")
            if not isinstance(items, list):
                raise ValueError("items")
            return ResultsEvent(form=_text(params, "form"), query=_text(params, "query"),
                                items=cast(list[FoundContact], items), total=_number(params, "total"))
    except ValueError:
        pass
    return UnknownEvent(type=kind if isinstance(kind, str) else "", params=dict(params))


def _text(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise ValueError(key)
    return value


def _choice(params: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = _text(params, key)
    if value not in allowed:
        raise ValueError(key)
    return value


def _flag(params: Mapping[str, Any], key: str) -> bool:
    value = params.get(key)
    if not isinstance(value, bool):
        raise ValueError(key)
    return value


def _number(params: Mapping[str, Any], key: str) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(key)
    return value
