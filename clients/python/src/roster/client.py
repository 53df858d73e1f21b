"""The blocking client: one connection, thread-safe, with a reader thread that matches answers and queues events."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

from ._generated import BlockingMethods
from ._socket import default_socket_path
from ._wire import MAX_LINE_BYTES, MAX_QUEUED_EVENTS, Answer, EventQueue, any_event, encode_request, parse_line
from .errors import ConnectionLost
from .events import Event
from .forms import Form


class Client(BlockingMethods):
    """One rosterd connection, which is one session. Every method may be called from any thread, and several calls
    may be in flight at once (see `start`); answers are matched by id, events are queued until `events()` reads them.

        with roster.Client() as client:
            client.session_hello(locale="en")
            client.users_register(username="alice1", password="secret1")
    """

    def __init__(self, socket_path: str | None = None, *, timeout: float | None = 30.0,
                 max_queued_events: int = MAX_QUEUED_EVENTS) -> None:
        self.socket_path = socket_path or default_socket_path()
        self.timeout = timeout
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.connect(self.socket_path)
        except OSError as error:
            self._socket.close()
            raise ConnectionLost(f"cannot connect to rosterd at {self.socket_path}: {error.strerror}") from error
        self._state = threading.Condition()
        self._send = threading.Lock()
        self._pending: dict[int, Future[Any]] = {}
        self._events = EventQueue(max_queued_events)
        self._next_id = 1
        self._lost: ConnectionLost | None = None
        self._reader = threading.Thread(target=self._read_loop, name="roster-reader", daemon=True)
        self._reader.start()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def events_dropped(self) -> int:
        """How many unread events were dropped because the queue was full."""
        with self._state:
            return self._events.dropped

    def close(self) -> None:
        """Ends the connection; calls still waiting raise ConnectionLost."""
        with self._state:
            if self._lost is None:
                self._lost = ConnectionLost("the client was closed")
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._reader is not threading.current_thread():
            self._reader.join()
        self._socket.close()

    def start(self, method: str, params: dict[str, Any] | None = None) -> Future[Any]:
        """Sends a request and returns at once; the future's result is the answer's result, or it raises."""
        future: Future[Any] = Future()
        with self._state:
            if self._lost is not None:
                raise self._lost
            request_id = self._next_id
            self._next_id += 1
            self._pending[request_id] = future
        try:
            with self._send:
                self._socket.sendall(encode_request(request_id, method, params))
        except OSError as error:
            self._lose(ConnectionLost(f"writing to rosterd failed: {error.strerror}"))
        return future

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Sends a request and returns its result, or raises RosterError, ConnectionLost, or TimeoutError after
        the client's `timeout` (use `start` to wait longer or not at all)."""
        try:
            return self.start(method, params).result(self.timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer to {method} within {self.timeout} s") from None

    def events(self, timeout: float | None = None) -> Iterator[Event]:
        """Yields events as they arrive; stops after `timeout` seconds with none (None: never), and raises
        ConnectionLost once the connection is gone and every queued event has been read."""
        while True:
            event = self.next_event(timeout)
            if event is None:
                return
            yield event

    def next_event(self, timeout: float | None = None, wanted: Callable[[Event], bool] = any_event) -> Event | None:
        """The oldest queued event `wanted` accepts (others stay queued), waiting at most `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._state:
            while True:
                event = self._events.take(wanted)
                if event is not None:
                    return event
                if self._lost is not None:
                    raise self._lost
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._state.wait(remaining)

    def form(self, name: str) -> Form:
        """Opens (or resets) a form and returns a helper that follows its field and form states."""
        return Form(self, name)

    def _read_loop(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = self._socket.recv(65536)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                if len(buffer) > MAX_LINE_BYTES:
                    self._lose(ConnectionLost(f"rosterd sent a line longer than {MAX_LINE_BYTES} bytes"))
                    return
                for line in lines:
                    self._sort(line)
        except OSError:
            pass
        self._lose(ConnectionLost("rosterd closed the connection"))

    def _sort(self, line: bytes) -> None:
        message = parse_line(line)
        if isinstance(message, Answer):
            with self._state:
                if message.request_id is None:
                    # The daemon could not tie this error to a request, so every call in flight may be the one.
                    waiting = list(self._pending.values())
                    self._pending.clear()
                else:
                    found = self._pending.pop(message.request_id, None)
                    waiting = [found] if found is not None else []
            for future in waiting:
                if message.error is not None:
                    future.set_exception(message.error)
                else:
                    future.set_result(message.result)
        elif message is not None:
            with self._state:
                self._events.append(message)
                self._state.notify_all()

    def _lose(self, error: ConnectionLost) -> None:
        with self._state:
            if self._lost is None:
                self._lost = error
            lost = self._lost
            waiting = list(self._pending.values())
            self._pending.clear()
            self._state.notify_all()
        for future in waiting:
            future.set_exception(lost)
