"""roster-web's own bounds against the real rosterd: WebSocket tabs per browser address, open connections per
address, the deadlines for a request's head and body, a POST in a charset that is not UTF-8, and log lines
bounded per kind."""
from __future__ import annotations

import asyncio
import logging
import selectors
import shlex
import socket
import time

import aiohttp
import pytest

from conftest import REPOSITORY, Daemon, Gateway, started_gateway
from roster.web.__main__ import arguments
from roster.web.app import Settings
from roster.web.budget import Refusal, SocketBudget, Ticket
from roster.web.connections import BUSY, TOO_MANY, ConnectionGate
from roster.web.forwarded import TrustedProxies, address_bucket
from roster.web.logthrottle import LogThrottle
from test_web_gateway import browser, next_message, own, register, run

# Linux routes all of 127.0.0.0/8 to loopback: a client bound to this source is another browser address.
OTHER_ADDRESS = "127.0.0.2"


def from_address(address: str) -> aiohttp.ClientSession:
    """A browser (cookies kept, as `browser()`) whose connections come from `address`."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True),
                                 connector=aiohttp.TCPConnector(local_addr=(address, 0)))


async def ready_tab(session: aiohttp.ClientSession, gateway: Gateway,
                    headers: dict[str, str] | None = None) -> tuple[aiohttp.ClientWebSocketResponse, str | None]:
    ws = await session.ws_connect(f"{gateway.url}/ws?locale=en", headers=own(gateway) | (headers or {}))
    ready = await next_message(ws, lambda m: m.get("params", {}).get("type") == "ready")
    return ws, ready["params"]["user"]


def test_the_address_bucket_is_the_ipv4_address_or_the_ipv6_64() -> None:
    assert address_bucket("203.0.113.5") == "203.0.113.5"
    assert address_bucket("2001:db8:1:2:aaaa::1") == address_bucket("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_bucket("2001:db8:1:3::1") != address_bucket("2001:db8:1:2::1")
    assert address_bucket("::ffff:203.0.113.5") == "203.0.113.5"
    assert address_bucket(None) == address_bucket("") == address_bucket("not an address") == ""


def test_the_socket_budget_counts_cookieless_tabs_per_address() -> None:
    budget = SocketBudget(per_session=8, total=10, per_address=2)
    first, second = budget.acquire(None, "203.0.113.5"), budget.acquire(None, "203.0.113.5")
    assert isinstance(first, Ticket) and isinstance(second, Ticket)
    assert budget.acquire(None, "203.0.113.5") is Refusal.ADDRESS
    # A session from that address is refused too; from another address it is served.
    assert budget.acquire("token", "203.0.113.5") is Refusal.ADDRESS
    assert isinstance(budget.acquire("token", "198.51.100.7"), Ticket)
    budget.release(first)
    assert isinstance(budget.acquire(None, "203.0.113.5"), Ticket)


def test_one_address_cannot_take_every_tab_and_a_logged_in_user_elsewhere_still_gets_one(daemon: Daemon,
                                                                                         gateway: Gateway) -> None:
    """The default: 32 tabs per browser address, whether or not they are logged in."""
    async def flow() -> None:
        async with browser() as greedy, from_address(OTHER_ADDRESS) as alice:
            tabs = [(await ready_tab(greedy, gateway))[0] for _ in range(32)]
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await greedy.ws_connect(f"{gateway.url}/ws", headers=own(gateway))
            assert refused.value.status == 429
            assert refused.value.headers is not None and refused.value.headers["Retry-After"] == "5"
            await register(alice, gateway, "alice1")
            ws, user = await ready_tab(alice, gateway)
            assert user == "alice1"
            # A tab that closes gives its place back.
            await tabs.pop().close()
            for _ in range(100):
                try:
                    tabs.append((await ready_tab(greedy, gateway))[0])
                    break
                except aiohttp.WSServerHandshakeError:
                    await asyncio.sleep(0.02)
            assert len(tabs) == 32
            for tab in [*tabs, ws]:
                await tab.close()
    run(flow())


def test_behind_a_trusted_proxy_tabs_are_counted_per_forwarded_address(daemon: Daemon) -> None:
    with started_gateway(daemon, "--trusted-proxy", "127.0.0.1", "--max-tabs-per-address", "2") as gateway:
        async def flow() -> None:
            async with browser() as session:
                a = {"X-Forwarded-For": "2001:db8:1:2::a"}
                same_64 = {"X-Forwarded-For": "2001:db8:1:2::b"}
                tabs = [(await ready_tab(session, gateway, a))[0], (await ready_tab(session, gateway, same_64))[0]]
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(f"{gateway.url}/ws", headers=own(gateway) | a)
                assert refused.value.status == 429
                tabs.append((await ready_tab(session, gateway, {"X-Forwarded-For": "2001:db8:1:3::a"}))[0])
                for tab in tabs:
                    await tab.close()
        run(flow())


def test_the_connection_gate_counts_per_address_and_in_all_and_a_trusted_proxy_only_in_all() -> None:
    gate = ConnectionGate(per_address=2, total=5, proxies=TrustedProxies.parse(["10.0.0.1"]))
    keys = [gate.admit("203.0.113.5"), gate.admit("203.0.113.5")]
    assert gate.admit("203.0.113.5") == TOO_MANY
    assert gate.admit("2001:db8::1") == "2001:db8::/64" and gate.admit("2001:db8::2") == "2001:db8::/64"
    assert gate.admit("2001:db8::3") == TOO_MANY
    assert isinstance(gate.admit("10.0.0.1"), str)
    assert gate.admit("10.0.0.1") == BUSY and gate.open == 5
    first = keys[0]
    assert isinstance(first, str)
    gate.release(first)
    assert gate.admit("203.0.113.5") == "203.0.113.5"


def test_the_bounds_have_options_with_defaults() -> None:
    options = arguments([])
    assert (options.max_connections, options.max_connections_per_address, options.max_tabs_per_address,
            options.header_timeout, options.body_timeout, options.log_interval) == (1024, 64, 32, 10.0, 10.0, 10.0)
    for wrong in (["--header-timeout", "0"], ["--body-timeout", "x"], ["--max-connections", "0"]):
        with pytest.raises(SystemExit):
            arguments(wrong)


def half_sent(gateway: Gateway, source: str = "127.0.0.1") -> socket.socket:
    host, port = gateway.host.rsplit(":", 1)
    connection = socket.socket()
    connection.bind((source, 0))
    connection.connect((host, int(port)))
    connection.sendall(f"GET /login HTTP/1.1\r\nHost: {gateway.host}\r\nUser-Agent: slow".encode())
    return connection


def still_open(connections: list[socket.socket]) -> list[socket.socket]:
    """The connections the gateway has neither answered nor closed yet."""
    readable = selectors.DefaultSelector()
    for connection in connections:
        readable.register(connection, selectors.EVENT_READ, connection)
    answered = {key.data for key, _ in readable.select(0)}
    readable.close()
    return [connection for connection in connections if connection not in answered]


def read_until_closed(connections: list[socket.socket], timeout: float) -> dict[socket.socket, bytes]:
    """What each connection got until the gateway closed it; a connection still open at `timeout` is missing."""
    selector = selectors.DefaultSelector()
    got: dict[socket.socket, bytes] = {}
    for connection in connections:
        connection.setblocking(False)
        selector.register(connection, selectors.EVENT_READ, connection)
        got[connection] = b""
    closed: dict[socket.socket, bytes] = {}
    deadline = time.monotonic() + timeout
    while len(closed) < len(connections) and time.monotonic() < deadline:
        for key, _ in selector.select(max(0.0, deadline - time.monotonic())):
            connection = key.data
            try:
                data = connection.recv(4096)
            except ConnectionResetError:
                data = b""
            if data:
                got[connection] += data
            else:
                selector.unregister(connection)
                closed[connection] = got[connection]
    selector.close()
    return closed


def test_half_sent_requests_hold_no_more_than_their_share_and_are_closed_after_the_header_timeout(
        daemon: Daemon) -> None:
    with started_gateway(daemon, "--max-connections-per-address", "40", "--header-timeout", "2") as gateway:
        slow = [half_sent(gateway) for _ in range(300)]
        try:
            async def fresh() -> None:
                async with from_address(OTHER_ADDRESS) as other:
                    started = time.monotonic()
                    response = await other.get(f"{gateway.url}/login")
                    assert response.status == 200 and "<form" in await response.text()
                    assert time.monotonic() - started < 1.5
            run(fresh())
            # Every connection past the address's 40 is answered 429 at once and closed (the kernel may reset one
            # whose request it had not read yet, and the answer is lost: closed all the same), so at most 40
            # are ever held.
            deadline = time.monotonic() + 5
            while len(still_open(slow)) > 40 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(still_open(slow)) <= 40
            # The held ones are answered 408 and closed once their 2 s are up.
            answers = read_until_closed(slow, timeout=15)
            assert len(answers) == 300
            kinds = [answer[:13] for answer in answers.values()]
            assert set(kinds) <= {b"HTTP/1.1 408 ", b"HTTP/1.1 429 ", b""}, kinds
            assert kinds.count(b"HTTP/1.1 408 ") >= 40 and kinds.count(b"HTTP/1.1 429 ") > 0, kinds
            # Their places are free again.
            again = half_sent(gateway)
            again.sendall(b"\r\n\r\n")
            answer = read_until_closed([again], timeout=5)
            assert answer[again].startswith(b"HTTP/1.1 200 ")
        finally:
            for connection in slow:
                connection.close()
        # The flood is logged in a bounded number of lines, without a traceback.
        log = gateway.log()
        assert "Traceback" not in log
        assert len(log.splitlines()) < 10, log


def test_a_post_whose_body_never_finishes_is_answered_408_after_the_body_timeout(daemon: Daemon) -> None:
    with started_gateway(daemon, "--body-timeout", "1") as gateway:
        host, port = gateway.host.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as connection:
            connection.sendall(f"POST /login HTTP/1.1\r\nHost: {gateway.host}\r\nOrigin: {gateway.url}\r\n"
                               f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                               '{"username": "alice1"'.encode())
            answer = read_until_closed([connection], timeout=5)
            assert answer[connection].startswith(b"HTTP/1.1 408 ")


def test_a_post_in_a_bogus_charset_is_answered_400_and_logged_once_without_a_traceback(
        daemon: Daemon, gateway: Gateway) -> None:
    async def flow() -> None:
        async with browser() as session:
            for _ in range(20):
                response = await session.post(f"{gateway.url}/login", data=b'{"username": "alice1"}',
                                              headers=own(gateway) | {
                                                  "Content-Type": "application/json; charset=foo-bogus"})
                assert response.status == 400
                assert await response.json() == {"reason": "invalid_request"}
            # UTF-8 by name still passes.
            response = await session.post(f"{gateway.url}/login", data=b'{"username": "nobody1", "password": "x"}',
                                          headers=own(gateway) | {"Content-Type": "application/json; charset=UTF-8"})
            assert response.status == 401
    run(flow())
    log = gateway.log()
    assert "Traceback" not in log
    assert len([line for line in log.splitlines() if "charset" in line]) <= 1, log


def test_the_log_throttle_passes_one_line_per_kind_per_interval_then_counts_the_rest() -> None:
    now = [100.0]
    throttle = LogThrottle(10.0, clock=lambda: now[0])

    def record(message: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord("roster.web", logging.INFO, __file__, 1, message, args, None)

    assert throttle.filter(record("refused a request for Host %r", "a"))
    assert not any(throttle.filter(record("refused a request for Host %r", host)) for host in "bcdef")
    # Another kind has its own window.
    assert throttle.filter(record("refused a %s from Origin %r", "POST", "x"))
    now[0] = 109.999
    assert not throttle.filter(record("refused a request for Host %r", "g"))
    assert throttle.flush() == []
    now[0] = 110.0
    assert throttle.flush() == ['6 more like "refused a request for Host %r" in the last 10 s']
    assert throttle.flush() == []
    passed = record("refused a request for Host %r", "h")
    assert throttle.filter(passed) and passed.getMessage() == "refused a request for Host 'h'"
    assert not throttle.filter(record("refused a request for Host %r", "i"))
    now[0] = 125.0
    again = record("refused a request for Host %r", "j")
    assert throttle.filter(again)
    assert again.getMessage() == "refused a request for Host 'j' (1 more like it in the last 15 s)"


def test_the_units_descriptor_limit_covers_its_caps() -> None:
    unit = (REPOSITORY / "systemd" / "roster-web.service").read_text()
    command = next(line for line in unit.splitlines() if line.startswith("ExecStart=/"))
    options = arguments(shlex.split(command)[3:])
    limit = int(next(line for line in unit.splitlines() if line.startswith("LimitNOFILE=")).split("=")[1])
    settings = Settings(socket_path="")
    # Each browser connection, plus a rosterd connection per tab and per POST under way, plus a margin.
    assert options.max_connections + settings.max_sockets + settings.max_posts + 32 <= limit
    assert options.max_tabs_per_address <= options.max_connections_per_address
