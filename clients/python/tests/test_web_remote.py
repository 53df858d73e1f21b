"""roster-web tells rosterd which browser each connection speaks for (`session.hello {remote}`): the address it
picks, behind trusted proxies or not, and what rosterd then counts and audits by it."""
from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import roster
from conftest import Daemon, Gateway, started_daemon, started_gateway
from roster.web.__main__ import arguments
from roster.web.forwarded import TrustedProxies, browser_address
from roster.web.policy import Refuse, judge_frame
from roster.web.relay import hello_params
from test_web_gateway import browser, call, next_message, open_socket, own, run

# Two browsers behind one proxy, and an address a page might try to claim for itself.
BROWSER_A = "203.0.113.5"
BROWSER_B = "2001:db8::b"
CLAIMED = "198.51.100.66"
# A burst of 1: the gateway's uid, or one browser address, may fail 10 log-ins a window. Cheap hashes keep it fast.
LOW_LIMIT = "[Login]\nRateLimitBurst=1\n[Hashing]\nMemoryKiB=8\nIterations=1\n"

PROXIES = TrustedProxies.parse(["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"])


@pytest.mark.parametrize(("peer", "forwarded_for", "expected"), [
    # Without a header, or from a peer that is no trusted proxy, the peer is the browser.
    ("127.0.0.1", [], "127.0.0.1"),
    ("192.0.2.9", ["203.0.113.5"], "192.0.2.9"),
    ("192.0.2.9", ["garbage"], "192.0.2.9"),
    # From a trusted proxy: the rightmost entry that is no trusted proxy, whatever the browser wrote left of it.
    ("127.0.0.1", ["203.0.113.5"], "203.0.113.5"),
    ("127.0.0.1", ["198.51.100.66, 203.0.113.5"], "203.0.113.5"),
    ("127.0.0.1", ["198.51.100.66, 203.0.113.5, 10.1.2.3"], "203.0.113.5"),
    ("127.0.0.1", ["198.51.100.66", "203.0.113.5"], "203.0.113.5"),
    ("127.0.0.1", ["not an address, 203.0.113.5"], "203.0.113.5"),
    ("10.20.30.40", ["203.0.113.5"], "203.0.113.5"),
    # Canonical forms, as rosterd writes them back: IPv6 lower case, IPv4-mapped as IPv4, ports and brackets gone.
    ("::1", ["2001:DB8:0:0:0:0:0:B"], "2001:db8::b"),
    ("::ffff:127.0.0.1", ["::ffff:203.0.113.5"], "203.0.113.5"),
    ("127.0.0.1", ["203.0.113.5:51234"], "203.0.113.5"),
    ("127.0.0.1", ["[2001:db8::b]:443"], "2001:db8::b"),
    ("127.0.0.1", ["[2001:db8::b]"], "2001:db8::b"),
    ("fe80::1%eth0", [], "fe80::1"),
    # Garbage where the walk reaches it, or nothing but trusted proxies: the peer itself, never an exception.
    ("127.0.0.1", ["203.0.113.5, garbage"], "127.0.0.1"),
    ("127.0.0.1", ["unknown"], "127.0.0.1"),
    ("127.0.0.1", [""], "127.0.0.1"),
    ("127.0.0.1", [",,,"], "127.0.0.1"),
    ("127.0.0.1", ["01.2.3.4"], "127.0.0.1"),
    ("127.0.0.1", ["256.1.1.1"], "127.0.0.1"),
    ("127.0.0.1", ["2001:db8::b:443"], "2001:db8::b:443"),
    ("127.0.0.1", ["2001:db8::b%eth0"], "127.0.0.1"),
    ("127.0.0.1", ["[2001:db8::b"], "127.0.0.1"),
    ("127.0.0.1", ["[2001:db8::b]:http"], "127.0.0.1"),
    ("127.0.0.1", ["203.0.113.5:99999"], "127.0.0.1"),
    ("127.0.0.1", ["for=203.0.113.5"], "127.0.0.1"),
    ("127.0.0.1", ["\udcff\x00" * 1000], "127.0.0.1"),
    ("127.0.0.1", ["10.0.0.1, 127.0.0.1"], "127.0.0.1"),
    ("::1", ["fd00::1"], "::1"),
    # A peer that is no IP address (a Unix socket) has no remote to say.
    (None, ["203.0.113.5"], None),
    ("", [], None),
])
def test_the_browsers_address_is_the_peer_or_behind_a_trusted_proxy_the_rightmost_untrusted_entry(
        peer: str | None, forwarded_for: list[str], expected: str | None) -> None:
    assert browser_address(peer, forwarded_for, PROXIES) == expected


