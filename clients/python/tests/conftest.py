"""Each test gets the real rosterd (built by `swift build`) on a temporary socket, database and empty config."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import pytest

import roster
from mail_support import MailSystem, free_port

REPOSITORY = Path(__file__).resolve().parents[3]


def rosterd_binary() -> Path:
    """`$ROSTERD`, else the debug build next to this checkout."""
    return Path(os.environ.get("ROSTERD") or REPOSITORY / ".build" / "debug" / "rosterd")


class Daemon:
    """A rosterd process of its own, like Tests/rosterdTests/TestDaemon.swift starts, with `config` as its
    rosterd.conf."""

    def __init__(self, directory: Path, config: str = "") -> None:
        binary = rosterd_binary()
        if not binary.is_file():
            pytest.fail(f"{binary} is missing: run `swift build` first (or set ROSTERD)")
        self.directory = directory
        self.socket_path = str(directory / "run" / "roster.sock")
        (directory / "rosterd.conf").write_text(config)
        self.stderr = (directory / "rosterd.stderr").open("wb")
        self.process = subprocess.Popen(
            [str(binary), "--socket", self.socket_path, "--database", str(directory / "state" / "roster.db"),
             "--config", str(directory / "rosterd.conf")],
            env={"PATH": "/usr/bin:/bin", "HOME": str(directory)}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=self.stderr)
        self._wait_until_listening()

    def _wait_until_listening(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"rosterd exited with {self.process.returncode}: {self.log()}")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(self.socket_path)
                    return
                except OSError:
                    time.sleep(0.01)
        pytest.fail(f"rosterd did not listen within {timeout} s: {self.log()}")

    def log(self) -> str:
        return (self.directory / "rosterd.stderr").read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self.stderr.close()


@contextmanager
def started_daemon(config: str = "") -> Iterator[Daemon]:
    """A Daemon in a temporary directory, killed and removed at the end."""
    with tempfile.TemporaryDirectory(prefix="roster-pytest-") as directory:
        started = Daemon(Path(directory), config)
        try:
            yield started
        finally:
            started.kill()


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    with started_daemon() as started:
        yield started


def connect(daemon: Daemon, *, debounce_ms: int | None = 0) -> roster.Client:
    """A blocking client in English; debounce 0 keeps form tests fast (None keeps the daemon's 500 ms)."""
    client = roster.Client(daemon.socket_path, timeout=10)
    client.session_hello(locale="en", client="pytest",
                         timing=None if debounce_ms is None else {"debounce_ms": debounce_ms, "throttle_ms": 0})
    return client


@pytest.fixture
def client(daemon: Daemon) -> Iterator[roster.Client]:
    with connect(daemon) as connected:
        yield connected


class Backend(Protocol):
    """What a gateway is started in front of: a socket, and a directory for its log."""

    directory: Path
    socket_path: str


class Gateway:
    """A real roster-web (`python -m roster.web`) on a free loopback port, in front of `daemon`."""

    def __init__(self, daemon: Backend, *extra: str) -> None:
        self.log_path = daemon.directory / f"roster-web-{time.monotonic_ns()}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "roster.web", "--listen", "127.0.0.1:0", "--socket", daemon.socket_path, *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode()
        if not line.startswith("roster-web serves "):
            self.stop()
            pytest.fail(f"roster-web did not start: {line!r} {self.log()}")
        self.url = line.split()[2].rstrip("/")
        self.host = self.url.removeprefix("http://")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._log.close()


@contextmanager
def started_gateway(daemon: Backend, *extra: str) -> Iterator[Gateway]:
    """A Gateway with `extra` arguments, stopped at the end."""
    started = Gateway(daemon, *extra)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def gateway(daemon: Daemon) -> Iterator[Gateway]:
    with started_gateway(daemon) as started:
        yield started


# The email tests need the daemon's side of email (protocol.md §Email). Against a rosterd without it they are skipped
# with this said in the summary (`-rs`), never passed: once the daemon has the methods every one of them runs.
MAIL_METHOD = "account.email_verify"


def require_mail_methods(daemon: Daemon) -> None:
    """Skips the test, saying why, unless `daemon` knows the email methods."""
    with roster.Client(daemon.socket_path, timeout=10) as client:
        known = {method["name"] for method in client.rpc_describe()["methods"]}
    if MAIL_METHOD not in known:
        pytest.skip(f"{rosterd_binary()} does not know {MAIL_METHOD} yet: the daemon's side of email is not in it")


@pytest.fixture
def mail_system() -> Iterator[MailSystem]:
    with tempfile.TemporaryDirectory(prefix="roster-mail-") as directory:
        system = MailSystem(Path(directory))
        try:
            yield system
        finally:
            system.stop()


@pytest.fixture
def mail_daemon(mail_system: MailSystem) -> Iterator[Daemon]:
    """A rosterd that mails through `mail_system`, its links pointing at `mail_gateway`; it must know the email
    methods (see require_mail_methods)."""
    with started_daemon(mail_system.config()) as started:
        require_mail_methods(started)
        yield started


@pytest.fixture
def mail_gateway(mail_daemon: Daemon, mail_system: MailSystem) -> Iterator[Gateway]:
    """The gateway in front of `mail_daemon`, on the port the mailed links name."""
    with started_gateway(mail_daemon, "--listen", f"127.0.0.1:{mail_system.web_port}") as started:
        yield started


# The passkey tests need the daemon's side of passkeys (CONTRACT.md §13). As with email, against a rosterd without it
# they are skipped with this said in the summary, never passed; once it has the methods every one of them runs.
PASSKEY_METHODS = frozenset({"passkey.register_begin", "passkey.register_finish", "passkey.list", "passkey.remove",
                             "auth.passkey_begin", "auth.passkey_finish"})
_described_by_binary: dict[tuple[str, float], frozenset[str]] = {}


def described_methods() -> frozenset[str]:
    """The methods `rosterd_binary()` describes, asked once per build of it: a daemon of its own with an empty
    config, since one without passkeys refuses to start with a `[WebAuthn]` section."""
    binary = rosterd_binary()
    key = (str(binary), binary.stat().st_mtime if binary.is_file() else 0.0)
    if key not in _described_by_binary:
        with started_daemon() as probe, roster.Client(probe.socket_path, timeout=10) as client:
            _described_by_binary[key] = frozenset(method["name"] for method in client.rpc_describe()["methods"])
    return _described_by_binary[key]


def require_passkey_methods() -> None:
    """Skips the test, saying why, unless rosterd knows every passkey method."""
    missing = sorted(PASSKEY_METHODS - described_methods())
    if missing:
        pytest.skip(f"{rosterd_binary()} does not know {missing[0]} yet: the daemon's side of passkeys is not in it")


def webauthn_config(origins: tuple[str, ...] = ("http://localhost:8080",), rp_id: str = "localhost",
                    rp_name: str = "Roster", extra: str = "") -> str:
    """A rosterd.conf whose `[WebAuthn]` section makes it the relying party `rp_id` for pages from `origins` (a
    browser test names the gateway's own origin, http://localhost:PORT), then `extra` (other sections)."""
    return f"[WebAuthn]\nRPID={rp_id}\nRPName={rp_name}\nOrigins={' '.join(origins)}\n{extra}"


@pytest.fixture
def passkey_daemon() -> Iterator[Daemon]:
    """A rosterd that knows passkeys, the relying party `localhost` for http://localhost:8080 (the software
    authenticator's default origin)."""
    require_passkey_methods()
    with started_daemon(webauthn_config()) as started:
        yield started


@pytest.fixture
def passkey_web_daemon() -> Iterator[tuple[Daemon, int]]:
    """A rosterd that knows passkeys, the relying party `localhost` for the origin http://localhost:PORT of the
    port the gateway of `passkey_gateway` is to take (a WebAuthn RP ID localhost is honoured by Chromium only on
    a localhost origin, not on 127.0.0.1)."""
    require_passkey_methods()
    port = free_port()
    with started_daemon(webauthn_config(origins=(f"http://localhost:{port}",))) as started:
        yield started, port


@pytest.fixture
def passkey_gateway(passkey_web_daemon: tuple[Daemon, int]) -> Iterator[Gateway]:
    """The gateway in front of `passkey_web_daemon`, on 127.0.0.1:PORT; browsers open it as http://localhost:PORT."""
    daemon, port = passkey_web_daemon
    with started_gateway(daemon, "--listen", f"127.0.0.1:{port}") as started:
        yield started
