"""roster.AsyncClient against the real rosterd: the same flows, with concurrent awaits on one connection."""
from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

import roster
from conftest import Daemon


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


async def connect(daemon: Daemon) -> roster.AsyncClient:
    client = await roster.AsyncClient.connect(daemon.socket_path, timeout=10)
    await client.session_hello(locale="en", timing={"debounce_ms": 0, "throttle_ms": 0})
    return client


def test_register_through_the_form_then_resume_elsewhere(daemon: Daemon) -> None:
    async def flow() -> None:
        async with await connect(daemon) as client:
            async with client.form("register") as form:
                await form.input("username", "alice1")
                await form.wait(lambda f: f.fields["password"].enabled)
                await form.input("password", "secret1")
                await form.wait(lambda f: f.fields["confirm"].enabled)
                await form.input("confirm", "secret1")
                await form.wait(lambda f: f.submittable)
                token = (await form.submit())["token"]
            events = [event async for event in client.events(timeout=0)]
            assert [e for e in events if isinstance(e, (roster.SubmitEvent, roster.SessionEvent))] == [
                roster.SubmitEvent(form="register", state="running", code="running", message="Signing up…"),
                roster.SessionEvent(user="alice1"),
                roster.SubmitEvent(form="register", state="succeeded", code="succeeded", message="Signed up successfully")]
            async with await connect(daemon) as other:
                assert await other.session_resume(token=token) == {"username": "alice1"}
                assert (await other.session_whoami())["user"] == {"username": "alice1"}
    run(flow)


def test_log_in_and_search_contacts(daemon: Daemon) -> None:
    async def flow() -> None:
        async with await connect(daemon) as client:
            await client.users_register(username="bob123", password="secret1")
            assert (await client.auth_login(username="bob123", password="secret1"))["username"] == "bob123"
            await asyncio.gather(*(client.contacts_add(name=name) for name in ("张三", "李四", "Zoe Smith")))
            found = await client.contacts_search(query="zs")
            assert sorted(item["name"] for item in found["items"]) == ["Zoe Smith", "张三"]
            exported = await client.contacts_export(format="vcard")
            await client.session_logout()
            with pytest.raises(roster.RosterError) as refused:
                await client.contacts_import(format="vcard", data=exported["data"])
            assert refused.value.reason == "unauthenticated"
    run(flow)


def test_the_contacts_form_streams_results_events(daemon: Daemon) -> None:
    async def flow() -> None:
        async with await connect(daemon) as client:
            await client.users_register(username="carol1", password="secret1")
            await client.auth_login(username="carol1", password="secret1")
            await client.contacts_add(name="张三")
            await client.contacts_add(name="Alice Smith")
            form = await client.form("contacts")
            await form.input("query", "zs")
            results: list[roster.ResultsEvent] = []
            while not results or results[-1].query != "zs":
                event = await client.next_event(5, lambda e: isinstance(e, roster.ResultsEvent))
                assert isinstance(event, roster.ResultsEvent)
                results.append(event)
            assert [item["name"] for item in results[-1].items] == ["张三"] and results[-1].total == 1
    run(flow)


def test_concurrent_awaits_are_matched_by_id_when_answers_come_out_of_order(daemon: Daemon) -> None:
    async def flow() -> None:
        async with await connect(daemon) as client:
            await client.users_register(username="dave12", password="secret1")
            finished: list[str] = []

            async def timed(name: str, call: Awaitable[Any]) -> Any:
                answer = await call
                finished.append(name)
                return answer

            login, check = await asyncio.gather(
                timed("auth.login", client.auth_login(username="dave12", password="secret1")),
                timed("users.check_username", client.users_check_username(username="dave12")))
            assert login["username"] == "dave12" and check["code"] == "taken"
            assert finished == ["users.check_username", "auth.login"]
    run(flow)


def test_errors_raise_roster_error(daemon: Daemon) -> None:
    async def flow() -> None:
        async with await connect(daemon) as client:
            with pytest.raises(roster.RosterError) as unknown:
                await client.call("no.such")
            assert (unknown.value.reason, unknown.value.code, unknown.value.data["method"]) == (
                "method_not_found", -32601, "no.such")
            with pytest.raises(roster.RosterError) as unknown_param:
                await client.call("session.whoami", {"colour": "red"})
            assert (unknown_param.value.reason, unknown_param.value.data["param"]) == ("unknown_param", "colour")
            form = await client.form("register")
            await form.input("username", "abc")
            assert (await form.verdict("username")).code == "too_short"
            with pytest.raises(roster.RosterError) as disabled:
                await form.input("password", "secret1")
            assert (disabled.value.reason, disabled.value.code) == ("field_disabled", 1001)
            with pytest.raises(roster.RosterError) as wrong:
                await client.auth_login(username="nobody1", password="secret1")
            assert wrong.value.reason == "not_found" and wrong.value.message
    run(flow)


def test_connection_loss_raises_connection_lost(daemon: Daemon) -> None:
    async def flow() -> None:
        client = await connect(daemon)
        daemon.process.send_signal(signal.SIGSTOP)
        waiting = asyncio.ensure_future(client.session_whoami())
        await asyncio.sleep(0)  # let the request be written before the daemon dies
        daemon.kill()
        with pytest.raises(roster.ConnectionLost):
            await waiting
        with pytest.raises(roster.ConnectionLost):
            [event async for event in client.events(timeout=10)]
        with pytest.raises(roster.ConnectionLost):
            await client.session_whoami()
        await client.close()
    run(flow)
