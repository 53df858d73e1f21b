"""One browser tab's WebSocket and its own rosterd connection: a JSON-RPC message per text frame, both ways."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import struct
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any

from aiohttp import WSMsgType, web

from .._wire import MAX_LINE_BYTES, decode_object
from .policy import Refuse, answer_key, frame_without_tokens, judge_frame, login_token, with_ticket, without_tokens
from .tickets import LoginTickets

log = logging.getLogger("roster.web")

HELLO_ID = "roster-web:hello"
RESUME_ID = "roster-web:resume"
# A daemon that has not answered hello and resume by then is not going to; the tab is told to reload.
SETUP_SECONDS = 10.0
# Sending the close frame to a browser that reads nothing would wait for ever; past this the TCP connection goes.
CLOSE_SECONDS = 2.0
CLOSE_TOO_SLOW = 1008
CLOSE_UNSUPPORTED = 1003
CLOSE_DAEMON_GONE = 1011
# Log-in requests (policy.LOGS_IN) of one tab awaiting their answers; past it a further one is refused.
MAX_LOG_INS_IN_FLIGHT = 8


class Ending(Enum):
    """Who ended a tab's relay."""

    PAGE = "page"
    DAEMON = "daemon"
    TOO_SLOW = "too_slow"


class HelloRefused(Exception):
    """rosterd answered the gateway's own session.hello with an error (`reason`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def hello_params(locale: str, remote: str | None) -> dict[str, str]:
    """What the gateway says first on every rosterd connection it opens for a browser: the page's language, its
    own name, and the browser's address, which rosterd takes only from a gateway's uid (`[Server] GatewayUsers=`)
    and then counts log-in failures, queue shares and audit entries by."""
    params = {"locale": locale, "client": "roster-web"}
    if remote is not None:
        params["remote"] = remote
    return params


def log_refused_hello(reason: str) -> None:
    """A refused hello is the gateway's setup, not the browser's doing: said once per connection, with the fix."""
    hint = " (is roster-web's user in rosterd's [Server] GatewayUsers=?)" if reason == "forbidden" else ""
    log.warning("rosterd refused the gateway's session.hello: %s%s", reason, hint)


@dataclass(frozen=True)
class RelayLimits:
    """What one tab may hold: frames queued for it and not yet taken by the browser, in bytes."""

    max_queued_bytes: int


@dataclass
class LogIns:
    """A tab's passkey log-ins in flight (their request ids, as policy.answer_key writes them), and where the tokens
    of those that succeed go: `tickets`, for the browser address `address`. `busy_message` is what a log-in past
    MAX_LOG_INS_IN_FLIGHT is answered, in the page's language."""

    tickets: LoginTickets
    address: str
    waiting: set[str]
    busy_message: str

    def answer_for_page(self, line: bytes) -> str | None:
        """The daemon's line as the page's frame: tokens taken out, and a log-in's token traded for a ticket."""
        message = decode_object(line)
        if message is None:
            return None
        if self.waiting and "method" not in message and (key := answer_key(message.get("id"))) in self.waiting:
            self.waiting.discard(key)
            if (logged_in := login_token(message)) is not None:
                token, username = logged_in
                message = with_ticket(message, self.tickets.issue(token, username, self.address))
        return frame_without_tokens(message)


class Outbox:
    """Frames for the browser, bounded in bytes: a put past the bound says the browser stopped reading."""

    def __init__(self, limit: int) -> None:
        self._frames: deque[str | None] = deque()
        self._bytes = 0
        self._limit = limit
        self._arrived = asyncio.Event()

    def put(self, frame: str) -> bool:
        size = len(frame.encode())
        if self._bytes + size > self._limit and self._frames:
            return False
        self._frames.append(frame)
        self._bytes += size
        self._arrived.set()
        return True

    def finish(self) -> None:
        """No more frames will come: the sender ends once the queued ones are out."""
        self._frames.append(None)
        self._arrived.set()

    async def take(self) -> str | None:
        while not self._frames:
            self._arrived.clear()
            await self._arrived.wait()
        frame = self._frames.popleft()
        if frame is not None:
            self._bytes -= len(frame.encode())
        return frame


