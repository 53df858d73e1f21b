"""roster-web's CardDAV pieces without I/O: reading request bodies (and refusing DTDs), the paths, the query
filters and collations, the multistatus it writes, the cache of DAV log-ins and the pool of
logged-in connections."""
from __future__ import annotations

import asyncio

import pytest
from lxml import etree

from roster.web import davxml as x
from roster.web.davauth import RETIRE_GRACE_SECONDS, CredentialCache
from roster.web.davpool import ConnectionPool
from roster.web.davxml import CARD, CS, DAV, BadRequest, Precondition, tag


def test_a_body_with_a_dtd_or_entities_is_refused_and_nothing_is_expanded_or_fetched() -> None:
    laughs = (b'<?xml version="1.0"?><!DOCTYPE d:propfind [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
              b'<d:propfind xmlns:d="DAV:"><d:prop><d:displayname>&b;</d:displayname></d:prop></d:propfind>')
    with pytest.raises(BadRequest, match="DOCTYPE"):
        x.propfind(laughs)
    external = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                b'<d:propfind xmlns:d="DAV:"><d:prop>&e;</d:prop></d:propfind>')
    with pytest.raises(BadRequest):
        x.propfind(external)
    for broken in (b"<d:propfind xmlns:d='DAV:'>", b"not xml", b"\xff\xfe<"):
        with pytest.raises(BadRequest):
            x.propfind(broken)
    with pytest.raises(BadRequest, match="DAV:propfind"):
        x.propfind(b"<propfind/>")


def test_propfind_bodies_read_as_allprop_propname_or_named_properties() -> None:
    assert x.propfind(b"") == x.ALLPROP
    assert x.propfind(b'<propfind xmlns="DAV:"><propname/></propfind>').kind == "propname"
    asked = x.propfind(b'<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop>'
                       b'<d:getetag/><cs:getctag/><d:getetag/><x:odd xmlns:x="urn:x"/></d:prop></d:propfind>')
    assert asked == x.PropRequest("prop", (tag(DAV, "getetag"), tag(CS, "getctag"), "{urn:x}odd"))
    included = x.propfind(b'<propfind xmlns="DAV:"><allprop/><include><sync-token/></include></propfind>')
    assert included == x.PropRequest("allprop", (tag(DAV, "sync-token"),))
    many = b"".join(b"<p%d/>" % n for n in range(x.MAX_PROPS + 1))
    with pytest.raises(BadRequest, match="at most"):
        x.propfind(b'<propfind xmlns="DAV:"><prop>' + many + b"</prop></propfind>")


def test_reports_read_and_an_unknown_one_fails_supported_report() -> None:
    multiget = x.report(b'<C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">'
                        b'<D:prop><D:getetag/><C:address-data/></D:prop><D:href>/a.vcf</D:href>'
                        b'<D:href> /b.vcf </D:href></C:addressbook-multiget>')
    assert isinstance(multiget, x.Multiget) and multiget.hrefs == ("/a.vcf", "/b.vcf")
    hrefs = b"".join(b"<D:href>/%d.vcf</D:href>" % n for n in range(x.MAX_MULTIGET_HREFS + 1))
    with pytest.raises(Precondition) as too_many:
        x.report(b'<C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">' + hrefs
                 + b"</C:addressbook-multiget>")
    assert too_many.value.status == 403 and "1000" in too_many.value.message
    with pytest.raises(Precondition) as unknown:
        x.report(b'<C:calendar-query xmlns:C="urn:ietf:params:xml:ns:caldav"/>')
    assert unknown.value.condition == tag(DAV, "supported-report")
    sync = x.report(b'<sync-collection xmlns="DAV:"><sync-token/><sync-level>1</sync-level><limit><nresults>5'
                    b'</nresults></limit><prop><getetag/></prop></sync-collection>')
    assert isinstance(sync, x.SyncCollection) and sync.token is None and sync.limit == 5
    again = x.report(b'<sync-collection xmlns="DAV:"><sync-token>' + x.sync_uri("t/1 2").encode()
                     + b"</sync-token><sync-level>1</sync-level><prop/></sync-collection>")
    assert isinstance(again, x.SyncCollection) and again.token == "t/1 2"
    with pytest.raises(Precondition) as foreign:
        x.report(b'<sync-collection xmlns="DAV:"><sync-token>http://elsewhere/1</sync-token>'
                 b"<sync-level>1</sync-level></sync-collection>")
    assert foreign.value.condition == tag(DAV, "valid-sync-token")
    with pytest.raises(BadRequest):
        x.report(b'<sync-collection xmlns="DAV:"><sync-token/><sync-level>2</sync-level></sync-collection>')


