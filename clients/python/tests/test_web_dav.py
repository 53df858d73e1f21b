"""roster-web's CardDAV against the real rosterd, with aiohttp's client: discovery, log-in, every method and its
statuses, the reports, and the bounds. What a request changes is checked through the socket."""
from __future__ import annotations

from typing import Any, Literal

import aiohttp
import pytest

from conftest import Daemon, Gateway
from dav_support import NS, Dav, DavUser, book, card, dav_user, make_user, props, responses, status_of
from roster.web.davxml import MAX_MULTIGET_HREFS, SYNC_PREFIX
from test_web_gateway import run

__all__ = ["dav_user"]
BOOK = "/dav/addressbooks/alice1/contacts/"
PROPFIND_BOOK = """<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"
  xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:resourcetype/><d:displayname/><cs:getctag/>
  <d:sync-token/><card:supported-address-data/><d:current-user-privilege-set/><d:supported-report-set/>
  <d:current-user-principal/><x:unknown xmlns:x="urn:example"/></d:prop></d:propfind>"""
ETAG_PROPS = '<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getcontenttype/></d:prop></d:propfind>'


def by_socket(user: DavUser) -> dict[str, Any]:
    """The user's contacts as rosterd has them, by uid (the first page of a full contacts.changes)."""
    answer = user.client.call("contacts.changes", {"limit": 10000})
    return {contact["uid"]: contact for contact in answer["changed"]}


def test_discovery_leads_from_the_well_known_address_to_the_book(daemon: Daemon, gateway: Gateway,
                                                                 dav_user: DavUser) -> None:
    async def flow() -> None:
        async with Dav(gateway, dav_user.username, dav_user.app_password) as dav:
            response, _ = await dav.request("GET", "/.well-known/carddav")
            assert response.status == 301 and response.headers["Location"] == "/dav/"
            response, _ = await dav.request("PROPFIND", "/.well-known/carddav")
            assert response.status == 301
            response, _ = await dav.request("OPTIONS", BOOK)
            assert response.status == 200
            assert response.headers["DAV"] == "1, 3, addressbook"
            assert {"PROPFIND", "REPORT", "PUT", "DELETE"} <= set(response.headers["Allow"].split(", "))
            root = await dav.xml("PROPFIND", "/dav/", '<propfind xmlns="DAV:"><prop><current-user-principal/>'
                                 "</prop></propfind>", depth="0")
            principal = props(responses(root)["/dav/"])["{DAV:}current-user-principal"]
            assert principal.findtext("d:href", namespaces=NS) == "/dav/principals/alice1/"
            root = await dav.xml("PROPFIND", "/dav/principals/alice1/", """<propfind xmlns="DAV:"
                xmlns:C="urn:ietf:params:xml:ns:carddav"><prop><C:addressbook-home-set/><principal-URL/>
                <resourcetype/></prop></propfind>""", depth="0")
            found = props(responses(root)["/dav/principals/alice1/"])
            assert found["{urn:ietf:params:xml:ns:carddav}addressbook-home-set"].findtext(
                "d:href", namespaces=NS) == "/dav/addressbooks/alice1/"
            assert found["{DAV:}principal-URL"].findtext("d:href", namespaces=NS) == "/dav/principals/alice1/"
            assert found["{DAV:}resourcetype"].find("d:principal", NS) is not None
            root = await dav.xml("PROPFIND", "/dav/addressbooks/alice1/", PROPFIND_BOOK, depth="1")
            listed = responses(root)
            assert set(listed) == {"/dav/addressbooks/alice1/", BOOK}
            found = props(listed[BOOK])
            assert found["{DAV:}resourcetype"].find("card:addressbook", NS) is not None
            assert found["{DAV:}displayname"].text == "Contacts"
            assert found["{http://calendarserver.org/ns/}getctag"].text
            assert found["{DAV:}sync-token"].text.startswith(SYNC_PREFIX)
            versions = {e.get("version") for e in found["{urn:ietf:params:xml:ns:carddav}supported-address-data"]}
            assert versions == {"3.0", "4.0"}
            privileges = {p[0].tag for p in found["{DAV:}current-user-privilege-set"]}
            assert {"{DAV:}read", "{DAV:}write-content", "{DAV:}bind", "{DAV:}unbind"} <= privileges
            reports = {r.find("d:report", NS)[0].tag for r in found["{DAV:}supported-report-set"]}
            assert reports == {"{urn:ietf:params:xml:ns:carddav}addressbook-multiget",
                               "{urn:ietf:params:xml:ns:carddav}addressbook-query", "{DAV:}sync-collection"}
            assert set(props(listed[BOOK], 404)) == {"{urn:example}unknown"}
            response, body = await dav.request("PROPFIND", BOOK, PROPFIND_BOOK, {"Depth": "infinity"})
            assert response.status == 403 and b"propfind-finite-depth" in body
            root = await dav.xml("PROPFIND", BOOK, '<propfind xmlns="DAV:"><propname/></propfind>', depth="0")
            assert "{http://calendarserver.org/ns/}getctag" in props(responses(root)[BOOK])
            root = await dav.xml("PROPFIND", BOOK, "", depth="0")
            assert "{DAV:}resourcetype" in props(responses(root)[BOOK])
    run(flow())