async def relay(ws: web.WebSocketResponse, request: web.Request, socket_path: str, locale: str, remote: str | None,
                token: str | None, limits: RelayLimits, refusal_message: str, log_ins: LogIns) -> Ending:
    """Serves one tab until either side ends: hello (naming the browser's `remote` address) and resume with the
    cookie's token first, then a `ready` event naming the user (null when not logged in), then every frame both
    ways, a passkey log-in's token traded for a ticket (`log_ins`). Returns who ended it."""
    transport = request.transport
    try:
        reader, writer = await asyncio.open_unix_connection(socket_path, limit=MAX_LINE_BYTES)
    except OSError:
        await ws.close(code=CLOSE_DAEMON_GONE, message=b"rosterd is not reachable")
        return Ending.DAEMON
    outbox = Outbox(limits.max_queued_bytes)
    try:
        try:
            user, resume_reason = await asyncio.wait_for(
                _open_session(reader, writer, hello_params(locale, remote), token, outbox), SETUP_SECONDS)
        except (asyncio.TimeoutError, OSError, ConnectionError):
            await ws.close(code=CLOSE_DAEMON_GONE, message=b"rosterd did not answer")
            return Ending.DAEMON
        except HelloRefused as refused:
            # Relaying on would speak for this browser as the gateway's uid, in the daemon's default language.
            log_refused_hello(refused.reason)
            await ws.close(code=CLOSE_DAEMON_GONE, message=b"rosterd refused the gateway")
            return Ending.DAEMON
        outbox.put(json.dumps({"jsonrpc": "2.0", "method": "event",
                               "params": {"type": "ready", "user": user, "locale": locale,
                                          "resume": resume_reason}}, ensure_ascii=False))
        sender = asyncio.create_task(_send_to_page(ws, outbox))
        to_daemon = asyncio.create_task(_page_to_daemon(ws, writer, outbox, refusal_message, log_ins))
        to_page = asyncio.create_task(_daemon_to_page(reader, outbox, log_ins))
        tasks = {sender, to_daemon, to_page}
        ending = Ending.PAGE
        while not to_daemon.done() and not sender.done():
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            if to_page.done() and to_page in tasks:
                tasks.discard(to_page)
                ending = Ending.DAEMON
                if to_page.result() is False:
                    ending = Ending.TOO_SLOW
                    sender.cancel()
                    await asyncio.gather(sender, return_exceptions=True)
                    await _close(ws, transport, CLOSE_TOO_SLOW, b"the browser stopped reading")
                # else: the sender sends what is queued, then closes the socket.
        for task in (sender, to_daemon, to_page):
            task.cancel()
        await asyncio.gather(sender, to_daemon, to_page, return_exceptions=True)
        if not ws.closed:
            await _close(ws, transport, CLOSE_DAEMON_GONE if ending is Ending.DAEMON else 1000, b"")
        return ending
    finally:
        writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await writer.wait_closed()


async def _open_session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hello: dict[str, str],
                        token: str | None, outbox: Outbox) -> tuple[str | None, str | None]:
    """Says hello, then resumes the cookie's token; returns the user (None when there is no token or it does not
    resume) and the reason a resume was refused. Events that come meanwhile are queued. The resume waits for the
    hello's answer: a refused hello (HelloRefused) must not be followed by a resume on the gateway's uid alone."""
    answer = await _ask(reader, writer, HELLO_ID, "session.hello", hello, outbox)
    if isinstance(error := answer.get("error"), dict):
        data = error.get("data")
        raise HelloRefused(str(data.get("reason")) if isinstance(data, dict) else "error")
    if token is None:
        return None, None
    answer = await _ask(reader, writer, RESUME_ID, "session.resume", {"token": token}, outbox)
    result = answer.get("result")
    error = answer.get("error")
    if isinstance(result, dict) and isinstance(result.get("username"), str):
        return result["username"], None
    if isinstance(error, dict) and isinstance(error.get("data"), dict):
        return None, str(error["data"].get("reason"))
    return None, None


