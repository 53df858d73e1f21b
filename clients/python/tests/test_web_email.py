"""roster-web's email pages without a browser: the verify page's methods, "Forgot password?" (POST /forgot) and the
mailed link's /recover (POST /recover), against the real rosterd and gateway. The tests that need mail to arrive
need the daemon's side of email and are skipped, saying so, against a daemon without it; the rest run on any."""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import roster
from conftest import Daemon, Gateway
from mail_support import MailSystem
from roster.web.policy import Refuse, Relay, judge_frame
from test_web_gateway import browser, call, open_socket, own, register, run

CODE = "482913"


def recovery_code(daemon: Daemon, username: str, password: str = "secret1") -> str:
    """A recovery code of `username` (account.recovery_codes): /recover takes one as it takes a mailed code."""
    with roster.Client(daemon.socket_path, timeout=10) as client:
        client.auth_login(username=username, password=password)
        return client.account_recovery_codes(password=password)["codes"][0]


def test_the_email_pages_speak_every_language_and_log_in_links_to_forgot(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            for lang, forgot, recover in [("en", "Forgot password?", "Set a new password"),
                                          ("zh-Hans", "忘记密码？", "设置新密码"),
                                          ("vi", "Quên mật khẩu?", "Đặt mật khẩu mới"),
                                          ("ko", "비밀번호를 잊으셨나요?", "새 비밀번호 설정")]:
                login = await (await session.get(f"{gateway.url}/login?lang={lang}")).text()
                assert f'<a href="/forgot" id="forgot-link">{forgot}</a>' in login, lang
                page = await (await session.get(f"{gateway.url}/forgot?lang={lang}")).text()
                assert f"<h1>{forgot}</h1>" in page, lang
                page = await (await session.get(f"{gateway.url}/recover?lang={lang}")).text()
                assert f"<h1>{recover}</h1>" in page, lang
            # The verify page is the logged-in user's; the nav links only the four pages it had.
            response = await session.get(f"{gateway.url}/verify", allow_redirects=False)
            assert (response.status, response.headers["Location"]) == (302, "/login")
            page = await (await session.get(f"{gateway.url}/forgot")).text()
            assert re.findall(r'<li class="logged-\w+-only"(?: hidden)?><a href="(/\w+)"', page) == [
                "/register", "/login", "/account", "/contacts"]
    run(flow())


def test_the_recover_page_keeps_the_mailed_code_to_itself(daemon: Daemon, gateway: Gateway) -> None:
    """The link carries a code: the page sends no Referer anywhere, loads nothing from another site, is not cached,
    does not write the code into its HTML, and the gateway's log never holds the query."""
    async def flow() -> None:
        async with browser() as session:
            link = f"{gateway.url}/recover?user=alice1&code={CODE}"
            response = await session.get(link)
            assert response.status == 200
            assert response.headers["Referrer-Policy"] == "no-referrer"
            assert response.headers["Cache-Control"] == "no-store"
            policy = response.headers["Content-Security-Policy"]
            assert "default-src 'self'" in policy and "connect-src 'self'" in policy
            page = await response.text()
            assert CODE not in page and "alice1" not in page
            # Every resource the page names is the gateway's own.
            assert all(url.startswith("/") and not url.startswith("//")
                       for url in re.findall(r'(?:src|href)="([^"]*)"', page)), page
            # A refused request with the code in its query is not logged with it either.
            port = gateway.host.rsplit(":", 1)[1]
            refused = await session.get(link, headers={"Host": f"evil.example:{port}"})
            assert refused.status == 421
            posted = await session.post(f"{gateway.url}/recover?code={CODE}", data="not json", headers=own(gateway))
            assert posted.status == 400
        assert CODE not in gateway.log()
    run(flow())


def test_forgot_and_recover_are_refused_from_another_origin_or_without_json(daemon: Daemon,
                                                                             gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            for path, body in (("/forgot", {"username": "alice1"}),
                               ("/recover", {"username": "alice1", "code": CODE, "new_password": "better22"})):
                response = await session.post(f"{gateway.url}{path}", json=body,
                                              headers={"Origin": "http://evil.example"})
                assert response.status == 403, path
                response = await session.post(f"{gateway.url}{path}", data="username=alice1", headers={
                    **own(gateway), "Content-Type": "application/x-www-form-urlencoded"})
                assert (response.status, await response.json()) == (400, {"reason": "invalid_request"}), path
    run(flow())


def test_a_recovery_code_through_the_recover_page_sets_the_password_and_logs_in(daemon: Daemon,
                                                                              gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            await register(session, gateway, "heidi1")
        code = recovery_code(daemon, "heidi1")
        async with browser() as session:
            wrong = await session.post(f"{gateway.url}/recover", headers=own(gateway), json={
                "username": "heidi1", "code": "aaaa-bbbb-cccc-dddd", "new_password": "better22", "locale": "en"})
            assert wrong.status == 401
            answer = await wrong.json()
            assert answer["reason"] == "invalid_code" and answer["message"]
            assert "Set-Cookie" not in wrong.headers
            short = await session.post(f"{gateway.url}/recover", headers=own(gateway), json={
                "username": "heidi1", "code": code, "new_password": "ab"})
            assert short.status == 400
            assert (await short.json())["field"] == "new_password"
            response = await session.post(f"{gateway.url}/recover", headers=own(gateway), json={
                "username": "heidi1", "code": code, "new_password": "better22"})
            assert (response.status, await response.json()) == (200, {"redirect": "/contacts"})
            cookie = response.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert response.cookies["roster_session"].value not in await response.text()
            ws, ready = await open_socket(session, gateway)
            assert ready["user"] == "heidi1"
            await ws.close()
        with roster.Client(daemon.socket_path, timeout=10) as client:
            assert client.auth_login(username="heidi1", password="better22")["username"] == "heidi1"
    run(flow())


def test_the_verify_pages_methods_are_relayed_and_recovery_is_not() -> None:
    for method in ("account.email_verify_send", "account.email_verify"):
        assert isinstance(judge_frame(json.dumps({"id": 1, "method": method, "params": {}}), "no"), Relay), method
    for method in ("auth.recover_start", "auth.recover", "admin.mail.list"):
        refused = judge_frame(json.dumps({"id": 1, "method": method, "params": {}}), "no")
        assert isinstance(refused, Refuse) and refused.answer is not None, method
        assert json.loads(refused.answer)["error"]["data"] == {"reason": "forbidden", "method": method}


# From here on mail has to arrive: the daemon's side of email is needed (see conftest.require_mail_methods).

def test_registering_with_an_email_leads_to_the_verify_page_and_the_mailed_code_verifies(
        mail_gateway: Gateway, mail_system: MailSystem) -> None:
    async def flow() -> None:
        async with browser() as session:
            response = await session.post(f"{mail_gateway.url}/register", headers=own(mail_gateway), json={
                "username": "ivan01", "password": "secret1", "email": "ivan@example.com"})
            assert (response.status, await response.json()) == (200, {"redirect": "/verify"})
            assert (await session.get(f"{mail_gateway.url}/verify")).status == 200
            ws, _ = await open_socket(session, mail_gateway)
            shown = await call(ws, 1, "account.show")
            assert shown["result"]["email_verified"] is False
            # Registration mailed a code a moment ago: "send me a code" is limited, and says for how long.
            again = await call(ws, 2, "account.email_verify_send")
            assert again["error"]["data"]["reason"] == "rate_limited" and again["error"]["data"]["retry_after_ms"] > 0
            code = mail_system.next_to("ivan@example.com").code
            wrong = await call(ws, 3, "account.email_verify", code="000000" if code != "000000" else "111111")
            assert wrong["error"]["data"]["reason"] == "invalid_code"
            verified = await call(ws, 4, "account.email_verify", code=code)
            assert verified["result"] == {"email_verified": True}
            assert (await call(ws, 5, "account.show"))["result"]["email_verified"] is True
            await ws.close()
    run(flow())


def test_forgot_says_the_same_for_everyone_and_the_mailed_link_logs_in_with_a_new_password(
        mail_daemon: Daemon, mail_gateway: Gateway, mail_system: MailSystem) -> None:
    async def flow() -> None:
        async with browser() as session:
            await session.post(f"{mail_gateway.url}/register", headers=own(mail_gateway), json={
                "username": "judy01", "password": "secret1", "email": "judy@example.com"})
            ws, _ = await open_socket(session, mail_gateway)
            code = mail_system.next_to("judy@example.com").code
            assert "result" in await call(ws, 1, "account.email_verify", code=code)
            await ws.close()
            await session.post(f"{mail_gateway.url}/logout", headers=own(mail_gateway))
        async with browser() as session:
            answers = []
            for name in ("nobody9", "judy@example.com", "judy01"):
                response = await session.post(f"{mail_gateway.url}/forgot", headers=own(mail_gateway),
                                              json={"username": name})
                answers.append((response.status, await response.json(), "Set-Cookie" in response.headers))
            assert answers == [(200, {}, False)] * 3
            # Asked twice for judy01 (by email, then by name) within a minute: one mail, the limit is silent.
            link = mail_system.next_to("judy@example.com", containing="/recover?").link
            assert link.startswith(f"{mail_system.base_url}/recover?")
            query = parse_qs(urlsplit(link).query)
            assert query["user"] == ["judy01"] and len(query["code"][0]) == 6
            page = await session.get(link)
            assert page.status == 200 and page.headers["Referrer-Policy"] == "no-referrer"
            response = await session.post(f"{mail_gateway.url}/recover", headers=own(mail_gateway), json={
                "username": query["user"][0], "code": query["code"][0], "new_password": "better22"})
            assert (response.status, await response.json()) == (200, {"redirect": "/contacts"})
            ws, ready = await open_socket(session, mail_gateway)
            assert ready["user"] == "judy01"
            await ws.close()
            used = await session.post(f"{mail_gateway.url}/recover", headers=own(mail_gateway), json={
                "username": "judy01", "code": query["code"][0], "new_password": "better33"})
            assert (await used.json())["reason"] == "invalid_code"
        with roster.Client(mail_daemon.socket_path, timeout=10) as client:
            kinds = sorted(item["kind"] for item in client.admin_mail_list()["items"])
            assert kinds == ["password_changed", "recovery", "verification"]
        assert query["code"][0] not in mail_gateway.log()
    run(flow())


def test_an_account_without_an_email_is_told_so_on_the_verify_pages_socket(mail_gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            await register(session, mail_gateway, "kate01")
            ws, _ = await open_socket(session, mail_gateway)
            shown = await call(ws, 1, "account.show")
            assert shown["result"]["email"] is None and shown["result"]["email_verified"] is False
            answer = await call(ws, 2, "account.email_verify_send")
            assert answer["error"]["data"]["reason"] == "no_email" and answer["error"]["message"]
            await ws.close()
    run(flow())