def test_without_a_trusted_proxy_x_forwarded_for_is_ignored() -> None:
    for peer in ("127.0.0.1", "::1", "10.0.0.1"):
        assert browser_address(peer, ["203.0.113.5"], TrustedProxies()) == peer


def test_trusted_proxies_are_addresses_or_cidr_blocks_of_either_family() -> None:
    proxies = TrustedProxies.parse(["192.0.2.7", "10.1.2.3/8", "2001:db8::/32"])
    assert [str(network) for network in proxies.networks] == ["192.0.2.7/32", "10.0.0.0/8", "2001:db8::/32"]
    for option in (["--trusted-proxy", "localhost"], ["--trusted-proxy", "10.0.0.0/33"], ["--trusted-proxy", ""]):
        with pytest.raises(SystemExit) as refused:
            arguments(option)
        assert refused.value.code == 2
    options = arguments(["--trusted-proxy", "127.0.0.1", "--trusted-proxy", "fd00::/8"])
    assert [str(network) for network in options.trusted_proxy] == ["127.0.0.1/32", "fd00::/8"]
    assert arguments([]).trusted_proxy == []


def test_the_help_says_what_a_trusted_proxy_changes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        arguments(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--trusted-proxy ADDR[/BITS]" in shown and "X-Forwarded-For" in shown and "ignored" in shown


def test_the_gateways_hello_names_the_browser_and_a_pages_hello_never_reaches_the_daemon() -> None:
    assert hello_params("ko", "203.0.113.5") == {"locale": "ko", "client": "roster-web", "remote": "203.0.113.5"}
    assert hello_params("en", None) == {"locale": "en", "client": "roster-web"}
    for params in ({}, {"locale": "ko"}, {"remote": CLAIMED}, {"locale": "en", "client": "x", "remote": CLAIMED}):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session.hello", "params": params})
        verdict = judge_frame(frame, "no")
        assert isinstance(verdict, Refuse) and verdict.answer is not None
        assert json.loads(verdict.answer)["error"]["data"] == {"reason": "forbidden", "method": "session.hello"}


@pytest.fixture
def limited_daemon() -> Iterator[Daemon]:
    with started_daemon(LOW_LIMIT) as started:
        yield started


def audit(daemon: Daemon, **query: Any) -> list[dict[str, Any]]:
    """The audit log, newest first, read as root over the socket (admin.audit)."""
    with roster.Client(daemon.socket_path, timeout=10) as client:
        return [dict(item) for item in client.admin_audit(limit=200, **query)["items"]]


def register_directly(daemon: Daemon, *usernames: str) -> None:
    with roster.Client(daemon.socket_path, timeout=10) as client:
        for username in usernames:
            client.users_register(username=username, password="secret1")


def test_behind_a_trusted_proxy_each_browser_has_its_own_failed_log_in_limit_and_audit_entries(
        limited_daemon: Daemon) -> None:
    register_directly(limited_daemon, "carol1")
    with started_gateway(limited_daemon, "--trusted-proxy", "127.0.0.1") as gateway:
        async def flow() -> None:
            async with browser() as session:
                # Browser A fails log-ins on names of its own until its address is limited.
                statuses = []
                for attempt in range(12):
                    status, answer = await log_in(session, gateway, f"nobody{attempt}", "wrong12",
                                                  f"{CLAIMED}, {BROWSER_A}")
                    statuses.append((status, answer["reason"]))
                    if answer["reason"] == "rate_limited":
                        break
                assert statuses[-1] == (429, "rate_limited"), statuses
                assert len(statuses) == 11, statuses
                # Browser B, behind the same proxy and so on the same gateway uid, is not held back by A.
                status, answer = await log_in(session, gateway, "carol1", "secret1", BROWSER_B)
                assert (status, answer) == (200, {"redirect": "/contacts"})
                status, answer = await log_in(session, gateway, "nobody0", "wrong12", BROWSER_A)
                assert (status, answer["reason"]) == (429, "rate_limited")
        run(flow())
    entries = audit(limited_daemon, event="login")
    failed = [entry for entry in entries if entry["outcome"] == "failed"]
    assert failed and {entry["remote"] for entry in failed} == {BROWSER_A}, entries
    assert [entry["remote"] for entry in entries if entry["outcome"] == "succeeded"] == [BROWSER_B], entries
    # The register above came straight to the socket: no gateway, no remote.
    assert [entry["remote"] for entry in audit(limited_daemon, event="register")] == [None]


def test_one_browsers_made_up_names_do_not_lock_another_users_right_password_out(limited_daemon: Daemon) -> None:
    """Behind a proxy without --trusted-proxy every browser is 127.0.0.1 to rosterd: one browser that fails log-ins
    on made-up names until 429 limits its made-up names, never another user's right password (nor its wrong one,
    which is still refused as such)."""
    register_directly(limited_daemon, "carol1")
    with started_gateway(limited_daemon) as gateway:
        async def flow() -> None:
            async with browser() as enumerator, browser() as carol:
                statuses = []
                for attempt in range(12):
                    status, answer = await log_in(enumerator, gateway, f"nobody{attempt}", "wrong12", None)
                    statuses.append((status, answer["reason"]))
                    if answer["reason"] == "rate_limited":
                        break
                assert statuses[-1] == (429, "rate_limited"), statuses
                assert len(statuses) == 11, statuses
                assert (await log_in(enumerator, gateway, "nobody99", "wrong12", None))[0] == 429
                status, answer = await log_in(carol, gateway, "carol1", "secret1", None)
                assert (status, answer) == (200, {"redirect": "/contacts"})
        run(flow())
    assert {entry["remote"] for entry in audit(limited_daemon, event="login")} == {"127.0.0.1"}


def test_without_a_trusted_proxy_the_gateway_names_the_tcp_peer_whatever_x_forwarded_for_says(
        daemon: Daemon, gateway: Gateway) -> None:
    register_directly(daemon, "carol1")

    async def flow() -> None:
        async with browser() as session:
            assert (await log_in(session, gateway, "carol1", "secret1", BROWSER_A))[0] == 200
            assert (await log_in(session, gateway, "carol1", "wrong12", BROWSER_A))[0] == 401
    run(flow())
    assert [entry["remote"] for entry in audit(daemon, event="login")] == ["127.0.0.1", "127.0.0.1"]


def test_a_websockets_daemon_connection_names_the_browser_and_the_page_cannot_change_it(daemon: Daemon) -> None:
    register_directly(daemon, "carol1")
    with started_gateway(daemon, "--trusted-proxy", "127.0.0.1") as gateway:
        async def flow() -> None:
            async with browser() as other, browser() as session:
                assert (await log_in(other, gateway, "carol1", "secret1", BROWSER_B))[0] == 200
                assert (await log_in(session, gateway, "carol1", "secret1", BROWSER_A))[0] == 200
                ws = await session.ws_connect(f"{gateway.url}/ws?locale=en",
                                              headers=own(gateway) | {"X-Forwarded-For": BROWSER_A})
                ready = await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
                assert ready["params"]["user"] == "carol1"
                # The page's own hello, claiming another address, is the gateway's to refuse.
                refused = await call(ws, 1, "session.hello", locale="en", remote=CLAIMED)
                assert refused["error"]["data"] == {"reason": "forbidden", "method": "session.hello"}
                sessions = (await call(ws, 2, "session.list"))["result"]["items"]
                elsewhere = [item["id"] for item in sessions if not item["current"]]
                assert len(elsewhere) == 1, sessions
                assert "result" in await call(ws, 3, "session.revoke", id=elsewhere[0])
                await ws.close()
        run(flow())
    resumes = audit(daemon, event="resume")
    assert [entry["remote"] for entry in resumes] == [BROWSER_A], resumes
    revoked = audit(daemon, event="session_revoked")
    assert [entry["remote"] for entry in revoked] == [BROWSER_A], revoked
    assert CLAIMED not in json.dumps(audit(daemon))


async def log_in(session: aiohttp.ClientSession, gateway: Gateway, username: str, password: str,
                 forwarded_for: str | None) -> tuple[int, Any]:
    headers = own(gateway) | ({} if forwarded_for is None else {"X-Forwarded-For": forwarded_for})
    response = await session.post(f"{gateway.url}/login", json={"username": username, "password": password},
                                  headers=headers)
    return response.status, await response.json()


class RecordingRosterd:
    """A stand-in for rosterd that records every line each connection sends, so that what the gateway says first
    is seen as it is written: hello answers {} (or `forbidden`, as rosterd answers a uid it does not trust),
    resume `not_found`, auth.login and users.register a token, anything else {}."""

    def __init__(self, directory: Path, refuse_hello: bool = False) -> None:
        self.directory = directory
        self.socket_path = str(directory / "recording.sock")
        self.connections: list[list[dict[str, Any]]] = []
        recorder = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                lines: list[dict[str, Any]] = []
                recorder.connections.append(lines)
                for line in self.rfile:
                    request = json.loads(line)
                    lines.append(request)
                    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id"), "result": {}}
                    refusals = {"session.resume": (1004, "not_found")}
                    if refuse_hello:
                        refusals["session.hello"] = (1031, "forbidden")
                    if (refusal := refusals.get(request["method"])) is not None:
                        code, reason = refusal
                        answer = {"jsonrpc": "2.0", "id": request.get("id"),
                                  "error": {"code": code, "message": "no", "data": {"reason": reason}}}
                    elif request["method"] in ("auth.login", "users.register"):
                        answer["result"] = {"token": "T", "username": request["params"]["username"]}
                    self.wfile.write(json.dumps(answer).encode() + b"\n")

        self.server = socketserver.ThreadingUnixStreamServer(self.socket_path, Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[RecordingRosterd]:
    started = RecordingRosterd(tmp_path)
    try:
        yield started
    finally:
        started.stop()


def test_every_daemon_connection_the_gateway_opens_says_the_browser_first(recording: RecordingRosterd) -> None:
    """Each POST's connection and each WebSocket's, with a cookie or without: hello with the browser's address is
    the first line, and the page's own hello (claiming another address) never reaches the daemon."""
    with started_gateway(recording, "--trusted-proxy", "127.0.0.1") as gateway:
        async def flow() -> None:
            async with browser() as session:
                assert (await log_in(session, gateway, "carol1", "secret1", BROWSER_A))[0] == 200
                response = await session.post(f"{gateway.url}/register", headers=own(gateway),
                                              json={"username": "dave01", "password": "secret1"})
                assert response.status == 200
                ws = await session.ws_connect(f"{gateway.url}/ws?locale=ko",
                                              headers=own(gateway) | {"X-Forwarded-For": f"{CLAIMED}, {BROWSER_B}"})
                await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
                refused = await call(ws, 1, "session.hello", remote=CLAIMED)
                assert refused["error"]["data"]["reason"] == "forbidden"
                await call(ws, 2, "session.whoami")
                await ws.close()
                assert (await session.post(f"{gateway.url}/logout", headers=own(gateway))).status == 200
            async with browser() as stranger:
                ws, _ = await open_socket(stranger, gateway)
                await ws.close()
        run(flow())
    connections = recording.connections
    assert [[line["method"] for line in lines] for lines in connections] == [
        ["session.hello", "auth.login"], ["session.hello", "users.register", "auth.login"],
        ["session.hello", "session.resume", "session.whoami"], ["session.hello", "session.resume"],
        ["session.hello"]]
    hellos = [lines[0]["params"] for lines in connections]
    assert hellos == [{"locale": "en", "client": "roster-web", "remote": remote}
                      for remote in (BROWSER_A, "127.0.0.1")] + [
                     {"locale": "ko", "client": "roster-web", "remote": BROWSER_B}] + [
                     {"locale": "en", "client": "roster-web", "remote": "127.0.0.1"}] * 2


def test_a_refused_hello_ends_the_tab_and_the_post_and_nothing_more_is_said_for_the_browser(tmp_path: Path) -> None:
    """rosterd refuses the hello of a gateway uid it does not trust with a remote: the gateway must not go on
    speaking for the browser as its own uid (shared limits, no remote in the audit log)."""
    refusing = RecordingRosterd(tmp_path, refuse_hello=True)
    try:
        with started_gateway(refusing) as gateway:
            async def flow() -> None:
                async with browser("T") as session:
                    status, answer = await log_in(session, gateway, "carol1", "secret1", None)
                    assert (status, answer) == (503, {"reason": "unavailable"})
                    ws = await session.ws_connect(f"{gateway.url}/ws", headers=own(gateway))
                    message = await ws.receive(timeout=10)
                    assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
                    assert ws.close_code == 1011
            run(flow())
            assert "rosterd refused the gateway's session.hello: forbidden" in gateway.log()
            assert "GatewayUsers=" in gateway.log()
    finally:
        refusing.stop()
    assert [[line["method"] for line in lines] for lines in refusing.connections] == [["session.hello"]] * 2
