"""CardDAV's XML and paths (no I/O): what a request body asks (PROPFIND, REPORT, PROPPATCH), read with lxml on a
parser that loads no DTD, expands no entity and fetches nothing, and the multistatus answers, built as element
trees. Every refusal of a body is a `BadRequest` (or a `Precondition`) that says why."""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, unquote, urlsplit

from lxml import etree

DAV = "DAV:"
CARD = "urn:ietf:params:xml:ns:carddav"
CS = "http://calendarserver.org/ns/"
ROSTER = "urn:roster:dav"
NSMAP = {"d": DAV, "card": CARD, "cs": CS}
# The one prefix of every sync-token (RFC 6578 §3.2: a URI); the daemon's token follows it, percent-encoded.
SYNC_PREFIX = "http://roster.invalid/sync/"
# vdirsyncer asks for a whole book in one multiget; the body limit (1 MiB) and the answer limit bound it too.
MAX_MULTIGET_HREFS = 10000
# What a client may ask per request: bounded so that a body of 1 MiB cannot ask for a million things.
MAX_PROPS = 200
MAX_FILTERS = 50
COLLATIONS = ("i;unicode-casemap", "i;ascii-casemap", "i;octet")
MATCH_TYPES = ("equals", "contains", "starts-with", "ends-with")


def tag(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


class BadRequest(Exception):
    """A body or header the server cannot read: HTTP 400 with `message`."""


class Precondition(Exception):
    """A failed DAV precondition (RFC 4918 §16): `status`, and `condition` the Clark name of DAV:error's child."""

    def __init__(self, status: int, condition: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.condition = condition
        self.message = message


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
                          dtd_validation=False, remove_comments=True, remove_pis=True)


def parse(body: bytes) -> Any:
    """The root element of an XML body; BadRequest for anything that is not one well-formed document without a
    DOCTYPE (a DTD could declare entities, and the parser is told never to expand or fetch them anyway)."""
    try:
        root = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError as error:
        raise BadRequest(f"the body is not well-formed XML: {error.msg}") from None
    except ValueError as error:
        raise BadRequest(f"the body is not XML: {error}") from None
    tree = root.getroottree()
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise BadRequest("a DOCTYPE is not allowed in a request body")
    return root


# --- what a request asks -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PropRequest:
    """DAV:allprop (with DAV:include's names), DAV:propname, or DAV:prop's names (Clark notation)."""

    kind: Literal["allprop", "propname", "prop"]
    names: tuple[str, ...] = ()


ALLPROP = PropRequest("allprop")


def _children(element: Any) -> list[Any]:
    return [child for child in element if isinstance(child.tag, str)]


def _prop_names(prop: Any) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(str(child.tag) for child in _children(prop)))
    if len(names) > MAX_PROPS:
        raise BadRequest(f"at most {MAX_PROPS} properties per request")
    return names


def _prop_request(root: Any, default: PropRequest | None = ALLPROP) -> PropRequest:
    """The DAV:prop, DAV:allprop or DAV:propname child of `root`."""
    for child in _children(root):
        if child.tag == tag(DAV, "prop"):
            return PropRequest("prop", _prop_names(child))
        if child.tag == tag(DAV, "propname"):
            return PropRequest("propname")
        if child.tag == tag(DAV, "allprop"):
            include = root.find(tag(DAV, "include"))
            return PropRequest("allprop", _prop_names(include) if include is not None else ())
    if default is None:
        raise BadRequest("the request names no DAV:prop")
    return default


def propfind(body: bytes) -> PropRequest:
    """A PROPFIND body (RFC 4918 §9.1); an empty one is allprop."""
    if not body.strip():
        return ALLPROP
    root = parse(body)
    if root.tag != tag(DAV, "propfind"):
        raise BadRequest("a PROPFIND body is a DAV:propfind element")
    return _prop_request(root)


def proppatch(body: bytes) -> tuple[str, ...]:
    """The names a PROPPATCH body (RFC 4918 §9.2) would set or remove."""
    root = parse(body)
    if root.tag != tag(DAV, "propertyupdate"):
        raise BadRequest("a PROPPATCH body is a DAV:propertyupdate element")
    names: list[str] = []
    for action in _children(root):
        if action.tag not in (tag(DAV, "set"), tag(DAV, "remove")):
            raise BadRequest("DAV:propertyupdate holds DAV:set and DAV:remove only")
        for prop in action.findall(tag(DAV, "prop")):
            names.extend(_prop_names(prop))
    if not names:
        raise BadRequest("the PROPPATCH names no property")
    return tuple(dict.fromkeys(names))[:MAX_PROPS]


