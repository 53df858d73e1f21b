"""roster.Client against the real rosterd: register, log in, contacts, answers out of order, events, errors."""
from __future__ import annotations

import signal
import threading
from concurrent.futures import Future
from typing import Any, Literal

import pytest

import roster
from conftest import Daemon, connect


def register_by_form(client: roster.Client, username: str, password: str) -> str:
    """Fills and submits the register form as a UI would, and returns the token it logs in with."""
    with client.form("register") as form:
        assert not form.submittable
        assert not form.fields["password"].enabled
        form.input("username", username)
        form.wait(lambda f: f.fields["password"].enabled)
        form.input("password", password)
        form.wait(lambda f: f.fields["confirm"].enabled)
        form.input("confirm", password)
        form.wait(lambda f: f.submittable)
        return form.submit()["token"]


def test_register_through_the_form_logs_in_and_says_so(client: roster.Client) -> None:
    register_by_form(client, "alice1", "secret1")
    assert client.session_whoami() == {"user": {"username": "alice1"}}
    sessions = [event for event in client.events(timeout=0) if isinstance(event, roster.SessionEvent)]
    assert sessions == [roster.SessionEvent(user="alice1")]


def test_the_form_helper_yields_typed_states_in_order(client: roster.Client) -> None:
    form = client.form("register")
    form.input("username", "abc")
    assert form.next_state(timeout=5) == roster.FieldState(name="username", state="invalid", code="too_short",
                                                           message="The username must be at least 6 characters long",
                                                           enabled=True, rev=1)
    form.input("username", "alice1")
    states = []
    while not (form.fields["username"].final and form.fields["username"].rev == 2 and form.fields["password"].enabled):
        next_state = form.next_state(timeout=5)
        assert next_state is not None
        states.append(next_state)
    assert [(s.name, s.state, s.code) for s in states if isinstance(s, roster.FieldState)] == [
        ("username", "validating", "validating"), ("username", "valid", "available"), ("password", "empty", "empty")]


def test_log_in_answers_a_token_another_connection_resumes(daemon: Daemon, client: roster.Client) -> None:
    assert client.users_register(username="bob123", password="pw1234567", email="bob@example.com") == {
        "username": "bob123"}
    login = client.auth_login(username="bob@example.com", password="pw1234567")
    assert login["username"] == "bob123"
    with connect(daemon) as other:
        assert other.session_whoami() == {"user": None}
        assert other.session_resume(token=login["token"]) == {"username": "bob123"}
        assert other.session_whoami() == {"user": {"username": "bob123", "email": "bob@example.com"}}
        other.session_logout()
    with pytest.raises(roster.RosterError) as revoked, connect(daemon) as third:
        third.session_resume(token=login["token"])
    assert revoked.value.reason == "not_found"


def test_contacts_add_search_and_a_round_trip_through_export_and_import(daemon: Daemon, client: roster.Client) -> None:
    client.users_register(username="carol1", password="secret1")
    client.auth_login(username="carol1", password="secret1")
    added = client.contacts_add(name="张三", phone="138 0013 8000")["contact"]
    assert added["name"] == "张三" and added["email"] is None and added["id"] >= 1
    client.contacts_add(name="Alice Smith", email="alice@example.com", note="同事")
    client.contacts_add(name="김수현")
    found = client.contacts_search(query="zs")
    assert [item["name"] for item in found["items"]] == ["张三"] and found["total"] == 1
    formats: list[Literal["vcard", "csv"]] = ["vcard", "csv"]
    for fmt in formats:
        exported = client.contacts_export(format=fmt)["data"]
        with connect(daemon) as other:
            other.users_register(username=f"dave{fmt}", password="secret1")
            other.auth_login(username=f"dave{fmt}", password="secret1")
            assert other.contacts_import(format=fmt, data=exported) == {"added": 3, "skipped": 0, "errors": [], "errors_total": 0}
            copied = other.contacts_list()["items"]
            original = client.contacts_list()["items"]
            assert [(c["name"], c["phone"], c["email"], c["note"]) for c in copied] == [
                (c["name"], c["phone"], c["email"], c["note"]) for c in original]


def test_a_fast_answer_overtakes_a_slow_one_and_both_are_matched(client: roster.Client) -> None:
    client.users_register(username="erin11", password="secret1")
    finished: list[str] = []
    slow = client.start("auth.login", {"username": "erin11", "password": "secret1"})
    fast = client.start("users.check_username", {"username": "erin11"})
    for name, future in (("auth.login", slow), ("users.check_username", fast)):
        future.add_done_callback(lambda _, name=name: finished.append(name))  # type: ignore[misc]
    assert slow.result(10)["username"] == "erin11"
    assert fast.result(10)["code"] == "taken"
    # Argon2id makes the log-in take tens of milliseconds; the check is answered at once, so it comes first.
    assert finished == ["users.check_username", "auth.login"]