def query(filter_xml: bytes) -> x.Filter:
    asked = x.report(b'<C:addressbook-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop>'
                     b"<D:getetag/></D:prop>" + filter_xml + b"</C:addressbook-query>")
    assert isinstance(asked, x.Query)
    return asked.filter


def test_query_filters_match_with_their_collations_match_types_and_tests() -> None:
    card = {"FN": ["Zoë Ångström"], "EMAIL": ["zoe@example.org", "z@work.example"], "TEL": ["+1 555 0100"]}

    def values_of(name: str) -> list[str]:
        return card.get(name, [])

    def matches(body: bytes | str) -> bool:
        raw = body.encode() if isinstance(body, str) else body
        return query(b"<C:filter" + raw + b"</C:filter>").matches(values_of)
    assert matches('><C:prop-filter name="FN"><C:text-match>zoË ång</C:text-match></C:prop-filter>')
    assert not matches('><C:prop-filter name="FN"><C:text-match collation="i;octet">zoË</C:text-match>'
                       '</C:prop-filter>')
    assert matches(b'><C:prop-filter name="fn"><C:text-match match-type="starts-with" collation="i;ascii-casemap">'
                   b"ZO</C:text-match></C:prop-filter>")
    assert matches(b'><C:prop-filter name="EMAIL"><C:text-match match-type="ends-with">@WORK.example'
                   b"</C:text-match></C:prop-filter>")
    assert not matches(b'><C:prop-filter name="EMAIL"><C:text-match match-type="equals">zoe</C:text-match>'
                       b"</C:prop-filter>")
    assert matches(b'><C:prop-filter name="TEL"><C:text-match negate-condition="yes">999</C:text-match>'
                   b"</C:prop-filter>")
    anyof = (b'><C:prop-filter name="TEL"><C:text-match>0100</C:text-match></C:prop-filter>'
             b'<C:prop-filter name="FN"><C:text-match>nobody</C:text-match></C:prop-filter>')
    assert matches(anyof)
    assert not matches(b' test="allof"' + anyof[0:])
    assert matches(b'><C:prop-filter name="NOTE"><C:is-not-defined/></C:prop-filter>')
    assert not matches(b'><C:prop-filter name="FN"><C:is-not-defined/></C:prop-filter>')
    assert query(b"").matches(values_of)
    with pytest.raises(Precondition) as collation:
        query(b'<C:filter><C:prop-filter name="FN"><C:text-match collation="i;klingon">x</C:text-match>'
              b"</C:prop-filter></C:filter>")
    assert collation.value.condition == tag(CARD, "supported-collation")
    with pytest.raises(BadRequest, match="match-type"):
        query(b'<C:filter><C:prop-filter name="FN"><C:text-match match-type="regex">x</C:text-match>'
              b"</C:prop-filter></C:filter>")
    with pytest.raises(BadRequest, match="test"):
        query(b'<C:filter test="oneof"/>')