@dataclass(frozen=True)
class Multiget:
    props: PropRequest
    hrefs: tuple[str, ...]


@dataclass(frozen=True)
class TextMatch:
    text: str
    collation: str = "i;unicode-casemap"
    match_type: str = "contains"
    negate: bool = False

    def matches(self, value: str) -> bool:
        wanted, seen = _fold(self.text, self.collation), _fold(value, self.collation)
        if self.match_type == "equals":
            hit = seen == wanted
        elif self.match_type == "starts-with":
            hit = seen.startswith(wanted)
        elif self.match_type == "ends-with":
            hit = seen.endswith(wanted)
        else:
            hit = wanted in seen
        return hit != self.negate


@dataclass(frozen=True)
class PropFilter:
    """One CARDDAV:prop-filter: the vCard property `name` (upper case), defined or not, and its text-matches."""

    name: str
    test: Literal["anyof", "allof"] = "anyof"
    is_not_defined: bool = False
    text_matches: tuple[TextMatch, ...] = ()

    def matches(self, values: Sequence[str]) -> bool:
        if self.is_not_defined:
            return not values
        if not self.text_matches:
            return bool(values)
        combine = all if self.test == "allof" else any
        return any(combine(match.matches(value) for match in self.text_matches) for value in values)


@dataclass(frozen=True)
class Filter:
    test: Literal["anyof", "allof"] = "anyof"
    prop_filters: tuple[PropFilter, ...] = ()

    def matches(self, values_of: Any) -> bool:
        """Whether a card matches; `values_of(NAME)` gives the card's values of property NAME."""
        if not self.prop_filters:
            return True
        combine = all if self.test == "allof" else any
        return combine(each.matches(values_of(each.name)) for each in self.prop_filters)


@dataclass(frozen=True)
class Query:
    props: PropRequest
    filter: Filter
    limit: int | None


@dataclass(frozen=True)
class SyncCollection:
    props: PropRequest
    token: str | None  # the daemon's token; None for an initial sync
    limit: int | None


Report = Multiget | Query | SyncCollection


def report(body: bytes) -> Report:
    """A REPORT body: addressbook-multiget, addressbook-query or sync-collection; any other is refused with
    DAV:supported-report (RFC 3253 §3.6)."""
    root = parse(body)
    if root.tag == tag(CARD, "addressbook-multiget"):
        hrefs = tuple((element.text or "").strip() for element in root.findall(tag(DAV, "href")))
        if not hrefs:
            raise BadRequest("an addressbook-multiget names at least one DAV:href")
        if len(hrefs) > MAX_MULTIGET_HREFS:
            raise Precondition(403, tag(ROSTER, "too-many-hrefs"),
                               f"at most {MAX_MULTIGET_HREFS} hrefs per addressbook-multiget")
        return Multiget(_prop_request(root), hrefs)
    if root.tag == tag(CARD, "addressbook-query"):
        return Query(_prop_request(root), _filter(root.find(tag(CARD, "filter"))),
                     _nresults(root.find(tag(CARD, "limit")), CARD))
    if root.tag == tag(DAV, "sync-collection"):
        level = (root.findtext(tag(DAV, "sync-level")) or "").strip()
        if level not in ("1", "infinite"):
            # The address book holds no collections, so "infinite" is level 1 (RFC 6578 §3.3).
            raise BadRequest("DAV:sync-level is 1 or infinite")
        token_element = root.find(tag(DAV, "sync-token"))
        if token_element is None:
            raise BadRequest("a sync-collection holds a DAV:sync-token (empty for the first sync)")
        return SyncCollection(_prop_request(root), sync_token(token_element.text or ""),
                              _nresults(root.find(tag(DAV, "limit")), DAV))
    raise Precondition(403, tag(DAV, "supported-report"),
                       "the reports are addressbook-multiget, addressbook-query and sync-collection")


def sync_token(text: str) -> str | None:
    """The daemon's token in a client's DAV:sync-token; None for an empty one. Anything not made here is refused
    with DAV:valid-sync-token (RFC 6578 §3.2)."""
    text = text.strip()
    if not text:
        return None
    if not text.startswith(SYNC_PREFIX) or len(text) == len(SYNC_PREFIX):
        raise Precondition(403, tag(DAV, "valid-sync-token"), "this sync-token was not handed out here")
    return unquote(text[len(SYNC_PREFIX):])


