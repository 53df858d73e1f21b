"""roster-web's side of passkeys without a browser: the relay passes the passkey methods, a passkey log-in's token
never reaches the page (a one-time ticket does, which POST /passkey-login trades for the cookie), and the whole
ceremony through the gateway with the software authenticator playing the browser at http://localhost:PORT.
The pure parts and the gateway's refusals run against any rosterd; the ceremonies need the daemon's side of
passkeys and are skipped, saying so, without it."""
from __future__ import annotations

import json
import time
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import roster
from conftest import Daemon, Gateway
from passkey_support import enable_totp, oathtool
from roster.web import app as app_module
from roster.web.policy import LOGS_IN, RELAYED_METHODS, Refuse, Relay, answer_key, judge_frame, with_ticket
from roster.web.relay import LogIns
from roster.web.tickets import LoginTickets
from soft_authenticator import SoftAuthenticator
from test_web_gateway import browser, call, next_message, open_socket, own, register, run

PASSKEY_RELAYED = ("passkey.register_begin", "passkey.register_finish", "passkey.list", "passkey.remove",
                   "auth.passkey_begin", "auth.passkey_finish")


# --- the pure parts ------------------------------------------------------------------------------------------

def test_the_passkey_methods_are_relayed_and_only_the_log_in_is_watched() -> None:
    for method in PASSKEY_RELAYED:
        verdict = judge_frame(json.dumps({"id": 5, "method": method, "params": {}}), "no")
        assert isinstance(verdict, Relay), method
        assert verdict.logs_in == ("5" if method == "auth.passkey_finish" else None), method
    assert LOGS_IN == {"auth.passkey_finish"} and LOGS_IN <= RELAYED_METHODS
    # The ids 5 and "5" are two requests.
    named = judge_frame('{"id":"5","method":"auth.passkey_finish","params":{}}', "no")
    assert isinstance(named, Relay) and named.logs_in == '"5"' != answer_key(5)
    # A notification has no answer to watch.
    quiet = judge_frame('{"method":"auth.passkey_finish","params":{}}', "no")
    assert isinstance(quiet, Relay) and quiet.logs_in is None
    for method in ("auth.login", "session.resume", "account.recovery_codes", "account.totp_enroll"):
        assert isinstance(judge_frame(json.dumps({"id": 1, "method": method, "params": {}}), "no"), Refuse), method


def test_a_log_ins_token_becomes_a_ticket_good_once_from_its_address() -> None:
    now = [1000.0]
    tickets = LoginTickets(seconds=30, limit=3, clock=lambda: now[0])
    log_ins = LogIns(tickets, "192.0.2.1", {answer_key(7)}, "busy")
    answer = b'{"jsonrpc":"2.0","id":7,"result":{"username":"alice1","token":"SECRET-TOKEN"}}\n'
    frame = log_ins.answer_for_page(answer)
    assert frame is not None and "SECRET-TOKEN" not in frame
    shown = json.loads(frame)["result"]
    assert shown["username"] == "alice1" and set(shown) == {"username", "ticket"} and len(shown["ticket"]) >= 40
    assert log_ins.waiting == set()
    # The same answer again (its id no longer watched) gets no ticket, and still no token.
    again = json.loads(log_ins.answer_for_page(answer) or "")
    assert again["result"] == {"username": "alice1"}
    assert tickets.redeem(shown["ticket"], "198.51.100.9") is None  # another browser's address
    held = tickets.redeem(shown["ticket"], "192.0.2.1")
    assert held is not None and (held.token, held.username) == ("SECRET-TOKEN", "alice1")
    assert tickets.redeem(shown["ticket"], "192.0.2.1") is None  # once
    assert tickets.abandoned() == []
    # A refusal ends the watch and carries no ticket; an event with the same id is not an answer.
    log_ins.waiting.add(answer_key(8))
    event = log_ins.answer_for_page(b'{"jsonrpc":"2.0","method":"event","params":{"type":"session","user":"a"}}')
    assert event is not None and answer_key(8) in log_ins.waiting
    refused = json.loads(log_ins.answer_for_page(
        b'{"jsonrpc":"2.0","id":8,"error":{"code":1019,"message":"m","data":{"reason":"passkey_rejected"}}}') or "")
    assert "ticket" not in json.dumps(refused) and log_ins.waiting == set()