async def _ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request_id: str, method: str,
               params: dict[str, str], outbox: Outbox) -> dict[str, Any]:
    """Sends one request of the gateway's own and returns its answer; the events before it go to the page."""
    writer.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
                 + b"\n")
    await writer.drain()
    while True:
        line = await reader.readline()
        if not line:
            raise ConnectionError("rosterd closed the connection")
        message = decode_object(line) or {}
        if message.get("id") == request_id:
            return message
        if (frame := without_tokens(line)) is not None:
            outbox.put(frame)


async def _page_to_daemon(ws: web.WebSocketResponse, writer: asyncio.StreamWriter, outbox: Outbox,
                          refusal_message: str, log_ins: LogIns) -> None:
    async for message in ws:
        if message.type == WSMsgType.TEXT:
            verdict = judge_frame(message.data, refusal_message)
            if not isinstance(verdict, Refuse) and (key := verdict.logs_in) is not None:
                if len(log_ins.waiting) >= MAX_LOG_INS_IN_FLIGHT or key in log_ins.waiting:
                    # Its answer could not be told from another's: refused here, before the daemon sees it.
                    verdict = Refuse(busy_answer(key, log_ins.busy_message))
                else:
                    log_ins.waiting.add(key)
            if isinstance(verdict, Refuse):
                if verdict.answer is not None and not outbox.put(verdict.answer):
                    return
                continue
            writer.write(verdict.line)
            await writer.drain()
        elif message.type == WSMsgType.BINARY:
            await ws.close(code=CLOSE_UNSUPPORTED, message=b"text frames only")
            return


def busy_answer(request_key: str, message: str) -> str:
    """`busy` for a log-in sent while as many of the tab's are in flight as it may have (or one with the same id)."""
    return json.dumps({"jsonrpc": "2.0", "id": json.loads(request_key),
                       "error": {"code": 1021, "message": message,
                                 "data": {"reason": "busy", "retry_after_ms": 1000}}},
                      ensure_ascii=False, separators=(",", ":"))


async def _daemon_to_page(reader: asyncio.StreamReader, outbox: Outbox, log_ins: LogIns) -> bool:
    """Queues the daemon's lines for the page; False as soon as the queue is over its bound, True at the end."""
    try:
        while line := await reader.readline():
            frame = log_ins.answer_for_page(line)
            if frame is not None and not outbox.put(frame):
                return False
    except (ValueError, OSError, ConnectionError):
        pass
    outbox.finish()
    return True


async def _send_to_page(ws: web.WebSocketResponse, outbox: Outbox) -> None:
    while (frame := await outbox.take()) is not None:
        await ws.send_str(frame)
    await ws.close(code=CLOSE_DAEMON_GONE, message=b"rosterd closed the connection")


async def _close(ws: web.WebSocketResponse, transport: asyncio.Transport | None, code: int,
                 reason: bytes) -> None:
    try:
        await asyncio.wait_for(ws.close(code=code, message=reason), CLOSE_SECONDS)
    except (asyncio.TimeoutError, ConnectionError, OSError):
        pass
    # A browser that stopped reading never takes the close frame out of the full send buffer, and one that does
    # not answer it holds the connection: either way the TCP connection goes, and its buffers with it.
    if transport is not None and (code == CLOSE_TOO_SLOW or not ws.closed):
        connection = transport.get_extra_info("socket")
        if connection is not None:
            # Linger 0: the kernel drops the unsent bytes and resets, instead of holding them for a reader that
            # is not coming.
            with contextlib.suppress(OSError):
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
