"""roster-web's gateway against the real rosterd, without a browser: what it serves, relays and refuses."""
from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import time
from collections.abc import Coroutine
from typing import Any

import aiohttp
import pytest

from conftest import Daemon, Gateway
from roster.web.guard import Guard
from roster.web.locale import from_accept_language, map_tag
from roster.web.policy import Refuse, Relay, judge_frame, without_tokens


def run(test: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(test, 30))


def browser(token: str | None = None) -> aiohttp.ClientSession:
    """A client that keeps cookies of 127.0.0.1 (aiohttp's default jar refuses cookies of IP addresses)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True),
                                 cookies=None if token is None else {"roster_session": token})


def own(gateway: Gateway) -> dict[str, str]:
    return {"Origin": gateway.url}


async def register(session: aiohttp.ClientSession, gateway: Gateway, username: str,
                   password: str = "secret1") -> aiohttp.ClientResponse:
    response = await session.post(f"{gateway.url}/register", json={"username": username, "password": password},
                                  headers=own(gateway))
    assert response.status == 200, await response.text()
    return response


async def open_socket(session: aiohttp.ClientSession, gateway: Gateway) -> tuple[aiohttp.ClientWebSocketResponse, Any]:
    """A WebSocket with the session's cookies, and the gateway's `ready` event."""
    ws = await session.ws_connect(f"{gateway.url}/ws?locale=en", headers=own(gateway))
    ready = await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
    return ws, ready["params"]


async def next_message(ws: aiohttp.ClientWebSocketResponse, wanted: Any, timeout: float = 10) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            message = await ws.receive()
            assert message.type == aiohttp.WSMsgType.TEXT, message
            decoded = json.loads(message.data)
            if wanted(decoded):
                return decoded


async def call(ws: aiohttp.ClientWebSocketResponse, request_id: int, method: str, **params: Any) -> Any:
    await ws.send_str(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
    return await next_message(ws, lambda m: m.get("id") == request_id)


def test_accept_language_maps_as_rosterctl_maps_lang() -> None:
    assert [map_tag(tag) for tag in ("zh-CN", "zh-Hans-CN", "zh-TW", "zh-Hant", "en-GB", "vi", "ko_KR.UTF-8", "fr")] \
        == ["zh-Hans", "zh-Hans", None, None, "en", "vi", "ko", None]
    assert from_accept_language("fr-FR,ko;q=0.8,vi;q=0.9") == "vi"
    assert from_accept_language("zh-TW,zh;q=0.9") == "zh-Hans"
    assert from_accept_language("de, fr;q=0.5") == "en"
    assert from_accept_language(None) == "en"
    assert from_accept_language("ko;q=0, vi;q=0.1") == "vi"


def test_the_guard_knows_the_gateways_own_names_and_origins() -> None:
    guard = Guard.listening("127.0.0.1", 8080, tls=False, extra_hosts=("https://roster.example.org", "intra:9000"))
    for host in ("127.0.0.1:8080", "LOCALHOST:8080", "roster.example.org", "roster.example.org:443", "intra:9000"):
        assert guard.host_allowed(host), host
    strangers: list[str | None] = ["127.0.0.1:8081", "127.0.0.1", "evil.example:8080", "roster.example.org:8080", "",
                                   None]
    for stranger in strangers:
        assert not guard.host_allowed(stranger), stranger
    for origin in ("http://127.0.0.1:8080", "http://localhost:8080", "https://roster.example.org", "http://intra:9000"):
        assert guard.origin_allowed(origin), origin
    foreign: list[str | None] = ["https://127.0.0.1:8080", "http://roster.example.org",
                                 "http://127.0.0.1:8080.evil.example", "null", "http://evil.example", None]
    for stranger in foreign:
        assert not guard.origin_allowed(stranger), stranger
    tls = Guard.listening("::1", 443, tls=True)
    assert tls.hosts == {"[::1]:443", "[::1]", "localhost:443", "localhost"}
    assert tls.origins == {"https://[::1]:443", "https://[::1]", "https://localhost:443", "https://localhost"}


def test_the_cookie_is_secure_behind_a_tls_proxy(daemon: Daemon) -> None:
    gateway = Gateway(daemon, "--host", "https://roster.example.org")
    try:
        async def flow() -> None:
            proxied = {"Host": "roster.example.org", "Origin": "https://roster.example.org"}
            async with browser() as session:
                response = await session.post(f"{gateway.url}/register", headers=proxied,
                                              json={"username": "alice1", "password": "secret1"})
                assert response.status == 200, await response.text()
                cookie = response.headers["Set-Cookie"]
                assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        run(flow())
    finally:
        gateway.stop()


def test_pages_speak_the_browsers_language(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            for header, lang, word in [("ko-KR,ko;q=0.9", "ko", "회원 가입"), ("zh-CN", "zh-Hans", "注册"),
                                       ("vi-VN", "vi", "Đăng ký"), ("fr-FR", "en", "Register")]:
                response = await session.get(f"{gateway.url}/register", headers={"Accept-Language": header})
                text = await response.text()
                assert response.status == 200
                assert f'<html lang="{lang}">' in text and f"<h1>{word}</h1>" in text
            # Pages that need a log-in send a browser without a cookie to the log-in page.
            response = await session.get(f"{gateway.url}/contacts", allow_redirects=False)
            assert (response.status, response.headers["Location"]) == (302, "/login")
    run(flow())


def test_a_wrong_host_is_refused_for_pages_posts_and_websockets(daemon: Daemon, gateway: Gateway) -> None:
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 names its own Host."""
    async def flow() -> None:
        port = gateway.host.rsplit(":", 1)[1]
        rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        async with browser() as session:
            assert (await session.get(f"{gateway.url}/register", headers=rebound)).status == 421
            assert (await session.post(f"{gateway.url}/login", json={}, headers=rebound)).status == 421
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(f"{gateway.url}/ws", headers=rebound)
            assert refused.value.status == 421
            # localhost is the gateway's own name too.
            alias = {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
            assert (await session.get(f"{gateway.url}/register", headers=alias)).status == 200
    run(flow())


def test_another_origin_is_refused_for_websockets_and_posts(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            origins: list[dict[str, str]] = [{"Origin": "http://evil.example"}, {"Origin": "null"}, {},
                                             {"Origin": gateway.url.replace("http://", "https://")}]
            for origin in origins:
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(f"{gateway.url}/ws", headers=origin)
                assert refused.value.status == 403
                response = await session.post(f"{gateway.url}/register", headers=origin,
                                              json={"username": "mallory1", "password": "secret1"})
                assert response.status == 403
            # None of those POSTs registered anyone.
            ws, _ = await open_socket(session, gateway)
            answer = await call(ws, 1, "users.check_username", username="mallory1")
            assert answer["result"]["code"] == "available"
    run(flow())


def test_registration_sets_the_cookie_the_websocket_resumes_and_no_token_reaches_the_page(
        daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            response = await register(session, gateway, "alice1")
            cookie = response.headers["Set-Cookie"]
            assert cookie.startswith("roster_session=")
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
            token = response.cookies["roster_session"].value
            assert token not in await response.text()
            ws, ready = await open_socket(session, gateway)
            assert ready["user"] == "alice1"
            frames = []
            added = await call(ws, 1, "contacts.add", name="张三", phone="138 0013 8000")
            frames.append(added)
            assert added["result"]["contact"]["name"] == "张三"
            found = await call(ws, 2, "contacts.search", query="zs")
            assert [item["name"] for item in found["result"]["items"]] == ["张三"]
            sessions = await call(ws, 3, "session.list")
            assert [item["client"] for item in sessions["result"]["items"]] == ["roster-web"]
            frames += [found, sessions]
            assert all(token not in json.dumps(frame) for frame in frames)
            await ws.close()
    run(flow())


def test_only_the_pages_methods_are_relayed(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            await register(session, gateway, "alice1")
            ws, _ = await open_socket(session, gateway)
            refused: list[tuple[str, dict[str, Any]]] = [("admin.stats", {}), ("admin.users.list", {}), ("auth.login", {"username": "alice1",
                       "password": "secret1"}), ("session.resume", {"token": "x"}), ("session.logout", {}),
                       ("users.register", {"username": "bobby1", "password": "secret1"}),
                       ("form.submit", {"form": "register"}), ("form.submit", {"form": "login"}),
                       ("account.recovery_codes", {"password": "secret1"}), ("session.hello", {"locale": "ko"}),
                       ("session.hello", {"locale": "en", "remote": "198.51.100.66"}), ("rpc.describe", {})]
            for index, (method, params) in enumerate(refused):
                answer = await call(ws, 100 + index, method, **params)
                assert answer["error"]["data"] == {"reason": "forbidden", "method": method}, answer
            # One frame is one request: JSON may hold newlines between tokens, and the line after one would be a
            # request of its own to the daemon if the frame were passed on as it came.
            smuggled = '{"id":7,"method":"session.whoami","params":{"x":\n{"id":8,"method":"admin.stats"}\n}}'
            await ws.send_str(smuggled)
            answer = await next_message(ws, lambda m: m.get("id") in (7, 8))
            assert answer["id"] == 7 and answer["error"]["data"]["reason"] == "unknown_param"
            assert (await call(ws, 9, "session.whoami"))["result"]["user"]["username"] == "alice1"
            # A key twice: the daemon refuses it, and the gateway judged the one it passes on.
            await ws.send_str('{"id":10,"method":"session.whoami","method":"admin.stats"}')
            answer = await next_message(ws, lambda m: m.get("id") == 10)
            assert answer["error"]["data"]["method"] == "admin.stats"
    run(flow())


def test_policy_strips_tokens_everywhere_and_rewrites_what_it_relays() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"result":{"username":"a","token":"T","nested":[{"token":"U","x":1}]}}\n'
    assert json.loads(without_tokens(line) or "") == {"jsonrpc": "2.0", "id": 1,
                                                       "result": {"username": "a", "nested": [{"x": 1}]}}
    relayed = judge_frame('{"id":1,\n"method":"contacts.list"}', "no")
    assert isinstance(relayed, Relay) and relayed.line.count(b"\n") == 1
    assert judge_frame('{"method":"admin.stats"}', "no") == Refuse(None)
    assert isinstance(judge_frame("[1]", "no"), Refuse)


def test_log_out_revokes_the_token_and_deletes_the_cookie(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            token = (await register(session, gateway, "alice1")).cookies["roster_session"].value
            open_tab, _ = await open_socket(session, gateway)
            response = await session.post(f"{gateway.url}/logout", headers=own(gateway))
            assert response.status == 200
            deleted = response.headers["Set-Cookie"]
            assert deleted.startswith("roster_session=;") or deleted.startswith('roster_session="";')
            assert "Max-Age=0" in deleted
            assert "roster_session" not in {cookie.key for cookie in session.cookie_jar}
            # The tab that was open is logged out by the daemon itself.
            event = await next_message(open_tab, lambda m: m.get("params", {}).get("type") == "session")
            assert event["params"]["user"] is None
        async with browser(token) as replay:
            ws, ready = await open_socket(replay, gateway)
            assert (ready["user"], ready["resume"]) == (None, "not_found")
            answer = await call(ws, 1, "contacts.list")
            assert answer["error"]["data"]["reason"] == "unauthenticated"
    run(flow())


def test_a_frame_over_64_kib_closes_the_socket(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            ws, _ = await open_socket(session, gateway)
            fits = json.dumps({"id": 1, "method": "users.check_username", "params": {"username": "a" * 65000}})
            assert len(fits) <= 65536
            answer = await call(ws, 1, "users.check_username", username="a" * 65000)
            assert answer["result"]["code"] == "too_long"
            await ws.send_str(json.dumps({"id": 2, "method": "users.check_username",
                                          "params": {"username": "a" * 65536}}))
            message = await ws.receive()
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
            assert ws.close_code == 1009
    run(flow())


def test_a_session_holds_at_most_eight_sockets(daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            await register(session, gateway, "alice1")
            tabs = [(await open_socket(session, gateway))[0] for _ in range(8)]
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(f"{gateway.url}/ws", headers=own(gateway))
            assert refused.value.status == 429
            # Anyone else is still served, and a closed tab frees its place.
            async with browser() as stranger:
                _, ready = await open_socket(stranger, gateway)
                assert ready["user"] is None
            await tabs.pop().close()
            for _ in range(50):
                try:
                    tabs.append((await open_socket(session, gateway))[0])
                    break
                except aiohttp.WSServerHandshakeError:
                    await asyncio.sleep(0.02)
            assert len(tabs) == 8
            for tab in tabs:
                await tab.close()
    run(flow())


def masked_frame(text: str) -> bytes:
    payload = text.encode()
    mask = os.urandom(4)
    header = bytes([0x81])
    if len(payload) < 126:
        header += bytes([0x80 | len(payload)])
    else:
        header += bytes([0x80 | 126]) + struct.pack("!H", len(payload))
    return header + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))


def test_a_browser_that_stops_reading_is_closed(daemon: Daemon) -> None:
    """Its frames pile up in a bounded queue; past the bound the gateway closes it (1008) and drops the
    connection, while other tabs are served."""
    gateway = Gateway(daemon, "--max-queued-bytes", "65536")
    try:
        async def prepare() -> str:
            async with browser() as session:
                token = (await register(session, gateway, "alice1")).cookies["roster_session"].value
                ws, _ = await open_socket(session, gateway)
                for index in range(30):
                    await call(ws, index, "contacts.add", name=f"Contact {index}", note="n" * 3900)
                await ws.close()
                return token
        token = asyncio.run(prepare())
        host, port = gateway.host.rsplit(":", 1)
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect((host, int(port)))
        key = base64.b64encode(os.urandom(16)).decode()
        stalled.sendall((f"GET /ws HTTP/1.1\r\nHost: {gateway.host}\r\nOrigin: {gateway.url}\r\n"
                         f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                         f"Sec-WebSocket-Version: 13\r\nCookie: roster_session={token}\r\n\r\n").encode())
        assert stalled.recv(12) == b"HTTP/1.1 101"
        # 150 pages of 30 contacts of 4 KB each: about 18 MB, never read.
        stalled.sendall(b"".join(masked_frame(json.dumps({"id": index, "method": "contacts.list",
                                                          "params": {"limit": 30}})) for index in range(150)))
        deadline = time.monotonic() + 20
        while "stopped reading (1008)" not in gateway.log() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "stopped reading (1008)" in gateway.log()
        # The connection is gone: reading what was buffered ends in EOF or a reset, not in a wait.
        stalled.settimeout(5)
        try:
            while stalled.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
        stalled.close()

        async def still_served() -> None:
            async with browser(token) as session:
                ws, ready = await open_socket(session, gateway)
                assert ready["user"] == "alice1"
                await ws.close()
        run(still_served())
    finally:
        gateway.stop()