def test_calls_from_many_threads_on_one_connection_each_get_their_own_answer(client: roster.Client) -> None:
    answers: dict[str, Any] = {}
    names = [f"user{index:03d}" for index in range(40)]

    def check(name: str) -> None:
        answers[name] = client.users_check_username(username=name)

    threads = [threading.Thread(target=check, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == names
    assert all(answer["code"] == "available" for answer in answers.values())


def test_the_real_debounce_checks_only_the_last_of_quick_keystrokes(daemon: Daemon) -> None:
    with connect(daemon, debounce_ms=None) as client:
        assert client.session_hello()["timing"]["debounce_ms"] == 500
        form = client.form("register")
        # Keystrokes a round trip apart fall inside one 500 ms window: one verdict, for the last of them.
        assert [form.input("username", value) for value in ("a", "al", "ali")] == [1, 2, 3]
        assert username_states_until_final(form, rev=3) == [(3, "invalid", "too_short")]
        # A check that needs the user database says "validating" first, then its verdict.
        form.input("username", "alice1")
        assert username_states_until_final(form, rev=4) == [(4, "validating", "validating"), (4, "valid", "available")]


def username_states_until_final(form: roster.Form, rev: int) -> list[tuple[int, str, str]]:
    """Every username state the form reads until the final one for `rev`."""
    seen: list[tuple[int, str, str]] = []
    while not seen or seen[-1][0] != rev or seen[-1][1] == "validating":
        state = form.next_state(timeout=5)
        assert state is not None, f"no final username state for rev {rev}; saw {seen}"
        if isinstance(state, roster.FieldState) and state.name == "username":
            seen.append((state.rev, state.state, state.code))
    return seen


def test_verdict_waits_for_the_last_input_not_the_snapshot(client: roster.Client) -> None:
    client.users_register(username="taken1", password="secret1")
    form = client.form("register")
    assert form.fields["username"].final  # "empty" at open is final, so waiting on `final` alone would not wait
    form.input("username", "abc")
    form.input("username", "taken1")
    assert (form.verdict("username").code, form.fields["username"].rev) == ("taken", 2)
    assert form.verdict("username").code == "taken"  # already settled: answered at once


def test_a_name_registered_elsewhere_turns_taken_live(daemon: Daemon, client: roster.Client) -> None:
    form = client.form("register")
    form.input("username", "frank1")
    form.wait(lambda f: f.fields["username"].code == "available")
    with connect(daemon) as other:
        other.users_register(username="frank1", password="secret1")
    form.wait(lambda f: f.fields["username"].code == "taken")
    assert form.fields["username"].state == "invalid"


def test_errors_carry_reason_code_data_and_the_localized_message(daemon: Daemon, client: roster.Client) -> None:
    client.users_register(username="grace1", password="secret1")
    with pytest.raises(roster.RosterError) as taken:
        client.users_register(username="Grace1", password="secret1")
    assert (taken.value.reason, taken.value.code, taken.value.data.get("field")) == ("taken", 1010, "username")
    with roster.Client(daemon.socket_path) as chinese, pytest.raises(roster.RosterError) as in_chinese:
        chinese.users_register(username="grace1", password="secret1")
    assert in_chinese.value.message == "用户名已存在" and in_chinese.value.reason == "taken"

    with pytest.raises(roster.RosterError) as unauthenticated:
        client.contacts_list()
    assert (unauthenticated.value.reason, unauthenticated.value.code) == ("unauthenticated", 1030)
    with pytest.raises(roster.RosterError) as unknown:
        client.call("no.such")
    assert (unknown.value.reason, unknown.value.code, unknown.value.data) == (
        "method_not_found", -32601, {"reason": "method_not_found", "method": "no.such"})
    assert unknown.value.message == "There is no method no.such"
    with pytest.raises(roster.RosterError) as missing:
        client.call("users.check_username", {})
    assert (missing.value.reason, missing.value.code, missing.value.data["param"]) == ("missing_param", -32602, "username")
    with pytest.raises(roster.RosterError) as out_of_range:
        client.contacts_list(limit=0)
    assert (out_of_range.value.reason, out_of_range.value.data["param"]) == ("out_of_range", "limit")
    with pytest.raises(roster.RosterError) as wrong_type:
        client.call("contacts.list", {"limit": "ten"})
    assert wrong_type.value.reason == "wrong_type"


def test_connection_loss_ends_calls_and_events_with_connection_lost(daemon: Daemon, client: roster.Client) -> None:
    daemon.process.send_signal(signal.SIGSTOP)  # the daemon cannot answer this call before it dies
    waiting = client.start("session.whoami")
    daemon.kill()
    with pytest.raises(roster.ConnectionLost, match="rosterd closed the connection"):
        waiting.result(10)
    with pytest.raises(roster.ConnectionLost):
        list(client.events(timeout=10))
    with pytest.raises(roster.ConnectionLost):
        client.session_whoami()
