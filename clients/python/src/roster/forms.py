"""`client.form("register")`: a form's field and form states, kept up to date from its events."""
from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .events import Event, FieldEvent, FieldStateName, FormEvent

if TYPE_CHECKING:
    from ._generated import FormSubmitResult
    from .async_client import AsyncClient
    from .client import Client

FINAL_STATES = ("empty", "valid", "invalid")


@dataclass(frozen=True)
class FieldState:
    """One field as the daemon last judged it; `rev` is the input revision the verdict is for."""

    name: str
    state: FieldStateName
    code: str
    message: str
    enabled: bool
    rev: int

    @property
    def final(self) -> bool:
        """Whether this is a verdict (empty, valid, invalid) and not "validating"."""
        return self.state in FINAL_STATES


@dataclass(frozen=True)
class FormState:
    """Whether the form may be submitted now."""

    form: str
    submittable: bool


class FormModel:
    """The form's state from its `form.open` snapshot on, changed by each of its events (no I/O here)."""

    def __init__(self, name: str, snapshot: Any) -> None:
        self.name = name
        self.fields: dict[str, FieldState] = {
            field["name"]: FieldState(name=field["name"], state=field["state"], code=field.get("code", ""),
                                      message=field.get("message", ""), enabled=field["enabled"], rev=field.get("rev", 0))
            for field in snapshot["fields"]}
        self.submittable: bool = bool(snapshot["submittable"])
        self.sent: dict[str, int] = {}

    def settled(self, field: str) -> bool:
        """Whether `field` has its verdict for the last input sent through this helper."""
        state = self.fields[field]
        return state.final and state.rev >= self.sent.get(field, 0)

    def owns(self, event: Event) -> bool:
        """Whether `event` is a field or form event of this form."""
        return isinstance(event, (FieldEvent, FormEvent)) and event.form == self.name

    def apply(self, event: Event) -> FieldState | FormState | None:
        """Applies one of this form's events and returns the state it produced."""
        if isinstance(event, FieldEvent) and event.form == self.name:
            state = FieldState(name=event.field, state=event.state, code=event.code, message=event.message,
                               enabled=event.enabled, rev=event.rev)
            self.fields[event.field] = state
            return state
        if isinstance(event, FormEvent) and event.form == self.name:
            self.submittable = event.submittable
            return FormState(form=self.name, submittable=event.submittable)
        return None


class _FormView:
    """What both form helpers show: the form's name, its fields' states and whether it may be submitted."""

    model: FormModel

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def fields(self) -> dict[str, FieldState]:
        return self.model.fields

    @property
    def submittable(self) -> bool:
        return self.model.submittable


class Form(_FormView):
    """A form on a blocking Client. States change only as `states()` or `wait()` read the form's events; other
    events stay queued for `client.events()`.

        with client.form("register") as form:
            form.input("username", "alice1")
            form.wait(lambda f: f.fields["username"].final)
    """

    def __init__(self, client: Client, name: str) -> None:
        self._client = client
        self.model = FormModel(name, client.form_open(form=name))

    def __enter__(self) -> Form:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def input(self, field: str, value: str) -> int:
        """Sends the field's new value and returns its input revision; the verdict comes as states."""
        rev = self._client.form_input(form=self.name, field=field, value=value)["rev"]
        self.model.sent[field] = rev
        return rev

    def verdict(self, field: str, timeout: float = 10.0) -> FieldState:
        """Waits for the field's final state (empty, valid, invalid) for the last value `input` sent, and returns it."""
        self.wait(lambda form: form.model.settled(field), timeout)
        return self.fields[field]

    def submit(self) -> FormSubmitResult:
        """Submits, answered once the outcome is known; a refusal raises RosterError."""
        return self._client.form_submit(form=self.name)

    def close(self) -> None:
        self._client.form_close(form=self.name)

    def states(self, timeout: float | None = None) -> Iterator[FieldState | FormState]:
        """Yields each new state of this form; stops after `timeout` seconds without one (None: never)."""
        while (state := self.next_state(timeout)) is not None:
            yield state

    def next_state(self, timeout: float | None = None) -> FieldState | FormState | None:
        """The form's next new state, or None after `timeout` seconds without one."""
        event = self._client.next_event(timeout, self.model.owns)
        return None if event is None else self.model.apply(event)

    def wait(self, condition: Callable[[Form], bool], timeout: float = 10.0) -> None:
        """Reads states until `condition(form)` holds; TimeoutError if it does not within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not condition(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.next_state(remaining) is None:
                raise TimeoutError(f"form {self.name} did not reach the awaited state within {timeout} s")


class AsyncForm(_FormView):
    """A form on an AsyncClient: the same as Form, with coroutines.

        async with client.form("register") as form:
            await form.input("username", "alice1")
            await form.wait(lambda f: f.fields["username"].final)
    """

    def __init__(self, client: AsyncClient, name: str, snapshot: Any) -> None:
        self._client = client
        self.model = FormModel(name, snapshot)

    async def input(self, field: str, value: str) -> int:
        rev = (await self._client.form_input(form=self.name, field=field, value=value))["rev"]
        self.model.sent[field] = rev
        return rev

    async def verdict(self, field: str, timeout: float = 10.0) -> FieldState:
        await self.wait(lambda form: form.model.settled(field), timeout)
        return self.fields[field]

    async def submit(self) -> FormSubmitResult:
        return await self._client.form_submit(form=self.name)

    async def close(self) -> None:
        await self._client.form_close(form=self.name)

    async def states(self, timeout: float | None = None) -> AsyncIterator[FieldState | FormState]:
        while (state := await self.next_state(timeout)) is not None:
            yield state

    async def next_state(self, timeout: float | None = None) -> FieldState | FormState | None:
        event = await self._client.next_event(timeout, self.model.owns)
        return None if event is None else self.model.apply(event)

    async def wait(self, condition: Callable[[AsyncForm], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or await self.next_state(remaining) is None:
                raise TimeoutError(f"form {self.name} did not reach the awaited state within {timeout} s")


class OpeningForm:
    """What `AsyncClient.form()` returns: `await` it for the form, or `async with` it to close the form after."""

    def __init__(self, client: AsyncClient, name: str) -> None:
        self._client = client
        self._name = name
        self._form: AsyncForm | None = None

    async def _open(self) -> AsyncForm:
        self._form = AsyncForm(self._client, self._name, await self._client.form_open(form=self._name))
        return self._form

    def __await__(self) -> Generator[Any, None, AsyncForm]:
        return self._open().__await__()

    async def __aenter__(self) -> AsyncForm:
        return await self._open()

    async def __aexit__(self, *_: object) -> None:
        if self._form is not None:
            await self._form.close()