def test_basic_log_in_is_checked_by_rosterd_and_one_user_never_reaches_anothers_book(
        daemon: Daemon, gateway: Gateway, dav_user: DavUser) -> None:
    bob = make_user(daemon, "bobby1")
    try:
        async def flow() -> None:
            async with Dav(gateway, "alice1", "wrong-password") as wrong:
                response, body = await wrong.request("PROPFIND", BOOK, "", {"Depth": "0"})
                assert response.status == 401
                assert response.headers["WWW-Authenticate"].startswith('Basic realm="Roster"')
                assert b"app password" in body
            async with Dav(gateway, "alice1", dav_user.app_password) as alice:
                response, _ = await alice.request("PROPFIND", BOOK, "", {"Depth": "0"})
                assert response.status == 207
                for path in ("/dav/addressbooks/bobby1/contacts/", "/dav/principals/bobby1/",
                             "/dav/addressbooks/bobby1/contacts/x.vcf"):
                    response, _ = await alice.request("PROPFIND", path, "", {"Depth": "0"})
                    assert response.status == 403, path
                response, _ = await alice.request("PUT", "/dav/addressbooks/bobby1/contacts/x.vcf", card("x", "X Y"))
                assert response.status == 403
            # Without TOTP the account password opens CardDAV too.
            async with Dav(gateway, "bobby1", bob.password) as bob_dav:
                response, _ = await bob_dav.request("PROPFIND", "/dav/addressbooks/bobby1/contacts/", "",
                                                    {"Depth": "0"})
                assert response.status == 207
            async with aiohttp.ClientSession() as anonymous:
                async with anonymous.request("PROPFIND", gateway.url + BOOK) as response:
                    assert response.status == 401 and "WWW-Authenticate" in response.headers
        run(flow())
        assert bob.client.call("contacts.changes", {})["changed"] == []
        assert "wrong-password" not in gateway.log() and dav_user.app_password not in gateway.log()
    finally:
        bob.client.close()


def test_a_removed_app_password_stops_opening_the_book_once_its_session_is_ended(
        daemon: Daemon, gateway: Gateway, dav_user: DavUser) -> None:
    """As protocol.md "App passwords" says today: removing an app password stops new log-ins with it, and the
    session it opened ends when the owner ends it in session.list (the account page's Sessions table)."""
    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            response, _ = await dav.request("PROPFIND", BOOK, "", {"Depth": "0"})
            assert response.status == 207
            listed = dav_user.client.call("account.app_password_list", {})["items"]
            dav_user.client.call("account.app_password_remove", {"id": listed[0]["id"]})
            dav_user.client.call("session.revoke_others", {})
            response, _ = await dav.request("PROPFIND", BOOK, "", {"Depth": "0"})
            assert response.status == 401
    run(flow())