def test_tickets_expire_and_overflow_and_their_tokens_are_handed_back_to_be_revoked() -> None:
    now = [0.0]
    tickets = LoginTickets(seconds=30, limit=2, clock=lambda: now[0])
    first = tickets.issue("T1", "a", "")
    tickets.issue("T2", "b", "")
    third = tickets.issue("T3", "c", "")  # past the limit: T1's ticket goes
    assert tickets.redeem(first, "") is None and len(tickets) == 2
    assert tickets.abandoned() == ["T1"]
    now[0] = 31.0
    assert tickets.redeem(third, "") is None
    assert sorted(tickets.abandoned()) == ["T2", "T3"] and tickets.abandoned() == [] and len(tickets) == 0


def test_with_ticket_leaves_everything_but_the_token() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"username": "a", "token": "T"}}
    assert with_ticket(message, "K") == {"jsonrpc": "2.0", "id": 1, "result": {"username": "a", "ticket": "K"}}
    assert with_ticket({"id": 1, "error": {}}, "K") == {"id": 1, "error": {}}


# --- the gateway, against any rosterd ------------------------------------------------------------------------

def test_a_ticket_nobody_issued_logs_nobody_in_in_the_pages_language(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            for locale, words in (("en", "log in again"), ("ko", "다시 로그인하세요"), ("zh-Hans", "重新登录"),
                                  ("vi", "đăng nhập lại")):
                response = await session.post(f"{gateway.url}/passkey-login", headers=own(gateway),
                                              json={"ticket": "made-up", "locale": locale})
                assert response.status == 401
                answer = await response.json()
                assert answer["reason"] == "invalid_ticket" and words in answer["message"], answer
                assert "Set-Cookie" not in response.headers
            # Another site's page cannot even ask.
            response = await session.post(f"{gateway.url}/passkey-login", json={"ticket": "x"},
                                          headers={"Origin": "http://evil.example"})
            assert response.status == 403
            # Not JSON of strings: refused before any ticket is looked at.
            response = await session.post(f"{gateway.url}/passkey-login", data="ticket=x", headers=own(gateway))
            assert response.status == 400
    run(flow())


def test_the_passkey_methods_reach_the_daemon(daemon: Daemon, gateway: Gateway) -> None:
    """Relayed, not refused by the gateway: what answers is the daemon (method_not_found from one without
    passkeys, its own refusal from one with them)."""
    async def flow() -> None:
        async with browser() as session:
            ws, _ = await open_socket(session, gateway)
            for index, method in enumerate(PASSKEY_RELAYED):
                answer = await call(ws, index + 1, method)
                assert answer.get("error", {}).get("data", {}).get("reason") != "forbidden", answer
            # The tab goes on working after a log-in's refusal (its watch ended with the answer).
            assert (await call(ws, 50, "session.whoami"))["result"] == {"user": None}
            await ws.close()
    run(flow())


# --- the ceremonies through the gateway (the daemon's side of passkeys needed) --------------------------------

def localhost(gateway: Gateway) -> str:
    return f"http://localhost:{gateway.host.rsplit(':', 1)[1]}"


def as_localhost(gateway: Gateway) -> dict[str, str]:
    """The headers of a page opened as http://localhost:PORT, the origin the daemon takes passkeys from."""
    return {"Origin": localhost(gateway)}


async def tab(session: aiohttp.ClientSession, gateway: Gateway) -> tuple[aiohttp.ClientWebSocketResponse, Any]:
    ws = await session.ws_connect(f"{gateway.url}/ws?locale=en", headers=as_localhost(gateway))
    ready = await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
    return ws, ready["params"]


async def add_passkey_in_tab(ws: aiohttp.ClientWebSocketResponse, authenticator: SoftAuthenticator,
                             name: str | None = None) -> Any:
    begun = await call(ws, 1, "passkey.register_begin", password="secret1")
    credential = authenticator.create(begun["result"]["options"])
    params: dict[str, Any] = {"credential": credential} | ({"name": name} if name else {})
    return await call(ws, 2, "passkey.register_finish", **params)


def test_a_passkey_log_in_through_the_gateway_ends_in_the_cookie_and_no_token_reaches_the_page(
        passkey_web_daemon: tuple[Daemon, int], passkey_gateway: Gateway) -> None:
    gateway = passkey_gateway
    authenticator = SoftAuthenticator(origin=localhost(gateway))

    async def flow() -> None:
        async with browser() as owner:
            await register(owner, gateway, "alice1")
            ws, ready = await tab(owner, gateway)
            assert ready["user"] == "alice1"
            added = await add_passkey_in_tab(ws, authenticator, name="Laptop")
            assert added["result"]["name"] == "Laptop", added
            listed = await call(ws, 3, "passkey.list")
            assert [item["name"] for item in listed["result"]["items"]] == ["Laptop"]
            await ws.close()
        async with browser() as visitor:
            ws, ready = await tab(visitor, gateway)
            assert ready["user"] is None
            begun = await call(ws, 1, "auth.passkey_begin")
            assert begun["result"]["options"]["allowCredentials"] == []
            await ws.send_str(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "auth.passkey_finish",
                                          "params": {"credential": authenticator.get(begun["result"]["options"])}}))
            frames: list[Any] = []

            def keep(message: Any) -> bool:
                frames.append(message)
                return bool(message.get("id") == 2)
            answer = await next_message(ws, keep)
            assert set(answer["result"]) == {"username", "ticket"} and answer["result"]["username"] == "alice1"
            # The tab's own connection is logged in, and says so, without a token anywhere.
            assert any(frame.get("params", {}).get("type") == "session" for frame in frames) or \
                (await next_message(ws, lambda m: m.get("params", {}).get("type") == "session"))
            response = await visitor.post(f"{gateway.url}/passkey-login", headers=as_localhost(gateway),
                                          json={"ticket": answer["result"]["ticket"], "locale": "en"})
            assert response.status == 200 and (await response.json()) == {"redirect": "/contacts"}
            cookie = response.headers["Set-Cookie"]
            assert cookie.startswith("roster_session=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            token = response.cookies["roster_session"].value
            assert all(token not in json.dumps(frame) for frame in frames)
            # The ticket is spent.
            again = await visitor.post(f"{gateway.url}/passkey-login", headers=as_localhost(gateway),
                                       json={"ticket": answer["result"]["ticket"]})
            assert again.status == 401
            await ws.close()
            fresh, ready = await tab(visitor, gateway)
            assert ready["user"] == "alice1"
            await fresh.close()
    run(flow())


def test_a_passkey_rejected_is_relayed_with_its_why_in_the_pages_language(
        passkey_web_daemon: tuple[Daemon, int], passkey_gateway: Gateway) -> None:
    gateway = passkey_gateway
    authenticator = SoftAuthenticator(origin=localhost(gateway))

    async def flow() -> None:
        async with browser() as owner:
            await register(owner, gateway, "bobby1")
            ws, _ = await tab(owner, gateway)
            await add_passkey_in_tab(ws, authenticator)
            await ws.close()
        async with browser() as visitor:
            ws = await visitor.ws_connect(f"{gateway.url}/ws?locale=ko", headers=as_localhost(gateway))
            await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
            begun = await call(ws, 1, "auth.passkey_begin")
            answer = await call(ws, 2, "auth.passkey_finish",
                                credential=authenticator.get(begun["result"]["options"], tamper_signature=True))
            error = answer["error"]
            assert (error["code"], error["data"]["reason"], error["data"]["why"]) == (1019, "passkey_rejected",
                                                                                      "signature")
            assert any("\uac00" <= character <= "\ud7a3" for character in error["message"]), error  # in Korean
            assert "ticket" not in json.dumps(answer)
            await ws.close()
    run(flow())


def test_a_passkey_without_user_verification_asks_for_the_code_through_the_gateway(
        passkey_web_daemon: tuple[Daemon, int], passkey_gateway: Gateway) -> None:
    daemon, _ = passkey_web_daemon
    gateway = passkey_gateway
    authenticator = SoftAuthenticator(origin=localhost(gateway), user_verifying=False)

    tokens: list[str] = []

    async def flow() -> None:
        async with browser() as owner:
            await register(owner, gateway, "carol1")
            ws, _ = await tab(owner, gateway)
            assert "result" in await add_passkey_in_tab(ws, authenticator)
            await ws.close()
        with roster.Client(daemon.socket_path, timeout=10) as client:
            client.auth_login(username="carol1", password="secret1")
            secret = enable_totp(client, at=time.time())
        async with browser() as visitor:
            ws, _ = await tab(visitor, gateway)
            begun = await call(ws, 1, "auth.passkey_begin", username="carol1")
            answer = await call(ws, 2, "auth.passkey_finish", credential=authenticator.get(begun["result"]["options"]))
            assert answer["error"]["data"]["reason"] == "code_required", answer
            answer = await call(ws, 3, "auth.passkey_finish", code=oathtool(secret, time.time() + 30))
            assert answer["result"]["username"] == "carol1" and "token" not in answer["result"]
            response = await visitor.post(f"{gateway.url}/passkey-login", headers=as_localhost(gateway),
                                          json={"ticket": answer["result"]["ticket"]})
            assert response.status == 200
            tokens.append(response.cookies["roster_session"].value)
            await ws.close()
    run(flow())
    with roster.Client(daemon.socket_path, timeout=10) as client:
        assert client.session_resume(token=tokens[0]) == {"username": "carol1"}



def test_a_ticket_never_traded_has_its_token_revoked(passkey_web_daemon: tuple[Daemon, int],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A gateway in this process, with a ticket good for half a second and a sweep every fifth: the page that
    never posts its ticket leaves no session behind in rosterd."""
    daemon, port = passkey_web_daemon
    monkeypatch.setattr(app_module, "SWEEP_SECONDS", 0.2)
    origin = f"http://localhost:{port}"
    authenticator = SoftAuthenticator(origin=origin)
    with roster.Client(daemon.socket_path, timeout=10) as owner:
        owner.users_register(username="dora01", password="secret1")
        owner.auth_login(username="dora01", password="secret1")
        options = owner.passkey_register_begin(password="secret1")["options"]
        owner.passkey_register_finish(credential=authenticator.create(options))

        async def flow() -> None:
            gateway = app_module.Gateway(app_module.Settings(socket_path=daemon.socket_path))
            gateway.tickets = LoginTickets(seconds=0.5)
            runner = web.AppRunner(gateway.application())
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", port)
            await site.start()
            gateway.listening_on("127.0.0.1", port)
            try:
                async with browser() as visitor:
                    ws = await visitor.ws_connect(f"http://127.0.0.1:{port}/ws?locale=en", headers={"Origin": origin})
                    await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
                    begun = await call(ws, 1, "auth.passkey_begin")
                    answer = await call(ws, 2, "auth.passkey_finish",
                                        credential=authenticator.get(begun["result"]["options"]))
                    assert "ticket" in answer["result"], answer
                    assert len(owner.session_list()["items"]) == 2
                    # The tab's own connection is logged out when its token goes.
                    event = await next_message(ws, lambda m: m.get("params", {}).get("type") == "session"
                                               and m["params"]["user"] is None, timeout=10)
                    assert event["params"]["user"] is None
                    response = await visitor.post(f"http://127.0.0.1:{port}/passkey-login", headers={"Origin": origin},
                                                  json={"ticket": answer["result"]["ticket"]})
                    assert response.status == 401
                    await ws.close()
            finally:
                await runner.cleanup()
        run(flow())
        assert [item["current"] for item in owner.session_list()["items"]] == [True]