def test_paths_name_the_root_principals_homes_books_and_cards() -> None:
    assert x.route("/dav/") == x.Target("root")
    assert x.route("/dav/principals/alice/") == x.Target("principal", "alice")
    assert x.route("/dav/addressbooks/alice/") == x.Target("home", "alice")
    assert x.route("/dav/addressbooks/alice/contacts/") == x.Target("book", "alice")
    assert x.route("/dav/addressbooks/alice/contacts") == x.Target("book", "alice")
    assert x.route("/dav/addressbooks/alice/contacts/a%20b%40c.vcf?x=1") == x.Target("card", "alice", "a b@c")
    assert x.route("/dav/addressbooks/alice/contacts/notes.txt") == x.Target("member", "alice", "notes.txt")
    for nowhere in ("/dav/other/", "/dav/addressbooks/alice/work/", "/dav/addressbooks/alice/contacts/x/y.vcf",
                    "/dav/addressbooks/alice/contacts/..%2F..%2Fx.vcf/", "/dav/addressbooks//contacts/",
                    "/dav/principals/%ff/", "/elsewhere"):
        assert x.route(nowhere) is None, nowhere
    assert x.card_href("alice", "a b/c") == "/dav/addressbooks/alice/contacts/a%20b%2Fc.vcf"
    assert x.card_uid("http://host:1/dav/addressbooks/alice/contacts/u%401.vcf", "alice") == "u@1"
    assert x.card_uid("/dav/addressbooks/bob/contacts/u.vcf", "alice") is None
    assert x.card_uid("/dav/addressbooks/alice/contacts/", "alice") is None


def test_a_multistatus_sorts_properties_into_found_and_not_found() -> None:
    body = x.Multistatus()
    body.propstat("/dav/a.vcf", {tag(DAV, "getetag"): '"1"', tag(DAV, "resourcetype"): [],
                                 tag(CS, "getctag"): None, "{urn:x}odd": None})
    body.status("/dav/b.vcf", 404)
    body.sync_token("t1")
    root = etree.fromstring(body.body())
    responses = root.findall(tag(DAV, "response"))
    assert [r.findtext(tag(DAV, "href")) for r in responses] == ["/dav/a.vcf", "/dav/b.vcf"]
    statuses = {p.findtext(tag(DAV, "status")): [child.tag for child in p.find(tag(DAV, "prop"))]
                for p in responses[0].findall(tag(DAV, "propstat"))}
    assert statuses == {"HTTP/1.1 200 OK": [tag(DAV, "getetag"), tag(DAV, "resourcetype")],
                        "HTTP/1.1 404 Not Found": [tag(CS, "getctag"), "{urn:x}odd"]}
    assert responses[1].findtext(tag(DAV, "status")) == "HTTP/1.1 404 Not Found"
    assert root.findtext(tag(DAV, "sync-token")) == x.SYNC_PREFIX + "t1"
    error = etree.fromstring(x.error_body(tag(DAV, "valid-sync-token"), "expired"))
    assert error.tag == tag(DAV, "error") and error.find(tag(DAV, "valid-sync-token")) is not None


def test_the_credential_cache_keeps_hashes_expires_bounds_and_retires_tokens() -> None:
    now = [0.0]
    cache = CredentialCache(ttl=10.0, max_entries=2, clock=lambda: now[0])
    alice = cache.key("alice", "pw")
    assert alice == cache.key("alice", "pw") and alice != cache.key("alice", "pw2")
    assert cache.key("ab", "c") != cache.key("a", "bc")
    assert alice != CredentialCache().key("alice", "pw"), "the key is random per process"
    assert b"pw" not in alice and len(alice) == 32
    cache.put(alice, "alice", "t-alice")
    entry = cache.get(alice)
    assert entry is not None and entry.token == "t-alice" and entry.username == "alice"
    now[0] = 10.0
    assert cache.get(alice) is None
    # Logged out only after a grace time, for a request that resumed it just before.
    assert cache.take_retired() == []
    now[0] = 10.0 + RETIRE_GRACE_SECONDS
    assert cache.take_retired() == ["t-alice"] and cache.take_retired() == []
    cache = CredentialCache(ttl=1000.0, max_entries=2, clock=lambda: now[0])
    for n in range(3):
        cache.put(cache.key(f"u{n}", "pw"), f"u{n}", f"t{n}")
    assert len(cache) == 2 and cache.get(cache.key("u0", "pw")) is None
    now[0] += RETIRE_GRACE_SECONDS
    assert cache.take_retired() == ["t0"]
    # A token rosterd refused is forgotten, not logged out; one replaced by another is logged out.
    cache.drop(cache.key("u1", "pw"), "t1")
    cache.put(cache.key("u2", "pw"), "u2", "t2b")
    now[0] += RETIRE_GRACE_SECONDS
    assert cache.take_retired() == ["t2"]
    assert sorted(cache.drain()) == ["t2b"] and len(cache) == 0