def test_put_get_head_and_delete_keep_the_bytes_and_honour_their_preconditions(daemon: Daemon, gateway: Gateway,
                                                                               dav_user: DavUser) -> None:
    photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + "QUJD" * 200 + "\r\nX-ROSTER-TEST:kept as sent\r\n"
    first = card("card-1", "Lovelace Ada", extra="EMAIL:ada@example.org\r\nTEL:+44 20 7946 0000\r\n" + photo)
    url = BOOK + "card-1.vcf"

    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            response, _ = await dav.request("PUT", url, first, {"Content-Type": "text/vcard; charset=utf-8",
                                                                "If-None-Match": "*"})
            assert response.status == 201
            etag = response.headers["ETag"]
            assert etag.startswith('"') and etag.endswith('"')
            response, _ = await dav.request("PUT", url, first, {"Content-Type": "text/vcard", "If-None-Match": "*"})
            assert response.status == 412
            response, body = await dav.request("GET", url)
            assert response.status == 200 and body == first.encode()
            assert response.headers["ETag"] == etag and response.content_type == "text/vcard"
            response, body = await dav.request("HEAD", url)
            assert response.status == 200 and body == b"" and response.headers["ETag"] == etag
            response, _ = await dav.request("GET", url, headers={"If-None-Match": etag})
            assert response.status == 304
            second = first.replace("FN:Lovelace Ada", "FN:Ada King")
            response, _ = await dav.request("PUT", url, second, {"Content-Type": "text/vcard", "If-Match": '"stale"'})
            assert response.status == 412
            response, _ = await dav.request("PUT", url, second, {"Content-Type": "text/vcard", "If-Match": etag})
            assert response.status == 204
            new_etag = response.headers["ETag"]
            assert new_etag != etag
            assert by_socket(dav_user)["card-1"]["name"] == "Ada King"
            response, _ = await dav.request("DELETE", url, headers={"If-Match": etag})
            assert response.status == 412
            response, _ = await dav.request("DELETE", url, headers={"If-Match": new_etag})
            assert response.status == 204
            response, _ = await dav.request("GET", url)
            assert response.status == 404
            response, _ = await dav.request("DELETE", url)
            assert response.status == 404
            response, _ = await dav.request("PUT", url, second, {"Content-Type": "text/vcard", "If-Match": "*"})
            assert response.status == 412
            # A card rosterd cannot read is refused with its reason; one under another name than its UID is the
            # resource's name.
            response, body = await dav.request("PUT", BOOK + "bad.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\n"
                                               "END:VCARD\r\n", {"Content-Type": "text/vcard"})
            assert response.status == 403 and b"valid-address-data" in body
            response, _ = await dav.request("PUT", BOOK + "other-name.vcf", card("uid-inside", "Hopper Grace"),
                                            {"Content-Type": "text/vcard"})
            assert response.status == 201
            response, _ = await dav.request("PUT", BOOK + "note.txt", card("n", "N N"), {"Content-Type": "text/vcard"})
            assert response.status == 403
            response, _ = await dav.request("PUT", BOOK + "x.vcf", "hello", {"Content-Type": "text/plain"})
            assert response.status == 415
        assert set(by_socket(dav_user)) == {"other-name"}
    run(flow())


