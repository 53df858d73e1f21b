"""App passwords and auth.dav_login (CONTRACT.md §14, protocol.md "App passwords") through the Python client against
the real rosterd: a secret shown once and listed without it, the contacts-only session and its token, auth.login
refusing an app password, an account with TOTP needing one, the shared failed-log-in limiter, the audit's method and
client, export, removal, the cap of 20 and the async client."""
from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest

import roster
from conftest import Daemon, connect, started_daemon
from passkey_support import account, enable_totp

CONFIG = "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=5\n"


def test_both_clients_have_the_four_methods_with_their_params() -> None:
    assert {name: roster.METHODS[name] for name in roster.METHODS if "app_password" in name or "dav" in name} == {
        "account.app_password_create": ("name",), "account.app_password_list": (),
        "account.app_password_remove": ("id",), "auth.dav_login": ("username", "password")}
    for client_class in (roster.Client, roster.AsyncClient):
        for name in ("account_app_password_create", "account_app_password_list", "account_app_password_remove",
                     "auth_dav_login"):
            assert callable(getattr(client_class, name)), (client_class, name)


@pytest.fixture
def dav_daemon() -> Iterator[Daemon]:
    with started_daemon(CONFIG) as started:
        yield started


def refused(reason: str, call: Any, *arguments: Any, **keywords: Any) -> roster.RosterError:
    with pytest.raises(roster.RosterError) as error:
        call(*arguments, **keywords)
    assert error.value.reason == reason, error.value
    return error.value


def audit(client: roster.Client, **query: Any) -> list[dict[str, Any]]:
    return [cast(dict[str, Any], entry) for entry in client.admin_audit(username="alice1", limit=200, **query)["items"]]


def dav_client(daemon: Daemon, user_agent: str = "DAVx5/4.4.2-ose") -> roster.Client:
    """A connection as roster-web's CardDAV side opens one: the client's User-Agent as the hello's client."""
    client = roster.Client(daemon.socket_path, timeout=10)
    client.session_hello(locale="en", client=user_agent)
    return client


def test_an_app_password_opens_only_the_contacts_and_its_token_keeps_that_scope(dav_daemon: Daemon) -> None:
    with connect(dav_daemon) as owner:
        account(owner, "alice1")
        made = owner.account_app_password_create(name="Thunderbird")
        assert re.fullmatch(r"[a-z2-7]{24}", made["password"]) and made["name"] == "Thunderbird"
        listed = owner.account_app_password_list()["items"]
        assert [(item["id"], item["name"], item["last_used_at"]) for item in listed] == [(made["id"], "Thunderbird", None)]
        assert "password" not in listed[0]
        with dav_client(dav_daemon) as dav:
            refused("wrong_password", dav.auth_login, username="alice1", password=made["password"])
            answer = dav.auth_dav_login(username="alice1", password=made["password"])
            assert answer["username"] == "alice1" and answer["token"].startswith("dav.")
            assert dav.next_event(5, lambda event: isinstance(event, roster.SessionEvent)) == roster.SessionEvent(user="alice1")
            dav.contacts_add(name="Ada Lovelace")
            assert dav.contacts_list()["total"] == 1
            for call in (dav.account_show, dav.account_app_password_list, dav.session_list, dav.session_whoami):
                refused("forbidden", call)
            refused("forbidden", dav.account_app_password_create, name="more")
            assert dav.rpc_describe()["methods"]
        with dav_client(dav_daemon) as resumed:
            assert resumed.session_resume(token=answer["token"]) == {"username": "alice1"}
            refused("forbidden", resumed.account_export)
            assert resumed.contacts_list()["total"] == 1
        with dav_client(dav_daemon) as stripped:
            refused("not_found", stripped.session_resume, token=answer["token"][len("dav."):])
        # The owner sees the use, the DAV client's session, and the log-in in the audit with its User-Agent.
        assert owner.account_app_password_list()["items"][0]["last_used_at"] is not None
        assert "DAVx5/4.4.2-ose" in [session["client"] for session in owner.session_list()["items"]]
        logins = [entry for entry in audit(owner, event="login") if entry["outcome"] == "succeeded"]
        assert [(entry["method"], entry["client"]) for entry in logins][:1] == [("app_password", "DAVx5/4.4.2-ose")]
        added = audit(owner, event="app_password_added")
        assert len(added) == 1 and added[0]["client"] == "pytest"
        exported = owner.account_export()
        assert [item["id"] for item in exported["app_passwords"]] == [made["id"]]
        assert made["password"] not in repr(exported)
        assert owner.account_app_password_remove(id=made["id"]) == {}
        refused("not_found", owner.account_app_password_remove, id=made["id"])
        assert len(audit(owner, event="app_password_removed")) == 1
        with dav_client(dav_daemon) as late:
            refused("wrong_password", late.auth_dav_login, username="alice1", password=made["password"])


def test_an_account_with_totp_needs_an_app_password_and_failures_share_the_limiter(dav_daemon: Daemon) -> None:
    with connect(dav_daemon) as owner:
        account(owner, "alice1")
        made = owner.account_app_password_create(name="phone")
        with dav_client(dav_daemon) as dav:
            # Without TOTP, the account's own password opens the contacts too (method password).
            assert dav.auth_dav_login(username="alice1", password="secret1")["token"].startswith("dav.")
        enable_totp(owner, at=time.time())
        with dav_client(dav_daemon) as dav:
            refused("invalid_credentials", dav.auth_dav_login, username="alice1", password="secret1")
            assert dav.auth_dav_login(username="alice1", password=made["password"])["username"] == "alice1"
        reasons = [entry["reason"] for entry in audit(owner, event="login") if entry["outcome"] == "failed"]
        assert reasons == ["app_password_required"]
        for _ in range(4):
            with dav_client(dav_daemon) as dav:
                refused("wrong_password", dav.auth_dav_login, username="alice1", password="not-it")
        with dav_client(dav_daemon) as dav:
            limited = refused("rate_limited", dav.auth_dav_login, username="alice1", password=made["password"])
            assert limited.data.get("retry_after_ms", 0) > 0
            refused("rate_limited", dav.auth_login, username="alice1", password="secret1")


def test_an_account_holds_twenty(dav_daemon: Daemon) -> None:
    with connect(dav_daemon) as owner:
        account(owner, "alice1")
        for number in range(20):
            owner.account_app_password_create(name=f"client {number}")
        error = refused("too_many_app_passwords", owner.account_app_password_create, name="one more")
        assert error.code == -32602 and error.message
        assert len(owner.account_app_password_list()["items"]) == 20
        refused("out_of_range", owner.account_app_password_create, name="  ")


def test_the_async_client_makes_one_and_logs_a_dav_client_in(dav_daemon: Daemon) -> None:
    async def run() -> None:
        async with await roster.AsyncClient.connect(dav_daemon.socket_path, timeout=10) as owner:
            await owner.users_register(username="sara01", password="secret1")
            await owner.auth_login(username="sara01", password="secret1")
            made = await owner.account_app_password_create(name="vdirsyncer")
        async with await roster.AsyncClient.connect(dav_daemon.socket_path, timeout=10) as dav:
            await dav.session_hello(client="vdirsyncer/0.19")
            answer = await dav.auth_dav_login(username="sara01", password=made["password"])
            assert answer["username"] == "sara01"
            assert (await dav.contacts_list())["total"] == 0
            with pytest.raises(roster.RosterError) as forbidden:
                await dav.account_show()
            assert forbidden.value.reason == "forbidden"
    asyncio.run(run())
