"""A real mail system for the email tests: Debian's msmtp-mta as rosterd's `[Mail] Sendmail=`, relaying to a
throwaway SMTP server on 127.0.0.1 (Debian's python3-aiosmtpd) that runs in this process and keeps what it receives,
as Tests/RosterRuntimeTests/SendmailRealMailTests.swift points msmtp at its own."""
from __future__ import annotations

import asyncio
import email
import email.policy
import re
import socket
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

SENDMAIL = Path("/usr/sbin/sendmail")
FROM = "roster@example.org"
CODE = re.compile(r"(?<!\d)(\d{6})(?!\d)")
LINK = re.compile(r"(https?://\S+/recover\?\S+)")


def free_port() -> int:
    """A loopback port nobody listens on now, for a gateway that must be where the daemon's links point."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Mail:
    """One message as the SMTP server received it: the envelope's recipients and the parsed message."""

    recipients: tuple[str, ...]
    message: EmailMessage

    @property
    def text(self) -> str:
        body = self.message.get_body(preferencelist=("plain",))
        assert body is not None, self.message
        content: str = body.get_content()  # type: ignore[attr-defined]  # EmailMessage parts, untyped in typeshed
        return content

    @property
    def code(self) -> str:
        found = CODE.search(self.text)
        assert found is not None, self.text
        return found.group(1)

    @property
    def link(self) -> str:
        found = LINK.search(self.text)
        assert found is not None, self.text
        return found.group(1)


class _Keeper:
    """aiosmtpd's handler: every message is kept, in order of arrival."""

    def __init__(self, inbox: MailSystem) -> None:
        self.inbox = inbox

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.inbox.received(Mail(tuple(envelope.rcpt_tos), message))
        return "250 Message accepted"


class MailSystem:
    """The SMTP server on its own thread and loop, msmtp's configuration and the sendmail for rosterd's clean
    environment (a script that hands msmtp its configuration by option), and the port the gateway is to take so
    that the daemon's links (`BaseURL=`) lead to it."""

    def __init__(self, directory: Path) -> None:
        if not SENDMAIL.exists() or not Path("/usr/lib/python3/dist-packages/aiosmtpd").is_dir():
            pytest.fail("msmtp-mta or python3-aiosmtpd is missing (make test-deps installs them)")
        from aiosmtpd.smtp import SMTP

        self._mail: list[Mail] = []
        self._taken: set[int] = set()
        self._arrived = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(self._loop.create_server(
            lambda: SMTP(_Keeper(self), hostname="smtp.test.invalid"), "127.0.0.1", 0), self._loop).result(10)
        self._server = server
        self.port = int(server.sockets[0].getsockname()[1])
        configuration = directory / "msmtprc"
        configuration.write_text(f"account default\nhost 127.0.0.1\nport {self.port}\nauth off\ntls off\n")
        configuration.chmod(0o600)
        self.sendmail = directory / "sendmail"
        self.sendmail.write_text(f"#!/bin/sh\nexec {SENDMAIL} -C '{configuration}' \"$@\"\n")
        self.sendmail.chmod(0o755)
        self.web_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.web_port}"

    def config(self) -> str:
        """rosterd.conf's `[Mail]` for this mail system."""
        return f"[Mail]\nSendmail={self.sendmail}\nFrom={FROM}\nBaseURL={self.base_url}\n"

    def received(self, mail: Mail) -> None:
        with self._arrived:
            self._mail.append(mail)
            self._arrived.notify_all()

    def all(self) -> list[Mail]:
        with self._arrived:
            return list(self._mail)

    def next_to(self, recipient: str, containing: str = "", timeout: float = 30) -> Mail:
        """The first message to `recipient` whose text holds `containing` and that no earlier call returned; waits
        for it (the daemon hands mail off after answering, and retries a failed hand-off later)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for index, mail in enumerate(self._mail):
                    if index not in self._taken and recipient in mail.recipients and containing in mail.text:
                        self._taken.add(index)
                        return mail
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"no mail to {recipient} containing {containing!r} within {timeout} s; "
                                f"received: {[(m.recipients, m.message['Subject']) for m in self._mail]}")
                self._arrived.wait(left)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _close(self) -> None:
        # msmtp may leave a session open; its handler is cancelled and awaited so that none is destroyed pending.
        self._server.close()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