def test_the_account_pages_app_password_methods_are_relayed_and_the_dav_log_in_is_not() -> None:
    from roster.web.policy import Refuse, Relay, judge_frame
    for method in ("account.app_password_create", "account.app_password_list", "account.app_password_remove"):
        assert isinstance(judge_frame(f'{{"id":1,"method":"{method}","params":{{}}}}', "no"), Relay), method
    refused = judge_frame('{"id":1,"method":"auth.dav_login","params":{"username":"a","password":"b"}}', "no")
    assert isinstance(refused, Refuse) and refused.answer is not None and '"forbidden"' in refused.answer


def test_the_user_agent_rosterd_is_told_drops_what_session_hello_refuses() -> None:
    from aiohttp.test_utils import make_mocked_request

    from roster.web.dav import _user_agent
    request = make_mocked_request("PROPFIND", "/dav/", headers={"User-Agent": "DAVx5\u202e/4 " + "x" * 300})
    agent = _user_agent(request)
    assert agent.startswith("DAVx5/4 ") and len(agent) == 128
    assert _user_agent(make_mocked_request("GET", "/dav/")) == "CardDAV client"


class FakeConnection:
    """A kept connection: whether it still stands, and whether the pool closed it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.connected = True
        self.closed = False

    async def close(self) -> None:
        self.closed = True
        self.connected = False


def test_the_pool_keeps_idle_connections_per_key_for_a_while_and_at_most_its_limit() -> None:
    async def flow() -> None:
        now = [0.0]
        pool: ConnectionPool[FakeConnection] = ConnectionPool(limit=2, idle_seconds=30.0, clock=lambda: now[0])
        a, b, c = FakeConnection("a"), FakeConnection("b"), FakeConnection("c")
        assert await pool.take("alice") is None
        await pool.give("alice", a)
        # Another key (other credentials, or the same from another address) never gets it.
        assert await pool.take("bob") is None
        assert await pool.take("alice") is a and len(pool) == 0
        assert await pool.take("alice") is None  # the caller's alone until given back
        await pool.give("alice", a)
        await pool.give("bob", b)
        await pool.give("carol", c)  # over the limit: the oldest idle one (a) is closed
        assert a.closed and not b.closed and len(pool) == 2
        assert await pool.take("alice") is None
        # One that lost its connection while idle is closed, not handed out.
        b.connected = False
        assert await pool.take("bob") is None and b.closed
        # Idle for the whole while: closed at the next take or give.
        now[0] = 30.0
        assert await pool.take("carol") is None and c.closed and len(pool) == 0
        d = FakeConnection("d")
        d.connected = False
        await pool.give("dave", d)  # a connection already lost is closed, never kept
        assert d.closed and len(pool) == 0
        e = FakeConnection("e")
        await pool.give("erin", e)
        await pool.drop("erin")
        assert e.closed and len(pool) == 0
        f = FakeConnection("f")
        await pool.give("frank", f)
        await pool.close()
        assert f.closed and len(pool) == 0
    asyncio.run(flow())
