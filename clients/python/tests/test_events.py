"""Event params become typed events; a type this package does not know is kept, not an exception."""
from __future__ import annotations

import roster


def test_each_event_type_is_typed() -> None:
    assert roster.parse_event({"type": "field", "form": "register", "field": "username", "state": "valid",
                               "code": "available", "message": "ok", "enabled": True, "rev": 4}) == roster.FieldEvent(
        form="register", field="username", state="valid", code="available", message="ok", enabled=True, rev=4)
    assert roster.parse_event({"type": "form", "form": "login", "submittable": True}) == roster.FormEvent(
        form="login", submittable=True)
    assert roster.parse_event({"type": "submit", "form": "login", "state": "failed", "code": "wrong_password",
                               "message": "Wrong password"}) == roster.SubmitEvent(
        form="login", state="failed", code="wrong_password", message="Wrong password")
    assert roster.parse_event({"type": "session", "user": None}) == roster.SessionEvent(user=None)
    assert roster.parse_event({"type": "results", "form": "contacts", "query": "", "items": [], "total": 0}) == \
        roster.ResultsEvent(form="contacts", query="", items=[], total=0)


def test_an_unknown_or_malformed_event_is_kept_whole() -> None:
    assert roster.parse_event({"type": "future", "x": 1}) == roster.UnknownEvent(type="future",
                                                                                 params={"type": "future", "x": 1})
    assert roster.parse_event({"type": "field", "form": "register"}) == roster.UnknownEvent(
        type="field", params={"type": "field", "form": "register"})
    assert roster.parse_event({"type": "form", "form": "login", "submittable": "yes"}).type == "form"
    assert isinstance(roster.parse_event({"type": "session", "user": 5}), roster.UnknownEvent)
