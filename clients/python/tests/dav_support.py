"""What the CardDAV tests share: a rosterd that knows the CardDAV methods (CONTRACT.md §14), a user with an app
password, and HTTP requests to roster-web's /dav/ with HTTP Basic credentials."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from lxml import etree

import roster
from conftest import Daemon, Gateway, described_methods, rosterd_binary

# Against a rosterd without them the CardDAV tests are skipped with this said in the summary, never passed.
DAV_METHODS = frozenset({"contacts.changes", "contacts.get_vcard", "contacts.get_vcards", "contacts.put_vcard",
                         "auth.dav_login", "account.app_password_create", "account.app_password_list",
                         "account.app_password_remove"})
NS = {"d": "DAV:", "card": "urn:ietf:params:xml:ns:carddav", "cs": "http://calendarserver.org/ns/"}


def require_dav_methods() -> None:
    missing = sorted(DAV_METHODS - described_methods())
    if missing:
        pytest.skip(f"{rosterd_binary()} does not know {missing[0]} yet: the daemon's side of CardDAV is not in it")


@dataclass
class DavUser:
    """A registered user: the account password, an app password, and a logged-in socket client."""

    username: str
    password: str
    app_password: str
    client: roster.Client


def make_user(daemon: Daemon, username: str, password: str = "secret1") -> DavUser:
    client = roster.Client(daemon.socket_path, timeout=30)
    client.session_hello(locale="en", client="pytest")
    client.users_register(username=username, password=password)
    client.auth_login(username=username, password=password)
    created = client.call("account.app_password_create", {"name": "pytest"})
    return DavUser(username, password, created["password"], client)


@pytest.fixture
def dav_user(daemon: Daemon) -> Iterator[DavUser]:
    require_dav_methods()
    user = make_user(daemon, "alice1")
    try:
        yield user
    finally:
        user.client.close()


def book(gateway: Gateway, user: str = "alice1") -> str:
    return f"{gateway.url}/dav/addressbooks/{user}/contacts/"


def card(uid: str, name: str, version: str = "3.0", extra: str = "") -> str:
    surname, _, given = name.partition(" ")
    return (f"BEGIN:VCARD\r\nVERSION:{version}\r\nUID:{uid}\r\nFN:{name}\r\nN:{given};{surname};;;\r\n{extra}"
            "END:VCARD\r\n")


class Dav:
    """An HTTP client of the gateway's /dav/ as `user`, with its app password unless told otherwise."""

    def __init__(self, gateway: Gateway, username: str, password: str) -> None:
        self.gateway = gateway
        self.session = aiohttp.ClientSession(auth=aiohttp.BasicAuth(username, password),
                                             headers={"User-Agent": "pytest-dav/1.0"})

    async def __aenter__(self) -> Dav:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.session.close()

    async def request(self, method: str, url: str, body: bytes | str | None = None,
                      headers: dict[str, str] | None = None) -> tuple[aiohttp.ClientResponse, bytes]:
        full = url if url.startswith("http") else self.gateway.url + url
        data = body.encode() if isinstance(body, str) else body
        async with self.session.request(method, full, data=data, headers=headers or {},
                                        allow_redirects=False) as response:
            return response, await response.read()

    async def xml(self, method: str, url: str, body: str, depth: str | None = None,
                  expect: int = 207) -> Any:
        headers = {"Content-Type": "application/xml; charset=utf-8"}
        if depth is not None:
            headers["Depth"] = depth
        response, data = await self.request(method, url, body, headers)
        assert response.status == expect, (response.status, data)
        return etree.fromstring(data)


def responses(root: Any) -> dict[str, Any]:
    """A multistatus's responses by href."""
    return {r.findtext("d:href", namespaces=NS): r for r in root.findall("d:response", NS)}


def props(response: Any, status: int = 200) -> dict[str, Any]:
    """The properties of one response's propstat with `status`, by Clark name."""
    found: dict[str, Any] = {}
    for propstat in response.findall("d:propstat", NS):
        if f" {status} " in (propstat.findtext("d:status", namespaces=NS) or "") + " ":
            for prop in propstat.find("d:prop", NS):
                found[prop.tag] = prop
    return found


def status_of(response: Any) -> int:
    return int((response.findtext("d:status", namespaces=NS) or "x 0").split()[1])
