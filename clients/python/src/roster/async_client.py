"""The asyncio client: one connection, many awaits in flight on it, events as an async iterator."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from ._generated import AsyncMethods
from ._socket import default_socket_path
from ._wire import MAX_LINE_BYTES, MAX_QUEUED_EVENTS, Answer, EventQueue, any_event, encode_request, parse_line
from .errors import ConnectionLost
from .events import Event
from .forms import OpeningForm


class AsyncClient(AsyncMethods):
    """One rosterd connection, which is one session, on the running event loop. Concurrent awaits share it;
    answers are matched by id, events are queued until `events()` reads them.

        async with await roster.AsyncClient.connect() as client:
            await client.session_hello(locale="en")
            found = await client.contacts_search(query="zs")
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, timeout: float | None,
                 max_queued_events: int, socket_path: str) -> None:
        self.socket_path = socket_path
        self.timeout = timeout
        self._reader = reader
        self._writer = writer
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._events = EventQueue(max_queued_events)
        self._arrived = asyncio.Condition()
        self._next_id = 1
        self._lost: ConnectionLost | None = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def connect(cls, socket_path: str | None = None, *, timeout: float | None = 30.0,
                      max_queued_events: int = MAX_QUEUED_EVENTS) -> AsyncClient:
        """Connects to rosterd (found as rosterctl finds it unless `socket_path` says)."""
        path = socket_path or default_socket_path()
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=MAX_LINE_BYTES)
        except OSError as error:
            raise ConnectionLost(f"cannot connect to rosterd at {path}: {error.strerror}") from error
        return cls(reader, writer, timeout=timeout, max_queued_events=max_queued_events, socket_path=path)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    @property
    def events_dropped(self) -> int:
        """How many unread events were dropped because the queue was full."""
        return self._events.dropped

    @property
    def connected(self) -> bool:
        """Whether the connection still stands (not closed, not lost)."""
        return self._lost is None

    async def close(self) -> None:
        """Ends the connection; awaits still waiting raise ConnectionLost."""
        if self._lost is None:
            self._lost = ConnectionLost("the client was closed")
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        await self._lose(self._lost)

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Sends a request and returns its result, or raises RosterError, ConnectionLost, or TimeoutError after
        the client's `timeout`."""
        if self._lost is not None:
            raise self._lost
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._writer.write(encode_request(request_id, method, params))
            await self._writer.drain()
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer to {method} within {self.timeout} s") from None
        except OSError as error:
            await self._lose(ConnectionLost(f"writing to rosterd failed: {error.strerror}"))
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def events(self, timeout: float | None = None) -> AsyncIterator[Event]:
        """Yields events as they arrive; stops after `timeout` seconds with none (None: never), and raises
        ConnectionLost once the connection is gone and every queued event has been read."""
        while (event := await self.next_event(timeout)) is not None:
            yield event

    async def next_event(self, timeout: float | None = None,
                         wanted: Callable[[Event], bool] = any_event) -> Event | None:
        """The oldest queued event `wanted` accepts (others stay queued), waiting at most `timeout` seconds."""
        async with self._arrived:
            try:
                async with asyncio.timeout(timeout):
                    while (event := self._events.take(wanted)) is None:
                        if self._lost is not None:
                            raise self._lost
                        await self._arrived.wait()
                    return event
            except TimeoutError:
                return None

    def form(self, name: str) -> OpeningForm:
        """Opens (or resets) a form: `form = await client.form("register")`, or `async with client.form(…) as form`."""
        return OpeningForm(self, name)

    async def _read_loop(self) -> None:
        lost = ConnectionLost("rosterd closed the connection")
        try:
            while line := await self._reader.readline():
                await self._sort(line)
        except ValueError:
            lost = ConnectionLost(f"rosterd sent a line longer than {MAX_LINE_BYTES} bytes")
        except OSError:
            pass
        await self._lose(lost)

    async def _sort(self, line: bytes) -> None:
        message = parse_line(line)
        if isinstance(message, Answer):
            if message.request_id is None:
                # The daemon could not tie this error to a request, so every call in flight may be the one.
                waiting = list(self._pending.values())
            else:
                found = self._pending.get(message.request_id)
                waiting = [found] if found is not None else []
            for future in waiting:
                if future.done():
                    continue
                if message.error is not None:
                    future.set_exception(message.error)
                else:
                    future.set_result(message.result)
        elif message is not None:
            async with self._arrived:
                self._events.append(message)
                self._arrived.notify_all()

    async def _lose(self, error: ConnectionLost) -> None:
        if self._lost is None:
            self._lost = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._lost)
        async with self._arrived:
            self._arrived.notify_all()
