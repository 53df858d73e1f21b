"""CardDAV (RFC 6352, with RFC 6578's sync-collection) on the gateway's own listener: each user's contacts as one
address book, /dav/addressbooks/NAME/contacts/, each card `<UID>.vcf`.

Every request is bounded (its body, its time, its depth, a multiget's hrefs) and carried out on a rosterd
connection of its own: session.hello naming the browser's address and the client's User-Agent, then
session.resume with the token auth.dav_login gave for the request's HTTP Basic credentials (davauth). NAME in the
path must be the logged-in user's own."""
from __future__ import annotations

import asyncio
import logging
import unicodedata
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from vobject.base import readOne
from aiohttp import BasicAuth, hdrs, web
from aiohttp.helpers import ETAG_ANY, ETag

from ..async_client import AsyncClient
from ..errors import ConnectionLost, RosterError
from . import davxml as x
from .davauth import CredentialCache
from .davpool import ConnectionPool
from .davxml import CARD, CS, DAV, BadRequest, Multistatus, Precondition, Target, Value, tag
from .locale import from_accept_language
from .relay import hello_params, log_refused_hello

log = logging.getLogger("roster.web")

REALM = 'Basic realm="Roster", charset="UTF-8"'
# A card's bytes (PHOTO up to 1 MiB, base64) as rosterd caps them; every other body (PROPFIND, REPORT, PROPPATCH).
MAX_CARD_BYTES = 1536 * 1024
MAX_BODY_BYTES = 1024 * 1024
# A sync-collection answers at most this many changes at once (then 507 and a token to go on from, RFC 6578 §3.6);
# a client's own DAV:limit is honoured below it.
MAX_SYNC_ITEMS = 10000
CHANGES_PAGE = 1000
LISTING_PAGE = 10000
# Card fetches per contacts.get_vcards call (rosterd allows 1000; a page of big cards stays under its answer budget).
FETCH_BATCH = 200
# Pages of contacts.changes one request may walk (a full listing of 10000 cards per page).
MAX_PAGES = 50
MAX_USER_AGENT = 128
# The cards one answer may carry (a multiget or a sync with address-data): past it, 507 and ask for fewer.
MAX_ANSWER_CARD_BYTES = 64 * 1024 * 1024
DAV_HEADER = "1, 3, addressbook"
ALLOW = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT"
HANDLED = frozenset(ALLOW.split(", "))
VCARD_TYPES = ("text/vcard", "text/x-vcard", "text/directory")
CARD_CONTENT_TYPE = "text/vcard; charset=utf-8"
XML_CONTENT_TYPE = "application/xml"
TEXT = "text/plain"
TWO_STEP_HINT = ("Log in to CardDAV with your username and an app password (the account page makes one); "
                 "the account password works only while two-step log-in is off.\n")
# How rosterd's refusals read over HTTP.
STATUS_BY_REASON = {"not_found": 404, "precondition_failed": 412, "rate_limited": 429, "busy": 503,
                    "storage_unavailable": 503, "forbidden": 403, "locked": 403, "unauthenticated": 401,
                    "invalid_credentials": 401, "wrong_password": 401}


@dataclass(frozen=True)
class Card:
    uid: str
    etag: str
    vcard: str | None = None


