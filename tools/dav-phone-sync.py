#!/usr/bin/python3
"""What a phone does to keep an address book in sync, for roster-bench's dav-sync scenario: one CardDAV book, one
kept-alive HTTP connection, driven line by line on stdin so that roster-bench times each step from outside and
this process's start-up is never in a figure.

    dav-phone-sync.py BOOK_URL USERNAME PASSWORD

Commands (one per line; each answer is one line, `ok ...` or `error ...`):
    init    PROPFIND the book's getctag and sync-token, then REPORT sync-collection from nothing until no 507 is
            left: the token a phone keeps after its first sync. Answers `ok HREFS`.
    change  GET one card, change its FN and PUT it back with If-Match (another device's edit). Answers `ok HREF`.
    sync    What a phone does next: PROPFIND depth 0 getctag (and sync-token); if it moved, REPORT sync-collection
            from the kept token, then addressbook-multiget of the changed hrefs. Answers `ok CHANGED BYTES`.
Standard library only (Debian's python3), so it runs with the system Python.
"""
from __future__ import annotations

import base64
import http.client
import sys
import urllib.parse
import xml.etree.ElementTree as ET

DAV = "DAV:"
CARD = "urn:ietf:params:xml:ns:carddav"
CS = "http://calendarserver.org/ns/"

PROPFIND_CTAG = (b'<?xml version="1.0" encoding="utf-8"?>'
                 b'<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/">'
                 b'<d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>')


def sync_report(token: str | None) -> bytes:
    kept = f"<d:sync-token>{token}</d:sync-token>" if token else "<d:sync-token/>"
    return ('<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:">'
            f"{kept}<d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>").encode()


def multiget(hrefs: list[str]) -> bytes:
    listed = "".join(f"<d:href>{href}</d:href>" for href in hrefs)
    return ('<?xml version="1.0" encoding="utf-8"?>'
            '<card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">'
            f"<d:prop><d:getetag/><card:address-data/></d:prop>{listed}</card:addressbook-multiget>").encode()


class Phone:
    def __init__(self, url: str, username: str, password: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path if parts.path.endswith("/") else parts.path + "/"
        secret = base64.b64encode(f"{username}:{password}".encode()).decode()
        self.headers = {"Authorization": f"Basic {secret}", "User-Agent": "roster-bench-phone/1.0"}
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        self.ctag: str | None = None
        self.token: str | None = None
        self.hrefs: list[str] = []
        self.edits = 0

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        sent = {**self.headers, **(headers or {})}
        if body is not None:
            sent.setdefault("Content-Type", "application/xml; charset=utf-8")
        for attempt in (0, 1):
            try:
                self.connection.request(method, path, body=body, headers=sent)
                response = self.connection.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                return response.status, {k.lower(): v for k, v in response.getheaders()}, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A server that closed the kept-alive connection between requests: once more on a new one.
                self.connection.close()
                if attempt == 1:
                    raise
            except Exception:
                self.connection.close()
                raise
        raise AssertionError("unreachable")

    def propfind_ctag(self) -> tuple[str | None, str | None]:
        status, _, data = self.request("PROPFIND", self.path, PROPFIND_CTAG, {"Depth": "0"})
        if status != 207:
            raise RuntimeError(f"PROPFIND getctag: {status} {data[:200]!r}")
        root = ET.fromstring(data)
        return root.findtext(f".//{{{CS}}}getctag"), root.findtext(f".//{{{DAV}}}sync-token")

    def sync_collection(self, token: str | None) -> tuple[list[str], list[str], str | None, bool]:
        """Changed and removed hrefs since `token`, the new token, and whether a 507 says more follow."""
        status, _, data = self.request("REPORT", self.path, sync_report(token), {"Depth": "0"})
        if status != 207:
            raise RuntimeError(f"REPORT sync-collection: {status} {data[:200]!r}")
        root = ET.fromstring(data)
        changed: list[str] = []
        removed: list[str] = []
        more = False
        book = urllib.parse.unquote(self.path)
        for response in root.findall(f"{{{DAV}}}response"):
            href = response.findtext(f"{{{DAV}}}href") or ""
            plain = urllib.parse.unquote(urllib.parse.urlsplit(href).path)
            status_line = response.findtext(f"{{{DAV}}}status") or ""
            if plain.rstrip("/") == book.rstrip("/"):
                more = more or " 507 " in status_line + " "
            elif " 404 " in status_line + " ":
                removed.append(href)
            else:
                changed.append(href)
        return changed, removed, root.findtext(f"{{{DAV}}}sync-token"), more

    def init(self) -> str:
        self.ctag, _ = self.propfind_ctag()
        token = None
        while True:
            changed, _, token, more = self.sync_collection(token)
            self.hrefs.extend(changed)
            if not more:
                break
        self.token = token
        self.hrefs.sort()
        return f"ok {len(self.hrefs)}"

    def change(self) -> str:
        href = self.hrefs[self.edits % len(self.hrefs)]
        self.edits += 1
        status, headers, data = self.request("GET", href)
        if status != 200:
            raise RuntimeError(f"GET {href}: {status}")
        text = data.decode()
        lines = [f"FN:Changed {self.edits} Card" if line.startswith("FN") else line for line in text.split("\r\n")]
        extra = {"Content-Type": "text/vcard; charset=utf-8"}
        if "etag" in headers:
            extra["If-Match"] = headers["etag"]
        status, _, data = self.request("PUT", href, "\r\n".join(lines).encode(), extra)
        if status not in (200, 201, 204):
            raise RuntimeError(f"PUT {href}: {status} {data[:200]!r}")
        return f"ok {href}"

    def sync(self) -> str:
        ctag, _ = self.propfind_ctag()
        if ctag is not None and ctag == self.ctag:
            return "ok 0 0"
        self.ctag = ctag
        changed: list[str] = []
        token = self.token
        while True:
            more_changed, _, token, more = self.sync_collection(token)
            changed.extend(more_changed)
            if not more:
                break
        self.token = token
        size = 0
        if changed:
            status, _, data = self.request("REPORT", self.path, multiget(changed), {"Depth": "1"})
            if status != 207:
                raise RuntimeError(f"REPORT addressbook-multiget: {status} {data[:200]!r}")
            size = len(data)
            if b"BEGIN:VCARD" not in data:
                raise RuntimeError(f"the multiget brought no card: {data[:300]!r}")
        return f"ok {len(changed)} {size}"


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    phone = Phone(sys.argv[1], sys.argv[2], sys.argv[3])
    commands = {"init": phone.init, "change": phone.change, "sync": phone.sync}
    for line in sys.stdin:
        command = commands.get(line.strip())
        try:
            answer = command() if command else f"error unknown command {line.strip()!r}"
        except Exception as error:  # noqa: BLE001 - said to roster-bench, which stops
            answer = f"error {type(error).__name__}: {error}".replace("\n", " ")
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
