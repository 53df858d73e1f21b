#!/usr/bin/env python3
"""A small rosterd client using only the standard library.

    with RosterClient() as roster:                  # $ROSTER_SOCKET or the default path
        roster.call("session.hello", {"locale": "en"})
        roster.call("form.open", {"form": "register"})
        roster.call("form.input", {"form": "register", "field": "username", "value": "alice1"})
        for event in roster.events(timeout=5):      # events as an iterator
            print(event)

Run it as a script for a demo: `python3 roster_client.py [SOCKET] [USERNAME]` checks USERNAME in the
register form and prints every event until the final verdict.
"""
import json
import os
import select
import socket
import sys


class RosterError(Exception):
    """A JSON-RPC error answer; `reason` is the stable snake_case code, `message` is localized."""

    def __init__(self, error):
        self.code = error.get("code")
        self.message = error.get("message", "")
        self.data = error.get("data") or {}
        self.reason = self.data.get("reason", "")
        super().__init__(f"{self.message} ({self.reason})")


def default_socket_path():
    """The socket rosterd and rosterctl agree on: $ROSTER_SOCKET, then the system or per-user default."""
    if os.environ.get("ROSTER_SOCKET"):
        return os.environ["ROSTER_SOCKET"]
    if os.geteuid() == 0:
        return "/run/roster/roster.sock"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/run/user/%d" % os.getuid()), "roster", "roster.sock")


class RosterClient:
    """One connection (one session). Answers are matched by id; events seen on the way are queued."""

    def __init__(self, path=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path or default_socket_path())
        self.buffer = b""
        self.next_id = 1
        self.queued_events = []
        self.answers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()

    def call(self, method, params=None, timeout=30):
        """Sends a request and returns its result, or raises RosterError."""
        request_id = self.next_id
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        self.sock.sendall(line.encode() + b"\n")
        while request_id not in self.answers:
            message = self._read(timeout)
            if message is None:
                raise TimeoutError(f"no answer to {method} within {timeout} s")
            self._sort(message)
        answer = self.answers.pop(request_id)
        if "error" in answer:
            raise RosterError(answer["error"])
        return answer["result"]

    def events(self, timeout=None):
        """Yields event params as they arrive; stops after `timeout` seconds of silence (None: never)."""
        while True:
            if self.queued_events:
                yield self.queued_events.pop(0)
                continue
            message = self._read(timeout)
            if message is None:
                return
            self._sort(message)

    def _sort(self, message):
        if message.get("method") == "event":
            self.queued_events.append(message.get("params", {}))
        elif isinstance(message.get("id"), int):
            self.answers[message["id"]] = message

    def _read(self, timeout):
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.sock], [], [], timeout)
            if not ready:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("rosterd closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line) if line.strip() else self._read(timeout)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else None
    username = sys.argv[2] if len(sys.argv) > 2 else "alice1"
    with RosterClient(path) as roster:
        hello = roster.call("session.hello", {"locale": "en", "client": "roster_client.py"})
        print(f"connected to {hello['server']} {hello['version']}")
        roster.call("form.open", {"form": "register"})
        roster.call("form.input", {"form": "register", "field": "username", "value": username})
        for event in roster.events(timeout=5):
            print(json.dumps(event, ensure_ascii=False))
            if event.get("field") == "username" and event.get("state") in ("valid", "invalid"):
                break
        try:
            roster.call("no.such")
        except RosterError as error:
            print(f"error: {error.reason}")


if __name__ == "__main__":
    main()