class Refused(Exception):
    """A request answered with `response` before it got anywhere."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


def text(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, text=message if message.endswith("\n") else message + "\n",
                        content_type=TEXT, headers=headers)


def precondition(error: Precondition) -> web.Response:
    return web.Response(status=error.status, body=x.error_body(error.condition, error.message),
                        content_type=XML_CONTENT_TYPE, charset="utf-8")


def multistatus(body: Multistatus) -> web.Response:
    return web.Response(status=207, body=body.body(), content_type=XML_CONTENT_TYPE, charset="utf-8")


def quoted(etag: str) -> str:
    return f'"{etag}"'


INVALID_PARAMS = -32602
CARD_TOO_LARGE = "card_too_large"


def from_daemon(error: RosterError) -> web.Response:
    """rosterd's refusal as an HTTP answer, its own sentence as the body: a card it cannot take is
    CARDDAV:valid-address-data (RFC 6352 §6.3.2.1), a stale ETag 412, its limiter 429 with Retry-After."""
    headers: dict[str, str] = {}
    retry = error.data.get("retry_after_ms")
    if isinstance(retry, int):
        headers["Retry-After"] = str(max(1, (retry + 999) // 1000))
    message = error.message or error.reason or "rosterd refused the request"
    if error.code == INVALID_PARAMS:
        if error.reason == CARD_TOO_LARGE:
            return text(413, message)
        if error.data.get("param") in ("vcard", "card", None):
            return web.Response(status=403, body=x.error_body(tag(CARD, "valid-address-data"), message),
                                content_type=XML_CONTENT_TYPE, charset="utf-8")
        return text(400, message)
    status = STATUS_BY_REASON.get(error.reason, 502)
    if status == 401:
        headers["WWW-Authenticate"] = REALM
    return text(status, message, headers)


class Session:
    """A rosterd connection logged in as `username`, serving one request at a time (kept between them)."""

    def __init__(self, client: AsyncClient, username: str) -> None:
        self.client = client
        self.username = username

    @property
    def connected(self) -> bool:
        return self.client.connected

    async def close(self) -> None:
        await self.client.close()

    async def changes(self, since: str | None, limit: int) -> dict[str, Any]:
        params: dict[str, Any] = {"limit": limit}
        if since is not None:
            params["since"] = since
        answer: dict[str, Any] = await self.client.call("contacts.changes", params)
        return answer

    async def listing(self) -> tuple[str, dict[str, Card]]:
        """Every card (uid and etag) and the token that stands for the book as listed."""
        cards: dict[str, Card] = {}
        token: str | None = None
        for _ in range(MAX_PAGES):
            answer = await self.changes(token, LISTING_PAGE)
            for contact in answer.get("changed", []):
                cards[contact["uid"]] = Card(contact["uid"], contact["etag"])
            for uid in answer.get("removed", []):
                cards.pop(uid, None)
            token = str(answer["token"])
            if not answer.get("more"):
                return token, cards
        raise Refused(text(507, "The address book is too big to list in one request."))

    async def latest_token(self, known: str | None) -> str:
        """The token of the book as it is now: walked on from `known` (the last one seen) when it still holds."""
        if known is not None:
            token = known
            try:
                for _ in range(MAX_PAGES):
                    answer = await self.changes(token, LISTING_PAGE)
                    token = str(answer["token"])
                    if not answer.get("more"):
                        return token
            except RosterError as error:
                if error.code != INVALID_PARAMS:
                    raise
        return (await self.listing())[0]

    async def fetch(self, uids: Iterable[str]) -> tuple[dict[str, Card], set[str]]:
        """The cards of `uids` with their bytes, and the uids that are not in the book."""
        wanted = list(dict.fromkeys(uids))
        found: dict[str, Card] = {}
        missing: set[str] = set()
        carried = 0
        while wanted:
            batch, wanted = wanted[:FETCH_BATCH], wanted[FETCH_BATCH:]
            answer = await self.client.call("contacts.get_vcards", {"uids": batch})
            for item in answer.get("items", []):
                found[item["uid"]] = Card(item["uid"], item["etag"], item["vcard"])
                carried += len(item["vcard"])
            if carried > MAX_ANSWER_CARD_BYTES:
                raise Refused(text(507, "These cards are more than one answer may carry; ask for fewer at a time."))
            missing.update(answer.get("missing", []))
            left = [uid for uid in batch if uid not in found and uid not in missing]
            if len(left) == len(batch):
                raise Refused(text(502, "rosterd answered none of the cards asked for."))
            wanted = left + wanted
        return found, missing

    async def get(self, uid: str) -> Card | None:
        try:
            answer = await self.client.call("contacts.get_vcard", {"uid": uid})
        except RosterError as error:
            if error.reason == "not_found":
                return None
            raise
        return Card(uid, answer["etag"], answer["vcard"])


class CardDav:
    """The /dav/ routes of one gateway. `browser` gives a request's browser address as rosterd is told it."""

    def __init__(self, socket_path: str, browser: Callable[[web.Request], str | None], body_seconds: float,
                 request_seconds: float = 30.0, max_requests: int = 64,
                 cache: CredentialCache | None = None) -> None:
        self.socket_path = socket_path
        self.browser = browser
        self.body_seconds = body_seconds
        self.request_seconds = request_seconds
        self.cache = cache or CredentialCache()
        # Logged-in connections kept between requests: one log-in (and one `resume` entry) per client's burst.
        self.pool: ConnectionPool[Session] = ConnectionPool()
        self._slots = asyncio.Semaphore(max_requests)
        self._logging_in: dict[bytes, asyncio.Future[tuple[str, str]]] = {}
        # The last token seen per user, so that getctag walks on from it instead of listing the whole book.
        self._seen: dict[str, str] = {}

    def add_routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/.well-known/carddav", self._well_known)
        app.router.add_route("*", "/dav", self._well_known)
        app.router.add_route("*", "/dav/{tail:.*}", self.handle)

    async def _well_known(self, _: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently("/dav/")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        target = x.route(request.raw_path)
        if request.method == hdrs.METH_OPTIONS:
            return web.Response(status=200 if target is not None else 404,
                                headers={"DAV": DAV_HEADER, "Allow": ALLOW, "Content-Length": "0"})
        if self._slots.locked():
            return text(503, "The gateway is serving as many CardDAV requests as it may.", {"Retry-After": "1"})
        async with self._slots:
            try:
                async with asyncio.timeout(self.request_seconds):
                    return await self._serve(request, target)
            except Refused as refused:
                return refused.response
            except Precondition as failed:
                return precondition(failed)
            except BadRequest as bad:
                return text(400, str(bad))
            except RosterError as error:
                return from_daemon(error)
            except TimeoutError:
                log.info("a CardDAV %s took over %g s", request.method, self.request_seconds)
                return text(503, "rosterd did not answer in time.", {"Retry-After": "5"})
            except ConnectionLost:
                return text(503, "rosterd is not reachable.", {"Retry-After": "5"})

    async def _serve(self, request: web.Request, target: Target | None) -> web.StreamResponse:
        if request.method not in HANDLED:
            return text(405, f"{request.method} is not served here: the address book is the one collection, and "
                             "it holds cards only.", {"Allow": ALLOW})
        credentials = _basic(request)
        hello = hello_params(from_accept_language(request.headers.get("Accept-Language")), self.browser(request))
        hello["client"] = _user_agent(request)
        pool_key = (self.cache.key(*credentials), tuple(sorted(hello.items())))
        while True:
            taken = await self.pool.take(pool_key)
            kept = taken is not None
            if taken is not None:
                session = taken
            else:
                opened = await self._open(hello, credentials)
                if isinstance(opened, web.Response):
                    return opened
                session = opened
            try:
                response = await self._serve_as(request, target, session)
            except RosterError as error:
                await session.close()
                # A kept connection whose session ended meanwhile (revoked, logged out, idled out): log in afresh.
                if kept and error.reason == "unauthenticated":
                    continue
                raise
            except (Refused, Precondition, BadRequest):
                await self.pool.give(pool_key, session)
                raise
            except BaseException:
                await session.close()
                raise
            await self.pool.give(pool_key, session)
            return response

    async def _open(self, hello: dict[str, str], credentials: tuple[str, str]) -> Session | web.Response:
        """A new rosterd connection, greeted with `hello` and logged in with `credentials`."""
        client = await AsyncClient.connect(self.socket_path, timeout=self.request_seconds)
        try:
            try:
                await client.call("session.hello", hello)
            except RosterError as error:
                log_refused_hello(error.reason)
                await client.close()
                return text(503, "rosterd refused the gateway.")
            return await self._log_in(client, credentials)
        except BaseException:
            await client.close()
            raise

    async def _serve_as(self, request: web.Request, target: Target | None, session: Session) -> web.StreamResponse:
        if target is None:
            return text(404, "Nothing here: the address book is under /dav/addressbooks/NAME/contacts/.")
        if target.user is not None and target.user != session.username:
            return text(403, f"That is another user's; yours are under {x.home_href(session.username)}.")
        return await self._method(request, target, session)

    async def _log_in(self, client: AsyncClient, credentials: tuple[str, str]) -> Session:
        """Resumes the cached token of these credentials, or asks auth.dav_login for one (one log-in at a time per
        credentials: requests that arrive meanwhile wait for it)."""
        username, password = credentials
        key = self.cache.key(username, password)
        for _ in range(2):
            entry = self.cache.get(key)
            if entry is None:
                name, token = await self._dav_login(client, key, username, password)
            else:
                name, token = entry.username, entry.token
            try:
                await client.call("session.resume", {"token": token})
            except RosterError as error:
                if error.reason not in ("not_found", "unauthenticated") and error.code != INVALID_PARAMS:
                    raise
                self.cache.drop(key, token)
                continue
            return Session(client, name)
        raise Refused(text(401, "The log-in did not hold; try again.", {"WWW-Authenticate": REALM}))

    async def _dav_login(self, client: AsyncClient, key: bytes, username: str, password: str) -> tuple[str, str]:
        waiting = self._logging_in.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
        self._logging_in[key] = future
        try:
            try:
                answer = await client.call("auth.dav_login", {"username": username, "password": password})
                result = (str(answer["username"]), str(answer["token"]))
            except RosterError as error:
                response = from_daemon(error)
                if error.reason in ("invalid_credentials", "wrong_password", "not_found") or error.code == INVALID_PARAMS:
                    response = text(401, (error.message + "\n" if error.message else "") + TWO_STEP_HINT,
                                    {"WWW-Authenticate": REALM})
                future.set_exception(Refused(response))
                raise Refused(response) from None
            except BaseException:
                # Cancelled (the request's time ran out) or the connection lost: those waiting ask again.
                future.set_exception(Refused(text(503, "The log-in did not finish; try again.", {"Retry-After": "1"})))
                raise
            self.cache.put(key, *result)
            future.set_result(result)
            return result
        finally:
            del self._logging_in[key]
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: nobody else may be waiting on it

    async def _method(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        handlers: dict[str, Callable[[web.Request, Target, Session], Awaitable[web.StreamResponse]]] = {
            hdrs.METH_GET: self._get, hdrs.METH_HEAD: self._get, hdrs.METH_PUT: self._put,
            hdrs.METH_DELETE: self._delete, "PROPFIND": self._propfind, "PROPPATCH": self._proppatch,
            "REPORT": self._report,
        }
        handler = handlers.get(request.method)
        if handler is None:
            return text(405, f"{request.method} is not served here: the address book is the one collection.",
                        {"Allow": ALLOW})
        return await handler(request, target, session)

    # --- bodies ----------------------------------------------------------------------------------------------------

    async def _body(self, request: web.Request, limit: int) -> bytes:
        if request.content_length is not None and request.content_length > limit:
            raise Refused(text(413, f"The body is over {limit} bytes."))
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_seconds):
                while chunk := await request.content.read(64 * 1024):
                    size += len(chunk)
                    if size > limit:
                        raise Refused(text(413, f"The body is over {limit} bytes."))
                    chunks.append(chunk)
        except TimeoutError:
            response = text(408, f"The body took over {self.body_seconds:g} s to arrive.")
            response.force_close()
            raise Refused(response) from None
        return b"".join(chunks)

    # --- GET, PUT, DELETE ------------------------------------------------------------------------------------------

    async def _get(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        if target.kind != "card":
            if target.kind == "member":
                return text(404, "No such card: cards are named UID.vcf.")
            return text(200, f"A CardDAV {'address book' if target.kind == 'book' else 'collection'} of Roster: "
                             "point a CardDAV client at /dav/.")
        assert target.uid is not None
        card = await session.get(target.uid)
        if card is None or card.vcard is None:
            return text(404, "No such card.")
        headers = {"ETag": quoted(card.etag)}
        if_none_match = request.if_none_match
        if if_none_match and any(tag_.value in (ETAG_ANY, card.etag) for tag_ in if_none_match):
            return web.Response(status=304, headers=headers)
        return web.Response(body=card.vcard.encode("utf-8"), headers=headers, content_type="text/vcard",
                            charset="utf-8")

    async def _put(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        if target.kind == "member":
            return text(403, "A card is named after its UID: UID.vcf.")
        if target.kind != "card":
            return text(405, "Only cards are written: PUT UID.vcf into the address book.", {"Allow": ALLOW})
        assert target.uid is not None
        if request.content_type not in VCARD_TYPES and request.headers.get(hdrs.CONTENT_TYPE):
            raise Precondition(415, tag(CARD, "supported-address-data"), "a card is text/vcard (3.0 or 4.0)")
        body = await self._body(request, MAX_CARD_BYTES)
        try:
            vcard = body.decode("utf-8")
        except UnicodeDecodeError:
            raise Precondition(415, tag(CARD, "supported-address-data"), "a card is UTF-8") from None
        # The resource's name is the contact's uid, whatever UID the card holds (clients name new cards by a
        # UUID of their own when the UID has characters they do not put in a URL).
        params: dict[str, Any] = {"uid": target.uid, "vcard": vcard}
        params.update(await self._conditions(request, target.uid, session))
        answer = await session.client.call("contacts.put_vcard", params)
        return web.Response(status=201 if answer.get("created") else 204, headers={"ETag": quoted(answer["etag"])})

    async def _conditions(self, request: web.Request, uid: str, session: Session) -> dict[str, str]:
        """If-Match and If-None-Match as put_vcard's and remove's if_match / if_none_match; a condition rosterd cannot
        be told in one value (a list of ETags) is checked against the card as it is, and the card's ETag sent on."""
        params: dict[str, str] = {}
        if_match, if_none_match = request.if_match, request.if_none_match
        if if_none_match is not None:
            if any(each.value == ETAG_ANY for each in if_none_match):
                params["if_none_match"] = "*"
            else:
                current = await session.get(uid)
                if current is not None and current.etag in _strong(if_none_match):
                    raise Refused(text(412, "The card has that ETag.", {"ETag": quoted(current.etag)}))
        if if_match is not None:
            strong = _strong(if_match)
            if len(if_match) == 1 and len(strong) == 1 and strong[0] != ETAG_ANY:
                params["if_match"] = strong[0]
            else:
                current = await session.get(uid)
                if current is None or not (ETAG_ANY in strong or current.etag in strong):
                    raise Refused(text(412, "The card is not as If-Match says."))
                params["if_match"] = current.etag
        return params

    async def _delete(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        if target.kind in ("member",):
            return text(404, "No such card.")
        if target.kind != "card":
            return text(403, "The address book and its parents stay; remove cards one by one.")
        assert target.uid is not None
        params: dict[str, Any] = {"uid": target.uid}
        params.update({key: value for key, value in (await self._conditions(request, target.uid, session)).items()
                       if key == "if_match"})
        if "if_match" not in params and await session.get(target.uid) is None:
            return text(404, "No such card.")
        await session.client.call("contacts.remove", params)
        return web.Response(status=204)

    # --- PROPFIND, PROPPATCH ---------------------------------------------------------------------------------------

    async def _propfind(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        depth = request.headers.get("Depth", "0").strip().lower()
        if depth == "infinity":
            raise Precondition(403, tag(DAV, "propfind-finite-depth"), "Depth is 0 or 1")
        if depth not in ("0", "1"):
            raise BadRequest("Depth is 0 or 1")
        asked = x.propfind(await self._body(request, MAX_BODY_BYTES))
        user = session.username
        body = Multistatus()
        if target.kind == "member":
            return text(404, "No such card.")
        if target.kind == "card":
            assert target.uid is not None
            found, _ = await session.fetch([target.uid])
            if target.uid not in found:
                return text(404, "No such card.")
            self._answer(body, x.card_href(user, target.uid), self._card_props(user, found[target.uid]), asked)
            return multistatus(body)
        listing: tuple[str, dict[str, Card]] | None = None
        if target.kind == "book" and depth == "1":
            listing = await session.listing()
            self._seen[user] = listing[0]
        token = None
        if target.kind == "book" and _wants(asked, (tag(CS, "getctag"), tag(DAV, "sync-token"))):
            token = listing[0] if listing is not None else await session.latest_token(self._seen.get(user))
            self._remember(user, token)
        self._answer(body, _href(target, user), self._collection_props(target.kind, user, token), asked)
        if depth == "1":
            if target.kind == "root":
                self._answer(body, x.principal_href(user), self._collection_props("principal", user, None), asked)
                self._answer(body, x.home_href(user), self._collection_props("home", user, None), asked)
            elif target.kind == "home":
                token = await session.latest_token(self._seen.get(user)) \
                    if _wants(asked, (tag(CS, "getctag"), tag(DAV, "sync-token"))) else None
                self._answer(body, x.book_href(user), self._collection_props("book", user, token), asked)
            elif listing is not None:
                cards = listing[1]
                if _wants(asked, (tag(DAV, "getcontentlength"), tag(CARD, "address-data"))):
                    cards, _ = await session.fetch(cards)
                for card in cards.values():
                    self._answer(body, x.card_href(user, card.uid), self._card_props(user, card), asked)
        return multistatus(body)

    def _remember(self, user: str, token: str) -> None:
        self._seen.pop(user, None)
        self._seen[user] = token
        while len(self._seen) > 4096:
            del self._seen[next(iter(self._seen))]

    async def _proppatch(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        names = x.proppatch(await self._body(request, MAX_BODY_BYTES))
        if target.kind == "member":
            return text(404, "No such card.")
        body = Multistatus()
        # Nothing is set: every property is protected, or not stored (RFC 4918 §9.2: all or none).
        body.propstat(_href(target, session.username, target.uid), {}, forbidden=names)
        return multistatus(body)

    @staticmethod
    def _answer(body: Multistatus, href: str, props: dict[str, Callable[[], Value]], asked: x.PropRequest) -> None:
        if asked.kind == "propname":
            body.names(href, props)
            return
        if asked.kind == "allprop":
            names = [name for name in props if name in ALLPROP] + [name for name in asked.names if name not in ALLPROP]
        else:
            names = list(asked.names)
        body.propstat(href, {name: (props[name]() if name in props else None) for name in names})

    def _collection_props(self, kind: str, user: str, token: str | None) -> dict[str, Callable[[], Value]]:
        types = {"root": [], "principal": [x.element(tag(DAV, "principal"))], "home": [],
                 "book": [x.element(tag(CARD, "addressbook"))]}[kind]
        names = {"root": "Roster", "principal": user, "home": "Address books", "book": "Contacts"}
        props: dict[str, Callable[[], Value]] = {
            tag(DAV, "resourcetype"): lambda: [x.element(tag(DAV, "collection")), *types],
            tag(DAV, "displayname"): lambda: names[kind],
            tag(DAV, "current-user-principal"): lambda: [x.href_element(x.principal_href(user))],
            tag(DAV, "current-user-privilege-set"): lambda: _privileges(kind == "book"),
            tag(DAV, "principal-collection-set"): lambda: [x.href_element("/dav/principals/")],
        }
        if kind == "principal":
            props[tag(DAV, "principal-URL")] = lambda: [x.href_element(x.principal_href(user))]
            props[tag(CARD, "addressbook-home-set")] = lambda: [x.href_element(x.home_href(user))]
        if kind == "book":
            props[tag(CARD, "addressbook-description")] = lambda: f"{user}'s contacts in Roster"
            props[tag(CARD, "supported-address-data")] = _address_data_types
            props[tag(CARD, "max-resource-size")] = lambda: str(MAX_CARD_BYTES)
            props[tag(DAV, "supported-report-set")] = _reports
            if token is not None:
                known: str = token
                props[tag(CS, "getctag")] = lambda: known
                props[tag(DAV, "sync-token")] = lambda: x.sync_uri(known)
            else:
                props[tag(CS, "getctag")] = lambda: None
                props[tag(DAV, "sync-token")] = lambda: None
        if kind in ("root", "home"):
            props[tag(CARD, "addressbook-home-set")] = lambda: [x.href_element(x.home_href(user))]
        return props

    def _card_props(self, user: str, card: Card) -> dict[str, Callable[[], Value]]:
        return {
            tag(DAV, "resourcetype"): lambda: [],
            tag(DAV, "getetag"): lambda: quoted(card.etag),
            tag(DAV, "getcontenttype"): lambda: CARD_CONTENT_TYPE,
            tag(DAV, "getcontentlength"): lambda: None if card.vcard is None else str(len(card.vcard.encode())),
            tag(CARD, "address-data"): lambda: card.vcard,
            tag(DAV, "current-user-principal"): lambda: [x.href_element(x.principal_href(user))],
            tag(DAV, "current-user-privilege-set"): lambda: _privileges(True),
        }

    # --- REPORT ----------------------------------------------------------------------------------------------------

    async def _report(self, request: web.Request, target: Target, session: Session) -> web.StreamResponse:
        asked = x.report(await self._body(request, MAX_BODY_BYTES))
        if target.kind != "book":
            raise Precondition(403, tag(DAV, "supported-report"), "REPORTs are made on the address book")
        user = session.username
        body = Multistatus()
        wants_data = _wants(asked.props, (tag(CARD, "address-data"), tag(DAV, "getcontentlength")))
        if isinstance(asked, x.Multiget):
            uids = {href: x.card_uid(href, user) for href in asked.hrefs}
            found, _ = await session.fetch(uid for uid in uids.values() if uid is not None)
            for href, uid in uids.items():
                if uid is not None and uid in found:
                    self._answer(body, x.card_href(user, uid), self._card_props(user, found[uid]), asked.props)
                else:
                    body.status(href, 404)
            return multistatus(body)
        if isinstance(asked, x.Query):
            token, listed = await session.listing()
            self._remember(user, token)
            cards, _ = await session.fetch(listed)
            matched = [card for card in cards.values() if card.vcard is not None and _matches(asked.filter, card.vcard)]
            limit = asked.limit if asked.limit is not None else len(matched)
            for card in matched[:limit]:
                self._answer(body, x.card_href(user, card.uid), self._card_props(user, card), asked.props)
            if len(matched) > limit:
                body.status(x.book_href(user), 507, f"only the first {limit} matches (the query's limit)")
            return multistatus(body)
        return await self._sync(body, asked, user, session, wants_data)

    async def _sync(self, body: Multistatus, asked: x.SyncCollection, user: str, session: Session,
                    wants_data: bool) -> web.StreamResponse:
        ceiling = min(asked.limit or MAX_SYNC_ITEMS, MAX_SYNC_ITEMS)
        since = asked.token
        changed: dict[str, Card] = {}
        removed: set[str] = set()
        more = False
        while True:
            try:
                answer = await session.changes(since, min(CHANGES_PAGE, ceiling - len(changed) - len(removed)))
            except RosterError as error:
                if error.code == INVALID_PARAMS and error.data.get("param") == "since":
                    raise Precondition(403, tag(DAV, "valid-sync-token"),
                                       "this sync-token has expired or is not one: sync again without one") from None
                raise
            for contact in answer.get("changed", []):
                removed.discard(contact["uid"])
                changed[contact["uid"]] = Card(contact["uid"], contact["etag"])
            for uid in answer.get("removed", []):
                changed.pop(uid, None)
                if asked.token is not None:
                    removed.add(uid)
            since = str(answer["token"])
            more = bool(answer.get("more"))
            if not more or len(changed) + len(removed) >= ceiling:
                break
        if wants_data and changed:
            fetched, gone = await session.fetch(changed)
            changed = fetched
            if asked.token is not None:
                removed |= gone
        for card in changed.values():
            self._answer(body, x.card_href(user, card.uid), self._card_props(user, card), asked.props)
        for uid in sorted(removed):
            body.status(x.card_href(user, uid), 404)
        if more:
            body.status(x.book_href(user), 507, "more changes follow: sync again from this sync-token")
        body.sync_token(since)
        if not more:
            self._remember(user, since)
        return multistatus(body)


ALLPROP = frozenset({tag(DAV, "resourcetype"), tag(DAV, "displayname"), tag(DAV, "getetag"),
                     tag(DAV, "getcontenttype"), tag(DAV, "getcontentlength"), tag(CS, "getctag"),
                     tag(DAV, "sync-token")})


def _wants(asked: x.PropRequest, names: Iterable[str]) -> bool:
    if asked.kind == "propname":
        return False
    wanted = set(asked.names) | (ALLPROP if asked.kind == "allprop" else set())
    return any(name in wanted for name in names)


def _href(target: Target, user: str, uid: str | None = None) -> str:
    if target.kind == "root":
        return "/dav/"
    if target.kind == "principal":
        return x.principal_href(user)
    if target.kind == "home":
        return x.home_href(user)
    if target.kind == "book":
        return x.book_href(user)
    return x.card_href(user, uid or target.uid or "")


def _privileges(writable: bool) -> list[Any]:
    names = ["read", "read-current-user-privilege-set"] + (["write-content", "bind", "unbind"] if writable else [])
    return [x.element(tag(DAV, "privilege"), children=[x.element(tag(DAV, name))]) for name in names]


def _address_data_types() -> list[Any]:
    types = []
    for version in ("3.0", "4.0"):
        made = x.element(tag(CARD, "address-data-type"))
        made.set("content-type", "text/vcard")
        made.set("version", version)
        types.append(made)
    return types


def _reports() -> list[Any]:
    return [x.element(tag(DAV, "supported-report"), children=[
        x.element(tag(DAV, "report"), children=[x.element(name)])])
        for name in (tag(CARD, "addressbook-multiget"), tag(CARD, "addressbook-query"), tag(DAV, "sync-collection"))]


def _strong(tags: tuple[ETag, ...]) -> list[str]:
    """The values of the strong ETags (a weak one never matches for a write, RFC 9110 §13.1.1)."""
    return [each.value for each in tags if not each.is_weak]


def _basic(request: web.Request) -> tuple[str, str]:
    header = request.headers.get(hdrs.AUTHORIZATION)
    if header is None:
        raise Refused(text(401, "Log in with your Roster username and an app password.", {"WWW-Authenticate": REALM}))
    try:
        auth = BasicAuth.decode(header, encoding="utf-8")
    except ValueError:
        raise Refused(text(401, "The Authorization header is not HTTP Basic with UTF-8 credentials.",
                           {"WWW-Authenticate": REALM})) from None
    if not auth.login or not auth.password:
        raise Refused(text(401, "Both a username and a password are needed.", {"WWW-Authenticate": REALM}))
    return auth.login, auth.password


def _user_agent(request: web.Request) -> str:
    """The client's name for the audit log: its User-Agent without control, format (bidi) or line-break
    characters, which session.hello refuses, and at most 128 characters."""
    raw = request.headers.get(hdrs.USER_AGENT, "")
    agent = "".join(char for char in raw if unicodedata.category(char) not in ("Cc", "Cf", "Zl", "Zp", "Cs")).strip()
    return agent[:MAX_USER_AGENT] or "CardDAV client"


def _parse_card(vcard: str) -> Any:
    try:
        return readOne(vcard, ignoreUnreadable=True)
    except Exception:  # vobject raises several kinds on a card it cannot read; rosterd says why on a PUT
        return None


def _matches(query: x.Filter, vcard: str) -> bool:
    card = _parse_card(vcard)
    if card is None:
        return False

    def values_of(name: str) -> list[str]:
        return [str(line.value) for line in card.contents.get(name.lower(), [])]
    return query.matches(values_of)
