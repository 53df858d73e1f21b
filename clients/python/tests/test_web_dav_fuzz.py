"""roster-web's CardDAV request parsing under Hypothesis (Debian's python3-hypothesis): request bodies built from the
DAV and CardDAV vocabulary with random nesting, text and attributes, raw bytes, and request paths. Whatever comes
in, a parser answers or refuses with BadRequest / Precondition (a 400 or a 403 with its condition), never another
exception, which would be a 500; paths and hrefs made here read back as what made them.

`make test` runs a short pass (ROSTER_DAV_FUZZ_EXAMPLES, default 300 per property); `make fuzz-dav` runs passes
of 5,000 with a new seed each for FUZZ_SECONDS (600), the 10-minute run a parser change needs."""
from __future__ import annotations

import os
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roster.web import davxml as x
from roster.web.davxml import BadRequest, Precondition

EXAMPLES = int(os.environ.get("ROSTER_DAV_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

DAV_NAMES = ["propfind", "prop", "allprop", "propname", "include", "propertyupdate", "set", "remove", "href",
             "sync-collection", "sync-token", "sync-level", "limit", "nresults", "getetag", "displayname",
             "resourcetype", "getctag", "sync-token", "current-user-principal", "supported-report-set"]
CARD_NAMES = ["addressbook-multiget", "addressbook-query", "filter", "prop-filter", "text-match", "param-filter",
              "is-not-defined", "address-data", "limit", "nresults", "addressbook-home-set"]
NAMESPACES = {"d": "DAV:", "c": "urn:ietf:params:xml:ns:carddav", "x": "urn:example:other"}
ATTRIBUTES = ["name", "test", "collation", "match-type", "negate-condition", "content-type", "version", "xml:lang"]
WORDS = ["1", "infinite", "0", "-3", "anyof", "allof", "FN", "EMAIL", "TEL", "equals", "contains", "starts-with",
         "ends-with", "i;unicode-casemap", "i;ascii-casemap", "i;octet", "yes", "no", x.SYNC_PREFIX + "ct1-4",
         x.SYNC_PREFIX, "/dav/addressbooks/alice1/contacts/a.vcf", "http://h/dav/addressbooks/alice1/contacts/%41.vcf",
         "", " ", "ä", "\u202e", "999999999999999999999"]

texts = st.one_of(st.sampled_from(WORDS), st.text(max_size=20))
names = st.one_of(st.tuples(st.just("d"), st.sampled_from(DAV_NAMES)),
                  st.tuples(st.just("c"), st.sampled_from(CARD_NAMES)),
                  st.tuples(st.sampled_from(["x", "d", "c"]), st.sampled_from(DAV_NAMES + CARD_NAMES)))


def _element(draw: Any, depth: int) -> str:
    prefix, name = draw(names)
    attributes = "".join(f" {attribute}={quoteattr(draw(texts))}"
                         for attribute in draw(st.lists(st.sampled_from(ATTRIBUTES), max_size=2, unique=True)))
    children = ""
    if depth > 0:
        children = "".join(_element(draw, depth - 1) for _ in range(draw(st.integers(0, 3))))
    body = children or escape(draw(texts))
    return f"<{prefix}:{name}{attributes}>{body}</{prefix}:{name}>"


@st.composite
def documents(draw: Any) -> bytes:
    """A well-formed document of DAV and CardDAV elements (often one a parser takes, often nearly so)."""
    root = _element(draw, draw(st.integers(0, 4)))
    head, _, rest = root.partition(">")
    declarations = "".join(f' xmlns:{prefix}="{uri}"' for prefix, uri in NAMESPACES.items())
    return f'<?xml version="1.0" encoding="utf-8"?>{head}{declarations}>{rest}'.encode()


@st.composite
def mangled(draw: Any) -> bytes:
    """A document with bytes cut, doubled or replaced: what a broken client or an attacker sends."""
    data = bytearray(draw(documents()))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        choice = draw(st.integers(0, 2))
        if choice == 0:
            del data[at:at + draw(st.integers(1, 8))]
        elif choice == 1:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            data[at] = draw(st.integers(0, 255))
    return bytes(data)


bodies = st.one_of(documents(), mangled(), st.binary(max_size=200))


def _refuses_cleanly(parse: Any, body: bytes) -> Any:
    try:
        return parse(body)
    except (BadRequest, Precondition):
        return None


@FUZZ
@given(bodies)
def test_every_body_parser_answers_or_refuses_with_a_status_never_anything_else(body: bytes) -> None:
    for parse in (x.propfind, x.proppatch, x.report):
        _refuses_cleanly(parse, body)


@FUZZ
@given(documents(), st.text(max_size=30), st.text(max_size=30))
def test_a_parsed_query_filter_judges_any_card_without_failing(body: bytes, first: str, second: str) -> None:
    query = _refuses_cleanly(x.report, body)
    if isinstance(query, x.Query):
        assert query.filter.matches(lambda name: [first, second]) in (True, False)
        assert query.filter.matches(lambda name: []) in (True, False)
        assert query.limit is None or query.limit >= 1
    if isinstance(query, x.Multiget):
        assert 1 <= len(query.hrefs) <= x.MAX_MULTIGET_HREFS
        for href in query.hrefs:
            x.card_uid(href, "alice1")


@FUZZ
@given(st.text(max_size=80))
def test_any_path_routes_to_a_resource_or_nothing(path: str) -> None:
    target = x.route(path)
    assert target is None or target.kind in ("root", "principal", "home", "book", "card", "member")
    x.card_uid(path, "alice1")
    try:
        token = x.sync_token(path)
    except Precondition:
        return
    assert token is None or x.sync_token(x.sync_uri(token)) == token


uids = st.text(min_size=1, max_size=60).filter(lambda uid: "/" not in uid and uid not in (".", ".."))
users = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=20)


@FUZZ
@given(users, uids)
def test_a_card_href_made_here_reads_back_as_its_uid_and_user(user: str, uid: str) -> None:
    href = x.card_href(user, uid)
    assert x.card_uid(href, user) == uid
    assert x.route(x.book_href(user)) == x.Target("book", user)
    assert x.card_uid(href, user + "x") is None