def sync_uri(token: str) -> str:
    return SYNC_PREFIX + quote(token, safe="")


def _nresults(limit: Any, namespace: str) -> int | None:
    if limit is None:
        return None
    text = (limit.findtext(tag(namespace, "nresults")) or "").strip()
    if not text.isdigit() or int(text) < 1:
        raise BadRequest("nresults is a whole number of at least 1")
    return int(text)


def _filter(element: Any) -> Filter:
    if element is None:
        return Filter()
    prop_filters = []
    for prop_filter in _children(element):
        if prop_filter.tag != tag(CARD, "prop-filter"):
            raise BadRequest("CARDDAV:filter holds prop-filter elements")
        prop_filters.append(_prop_filter(prop_filter))
    if len(prop_filters) > MAX_FILTERS:
        raise BadRequest(f"at most {MAX_FILTERS} prop-filters per query")
    return Filter(_test(element), tuple(prop_filters))


def _test(element: Any) -> Literal["anyof", "allof"]:
    test = element.get("test", "anyof")
    if test not in ("anyof", "allof"):
        raise BadRequest("test is anyof or allof")
    return "allof" if test == "allof" else "anyof"


def _prop_filter(element: Any) -> PropFilter:
    name = (element.get("name") or "").strip().upper()
    if not name:
        raise BadRequest("a prop-filter has a name")
    is_not_defined = False
    matches = []
    for child in _children(element):
        if child.tag == tag(CARD, "is-not-defined"):
            is_not_defined = True
        elif child.tag == tag(CARD, "text-match"):
            matches.append(_text_match(child))
        elif child.tag == tag(CARD, "param-filter"):
            raise Precondition(403, tag(CARD, "supported-filter"), "param-filter is not supported")
        else:
            raise BadRequest(f"a prop-filter does not hold {child.tag}")
    if len(matches) > MAX_FILTERS:
        raise BadRequest(f"at most {MAX_FILTERS} text-matches per prop-filter")
    return PropFilter(name, _test(element), is_not_defined, tuple(matches))


def _text_match(element: Any) -> TextMatch:
    collation = element.get("collation", "i;unicode-casemap")
    if collation not in COLLATIONS:
        raise Precondition(403, tag(CARD, "supported-collation"),
                           f"the collations are {', '.join(COLLATIONS)}")
    match_type = element.get("match-type", "contains")
    if match_type not in MATCH_TYPES:
        raise BadRequest(f"match-type is one of {', '.join(MATCH_TYPES)}")
    negate = element.get("negate-condition", "no")
    if negate not in ("yes", "no"):
        raise BadRequest("negate-condition is yes or no")
    return TextMatch(element.text or "", collation, match_type, negate == "yes")


def _fold(text: str, collation: str) -> str:
    """`text` as `collation` compares it: i;octet as is, i;ascii-casemap with A-Z lowered, i;unicode-casemap
    (RFC 5051) decomposed (NFKD) and case-folded."""
    if collation == "i;octet":
        return text
    if collation == "i;ascii-casemap":
        return text.translate(_ASCII_LOWER)
    return unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


