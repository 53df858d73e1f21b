"""Python clients for rosterd: `roster.Client` (blocking) and `roster.AsyncClient` (asyncio).

Each has one method per RPC method, named by it with `_` for `.` and taking keyword params
(`client.users_register(username=…, password=…)`), returning the answer's result. A refusal raises
`roster.RosterError` (`.reason`, `.code`, `.data`, `.message`; `roster.PasskeyRejected` adds `.why`); the end of
the connection raises `roster.ConnectionLost`. Events come from `client.events()`; `client.form("register")`
follows one form. The wire protocol is protocol.md in the Roster repository.
"""
from ._generated import METHODS
from ._socket import default_socket_path
from .async_client import AsyncClient
from .client import Client
from .errors import PASSKEY_REJECTIONS, ConnectionLost, PasskeyRejected, PasskeyRejection, RosterError
from .events import (Event, FieldEvent, FormEvent, ResultsEvent, SessionEvent, SubmitEvent, UnknownEvent,
                     parse_event)
from .forms import AsyncForm, FieldState, Form, FormState
from .types import (Contact, ContactCard, ContactMatch, FieldSnapshot, FoundContact, ImportRejection, MailCounts, MailKind,
                    MailListing, MailStatus, MethodDescription, PasskeyInfo, User)

__all__ = [
    "METHODS", "AsyncClient", "AsyncForm", "Client", "ConnectionLost", "Contact", "ContactCard", "ContactMatch", "Event", "FieldEvent",
    "FoundContact",
    "FieldSnapshot", "FieldState", "Form", "FormEvent", "FormState", "ImportRejection", "MailCounts", "MailKind",
    "MailListing", "MailStatus", "MethodDescription", "PASSKEY_REJECTIONS", "PasskeyInfo", "PasskeyRejected",
    "PasskeyRejection",
    "ResultsEvent", "RosterError", "SessionEvent", "SubmitEvent", "UnknownEvent", "User", "default_socket_path",
    "parse_event",
]
__version__ = "0.1.0"