def test_every_request_is_bounded_with_a_clear_status(daemon: Daemon, gateway: Gateway, dav_user: DavUser) -> None:
    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            huge = card("big", "Big Card", extra="NOTE:" + "x" * (1536 * 1024) + "\r\n")
            response, _ = await dav.request("PUT", BOOK + "big.vcf", huge, {"Content-Type": "text/vcard"})
            assert response.status == 413
            response, _ = await dav.request("PROPFIND", BOOK, "<a/>" + " " * (1024 * 1024), {"Depth": "0"})
            assert response.status == 413
            hrefs = "".join(f"<d:href>{BOOK}{n}.vcf</d:href>" for n in range(MAX_MULTIGET_HREFS + 1))
            response, body = await dav.request("REPORT", BOOK, '<card:addressbook-multiget xmlns:d="DAV:" '
                                               'xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/>'
                                               f"</d:prop>{hrefs}</card:addressbook-multiget>")
            assert response.status == 403 and b"1000" in body
            response, body = await dav.request("PROPFIND", BOOK, '<!DOCTYPE x [<!ENTITY e "e">]><propfind '
                                               'xmlns="DAV:"><prop>&e;</prop></propfind>', {"Depth": "0"})
            assert response.status == 400 and b"DOCTYPE" in body
            response, _ = await dav.request("PROPFIND", BOOK, "<propfind", {"Depth": "0"})
            assert response.status == 400
            response, _ = await dav.request("PROPFIND", BOOK, "", {"Depth": "2"})
            assert response.status == 400
            for method in ("MKCOL", "COPY", "MOVE", "LOCK", "POST"):
                response, _ = await dav.request(method, BOOK + "litmus/")
                assert response.status == 405, method
                assert "PROPFIND" in response.headers["Allow"]
            root = await dav.xml("PROPPATCH", BOOK, '<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop>'
                                 "<d:displayname>Mine</d:displayname></d:prop></d:set></d:propertyupdate>")
            assert set(props(responses(root)[BOOK], 403)) == {"{DAV:}displayname"}
            response, _ = await dav.request("GET", "/dav/nowhere/")
            assert response.status == 404
    run(flow())


def multiget(hrefs: list[str]) -> str:
    return ('<card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop>'
            "<d:getetag/><card:address-data/></d:prop>" + "".join(f"<d:href>{h}</d:href>" for h in hrefs)
            + "</card:addressbook-multiget>")


def query(filter_xml: str, limit: int | None = None) -> str:
    limit_xml = "" if limit is None else f"<card:limit><card:nresults>{limit}</card:nresults></card:limit>"
    return ('<card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop>'
            f"<d:getetag/></d:prop>{filter_xml}{limit_xml}</card:addressbook-query>")


def sync(token: str = "", limit: int | None = None, data: bool = False) -> str:
    limit_xml = "" if limit is None else f"<d:limit><d:nresults>{limit}</d:nresults></d:limit>"
    data_xml = "<card:address-data/>" if data else ""
    return ('<d:sync-collection xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">'
            f"<d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>{limit_xml}"
            f"<d:prop><d:getetag/>{data_xml}</d:prop></d:sync-collection>")


def test_multiget_and_query_find_cards_by_href_and_by_fn_email_and_tel(daemon: Daemon, gateway: Gateway,
                                                                      dav_user: DavUser) -> None:
    cards = {"ada": card("ada", "Lovelace Ada", extra="EMAIL:ada@example.org\r\nTEL:+44 20 7946 0001\r\n"),
             "zoe": card("zoe", "Ångström Zoë", "4.0", extra="EMAIL:zoe@work.example\r\nTEL:+1 555 0100\r\n"),
             "bob": card("bob", "Builder Bob", extra="EMAIL:bob@example.org\r\n")}

    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            for uid, text in cards.items():
                response, _ = await dav.request("PUT", f"{BOOK}{uid}.vcf", text, {"Content-Type": "text/vcard"})
                assert response.status == 201
            root = await dav.xml("REPORT", BOOK, multiget([f"{BOOK}ada.vcf", f"{gateway.url}{BOOK}zoe.vcf",
                                                            f"{BOOK}gone.vcf", "/elsewhere.vcf"]), depth="1")
            found = responses(root)
            assert props(found[f"{BOOK}ada.vcf"])["{urn:ietf:params:xml:ns:carddav}address-data"].text \
                == cards["ada"]
            assert props(found[f"{BOOK}zoe.vcf"])["{DAV:}getetag"].text.startswith('"')
            assert status_of(found[f"{BOOK}gone.vcf"]) == 404 and status_of(found["/elsewhere.vcf"]) == 404

            async def matching(filter_xml: str, limit: int | None = None) -> set[str]:
                root = await dav.xml("REPORT", BOOK, query(filter_xml, limit), depth="1")
                return {href for href, r in responses(root).items() if href != BOOK}
            fn = '<card:filter><card:prop-filter name="FN"><card:text-match>{}</card:text-match>' \
                 "</card:prop-filter></card:filter>"
            assert await matching(fn.format("zoË")) == {f"{BOOK}zoe.vcf"}
            assert await matching(fn.format("o")) == {f"{BOOK}ada.vcf", f"{BOOK}zoe.vcf", f"{BOOK}bob.vcf"}
            assert await matching('<card:filter><card:prop-filter name="EMAIL"><card:text-match match-type='
                                  '"equals">BOB@example.org</card:text-match></card:prop-filter></card:filter>') \
                == {f"{BOOK}bob.vcf"}
            assert await matching('<card:filter><card:prop-filter name="TEL"><card:text-match match-type='
                                  '"starts-with">+44</card:text-match></card:prop-filter></card:filter>') \
                == {f"{BOOK}ada.vcf"}
            both = ('<card:filter test="{}"><card:prop-filter name="EMAIL"><card:text-match match-type="ends-with">'
                    "example.org</card:text-match></card:prop-filter><card:prop-filter name=\"TEL\">"
                    "<card:is-not-defined/></card:prop-filter></card:filter>")
            assert await matching(both.format("allof")) == {f"{BOOK}bob.vcf"}
            assert await matching(both.format("anyof")) == {f"{BOOK}ada.vcf", f"{BOOK}bob.vcf"}
            root = await dav.xml("REPORT", BOOK, query(fn.format("o"), limit=2), depth="1")
            listed = responses(root)
            assert len(listed) == 3 and status_of(listed[BOOK]) == 507
            response, body = await dav.request("REPORT", BOOK, query(
                '<card:filter><card:prop-filter name="FN"><card:text-match collation="i;klingon">x'
                "</card:text-match></card:prop-filter></card:filter>"))
            assert response.status == 403 and b"supported-collation" in body
    run(flow())