# --- paths ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """What a /dav/ path names. `kind` is root, principal, home, book, card, or member (a name in the book that
    is not `NAME.vcf`, so not a card); `user` the NAME in the path; `uid` the contact's uid, the card's name
    without `.vcf` (usually the card's UID; a client may name a card otherwise)."""

    kind: Literal["root", "principal", "home", "book", "card", "member"]
    user: str | None = None
    uid: str | None = None


def route(raw_path: str) -> Target | None:
    """The resource a request path (as sent, percent-encoded) names; None for nothing here."""
    path = urlsplit(raw_path).path
    if not path.startswith("/dav/"):
        return None
    segments = path[len("/dav/"):].split("/")
    if segments and segments[-1] == "":
        segments.pop()
        collection = True
    else:
        collection = False
    try:
        parts = [unquote(segment, errors="strict") for segment in segments]
    except UnicodeDecodeError:
        return None
    if any(part in ("", ".", "..") for part in parts):
        return None
    if not parts:
        return Target("root")
    if parts[0] == "principals" and len(parts) == 2:
        return Target("principal", parts[1])
    if parts[0] == "addressbooks" and len(parts) == 2:
        return Target("home", parts[1])
    if parts[0] == "addressbooks" and len(parts) == 3 and parts[2] == "contacts":
        return Target("book", parts[1])
    if parts[0] == "addressbooks" and len(parts) == 4 and parts[2] == "contacts" and not collection:
        name = parts[3]
        if name.endswith(".vcf") and len(name) > len(".vcf"):
            return Target("card", parts[1], name[:-len(".vcf")])
        return Target("member", parts[1], name)
    return None


def principal_href(user: str) -> str:
    return f"/dav/principals/{quote(user, safe='')}/"


def home_href(user: str) -> str:
    return f"/dav/addressbooks/{quote(user, safe='')}/"


def book_href(user: str) -> str:
    return f"{home_href(user)}contacts/"


def card_href(user: str, uid: str) -> str:
    return f"{book_href(user)}{quote(uid, safe='')}.vcf"


def card_uid(href: str, user: str) -> str | None:
    """The UID a multiget's href names in `user`'s book (an absolute URL's path too); None for anything else."""
    target = route(urlsplit(href.strip()).path)
    if target is None or target.kind != "card" or target.user != user:
        return None
    return target.uid


# --- answers -------------------------------------------------------------------------------------------------------

# A property's value: text, child elements, or NOT_FOUND (a 404 propstat).
Value = str | list[Any] | None
NOT_FOUND: Value = None


def element(name: str, text: str | None = None, children: Iterable[Any] = ()) -> Any:
    made = etree.Element(name, nsmap=NSMAP)
    if text is not None:
        made.text = text
    for child in children:
        made.append(child)
    return made


def href_element(href: str) -> Any:
    return element(tag(DAV, "href"), href)


class Multistatus:
    """A 207 body being built: one DAV:response per resource."""

    def __init__(self) -> None:
        self.root: Any = element(tag(DAV, "multistatus"))

    def propstat(self, href: str, found: dict[str, Value], missing: Iterable[str] = (),
                 forbidden: Iterable[str] = ()) -> None:
        """One resource's properties: `found` (a value None is a 404), `missing` 404, `forbidden` 403."""
        response = etree.SubElement(self.root, tag(DAV, "response"))
        response.append(href_element(href))
        absent = [name for name, value in found.items() if value is None] + list(missing)
        present: dict[str, Value] = {name: value for name, value in found.items() if value is not None}
        groups: list[tuple[int, dict[str, Value]]] = [(200, present), (404, dict.fromkeys(absent)),
                                                      (403, dict.fromkeys(forbidden))]
        for status, names in groups:
            if not names:
                continue
            propstat = etree.SubElement(response, tag(DAV, "propstat"))
            prop = etree.SubElement(propstat, tag(DAV, "prop"))
            for name in names:
                value = names[name] if status == 200 else None
                holder = etree.SubElement(prop, name)
                if isinstance(value, str):
                    holder.text = value
                elif isinstance(value, list):
                    holder.extend(value)
            etree.SubElement(propstat, tag(DAV, "status")).text = status_line(status)

    def names(self, href: str, names: Iterable[str]) -> None:
        """A PROPFIND propname answer for one resource."""
        response = etree.SubElement(self.root, tag(DAV, "response"))
        response.append(href_element(href))
        propstat = etree.SubElement(response, tag(DAV, "propstat"))
        prop = etree.SubElement(propstat, tag(DAV, "prop"))
        for name in names:
            etree.SubElement(prop, name)
        etree.SubElement(propstat, tag(DAV, "status")).text = status_line(200)

    def status(self, href: str, status: int, description: str | None = None) -> None:
        """A response with a status and no properties (a removed card's 404, a truncated answer's 507)."""
        response = etree.SubElement(self.root, tag(DAV, "response"))
        response.append(href_element(href))
        etree.SubElement(response, tag(DAV, "status")).text = status_line(status)
        if description is not None:
            etree.SubElement(response, tag(DAV, "responsedescription")).text = description

    def sync_token(self, token: str) -> None:
        etree.SubElement(self.root, tag(DAV, "sync-token")).text = sync_uri(token)

    def body(self) -> bytes:
        return serialize(self.root)


def serialize(root: Any) -> bytes:
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))


def error_body(condition: str, message: str) -> bytes:
    """A DAV:error body naming the failed `condition`, with a sentence for people."""
    root = element(tag(DAV, "error"), children=[element(condition)])
    root.append(element(tag(ROSTER, "message"), message))
    return serialize(root)


REASONS = {200: "OK", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 424: "Failed Dependency",
           507: "Insufficient Storage"}


def status_line(status: int) -> str:
    return f"HTTP/1.1 {status} {REASONS.get(status, '')}".rstrip()