def test_sync_collection_reports_changes_from_anywhere_and_deletions_and_pages(daemon: Daemon, gateway: Gateway,
                                                                              dav_user: DavUser) -> None:
    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            for n in range(5):
                response, _ = await dav.request("PUT", f"{BOOK}s{n}.vcf", card(f"s{n}", f"Sync Person{n}"),
                                                {"Content-Type": "text/vcard"})
                assert response.status == 201
            root = await dav.xml("REPORT", BOOK, sync(data=True), depth="0")
            first = root.findtext("d:sync-token", namespaces=NS)
            assert first.startswith(SYNC_PREFIX)
            assert {href for href in responses(root)} == {f"{BOOK}s{n}.vcf" for n in range(5)}
            # Changes through the socket (another connection) show in the next sync, with deletions as 404s.
            contacts = by_socket(dav_user)
            dav_user.client.contacts_update(id=contacts["s1"]["id"], name="Renamed One")
            dav_user.client.call("contacts.remove", {"uid": "s2"})
            added = dav_user.client.contacts_add(name="From Socket")
            root = await dav.xml("REPORT", BOOK, sync(first, data=True), depth="0")
            listed = responses(root)
            assert status_of(listed[f"{BOOK}s2.vcf"]) == 404
            assert "FN:Renamed One" in props(listed[f"{BOOK}s1.vcf"])[
                "{urn:ietf:params:xml:ns:carddav}address-data"].text
            new_uid = next(uid for uid, c in by_socket(dav_user).items() if c["id"] == added["contact"]["id"])
            assert f"{BOOK}{new_uid}.vcf" in listed
            assert len(listed) == 3
            second = root.findtext("d:sync-token", namespaces=NS)
            root = await dav.xml("REPORT", BOOK, sync(second), depth="0")
            assert responses(root) == {}
            # Paged by the client's limit: 507 on the book and a token to go on from.
            for n in range(5, 9):
                await dav.request("PUT", f"{BOOK}s{n}.vcf", card(f"s{n}", f"Sync Person{n}"),
                                  {"Content-Type": "text/vcard"})
            seen: set[str] = set()
            token = second
            for _ in range(10):
                root = await dav.xml("REPORT", BOOK, sync(token, limit=3), depth="0")
                listed = responses(root)
                token = root.findtext("d:sync-token", namespaces=NS)
                more = BOOK in listed and status_of(listed.pop(BOOK)) == 507
                seen |= set(listed)
                if not more:
                    break
            assert seen == {f"{BOOK}s{n}.vcf" for n in range(5, 9)}
            response, body = await dav.request("REPORT", BOOK, sync(SYNC_PREFIX + "not-a-token"))
            assert response.status == 403 and b"valid-sync-token" in body
            response, body = await dav.request("REPORT", BOOK, sync("urn:other:1"))
            assert response.status == 403 and b"valid-sync-token" in body
            # The ctag moves with the book.
            before = await dav.xml("PROPFIND", BOOK, '<propfind xmlns="DAV:" xmlns:cs="http://calendarserver.org/'
                                   'ns/"><prop><cs:getctag/></prop></propfind>', depth="0")
            dav_user.client.contacts_add(name="Another One")
            after = await dav.xml("PROPFIND", BOOK, '<propfind xmlns="DAV:" xmlns:cs="http://calendarserver.org/'
                                  'ns/"><prop><cs:getctag/></prop></propfind>', depth="0")
            ctag = ".//cs:getctag"
            assert before.findtext(ctag, namespaces=NS) != after.findtext(ctag, namespaces=NS)
    run(flow())


def test_depth_one_lists_every_card_with_its_etag(daemon: Daemon, gateway: Gateway, dav_user: DavUser) -> None:
    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            etags = {}
            for n in range(3):
                response, _ = await dav.request("PUT", f"{BOOK}l{n}.vcf", card(f"l{n}", f"List Person{n}"),
                                                {"Content-Type": "text/vcard"})
                etags[f"{BOOK}l{n}.vcf"] = response.headers["ETag"]
            root = await dav.xml("PROPFIND", BOOK, ETAG_PROPS, depth="1")
            listed = responses(root)
            assert set(listed) == {BOOK, *etags}
            for href, etag in etags.items():
                found = props(listed[href])
                assert found["{DAV:}getetag"].text == etag
                assert found["{DAV:}getcontenttype"].text.startswith("text/vcard")
            root = await dav.xml("PROPFIND", f"{BOOK}l0.vcf", "", depth="0")
            found = props(responses(root)[f"{BOOK}l0.vcf"])
            assert int(found["{DAV:}getcontentlength"].text) == len(card("l0", "List Person0").encode())
    run(flow())


@pytest.mark.parametrize("agent", ["DAVx5/4.3 (2023/05/04; dav4jvm; okhttp/4.11.0) Android/13",
                                   "Long/1.0 " + "x" * 300])
def test_the_user_agent_is_what_rosterd_is_told_the_client_is(daemon: Daemon, gateway: Gateway,
                                                              dav_user: DavUser, agent: str) -> None:
    async def flow() -> None:
        async with aiohttp.ClientSession(auth=aiohttp.BasicAuth("alice1", dav_user.app_password),
                                         headers={"User-Agent": agent}) as session:
            async with session.request("PROPFIND", gateway.url + BOOK, headers={"Depth": "0"}) as response:
                assert response.status == 207
    run(flow())


def test_a_burst_of_requests_logs_in_once_and_writes_no_resume_entry_per_request(daemon: Daemon, gateway: Gateway,
                                                                                dav_user: DavUser) -> None:
    """The gateway keeps the logged-in rosterd connection between a client's requests, so twenty requests write
    one log-in entry, not twenty resumes that would bury the rest of the audit log."""
    def entries(event: Literal["login", "resume"]) -> int:
        return sum(1 for entry in dav_user.client.admin_audit(username="alice1", event=event, limit=200)["items"]
                   if entry.get("client") == "roster-dav-test")

    async def flow() -> None:
        async with Dav(gateway, "alice1", dav_user.app_password) as dav:
            for _ in range(20):
                response, _ = await dav.request("PROPFIND", BOOK, "", {"Depth": "0",
                                                                      "User-Agent": "roster-dav-test"})
                assert response.status == 207
    run(flow())
    assert entries("login") == 1
    assert entries("resume") <= 1
