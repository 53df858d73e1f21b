"""The aiohttp application: the pages, log-in, registration, recovery and log-out by POST, the passkey log-in's
ticket traded for the cookie, and the WebSocket relay."""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from ..async_client import AsyncClient
from ..errors import ConnectionLost, RosterError
from .budget import Refusal, SocketBudget, Ticket
from .dav import CardDav
from .connections import GatedConnection
from .forwarded import TrustedProxies, address_bucket, browser_address
from .guard import Guard
from .locale import from_accept_language, map_tag
from .pages import LOGGED_IN_PAGES, PAGES, render
from .relay import Ending, LogIns, RelayLimits, hello_params, log_refused_hello, relay
from .tickets import LoginTickets
from .words import WORDS

COOKIE = "roster_session"
STATIC_DIRECTORY = Path(__file__).with_name("static")
# 'self' covers the page's own ws:// (CSP 3); nothing inline runs, and no other site may frame the pages.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                               "form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
# How the daemon's refusal of a POST maps to HTTP: the page shows the daemon's message whatever the status.
STATUS_BY_REASON = {"rate_limited": 429, "busy": 503, "storage_unavailable": 503, "taken": 409,
                    "wrong_password": 401, "invalid_credentials": 401, "not_found": 401, "code_required": 401,
                    "invalid_code": 401, "locked": 403, "no_email": 409, "mail_unavailable": 503,
                    "invalid_ticket": 401}
# How often tokens of passkey log-ins whose ticket was never traded are looked for, and revoked.
SWEEP_SECONDS = 5.0
REFUSED_SOCKET = {Refusal.SESSION: "Too many open pages for this session.\n",
                  Refusal.ADDRESS: "Too many open pages from this address.\n",
                  Refusal.TOTAL: "Too many open pages on this gateway.\n"}
log = logging.getLogger("roster.web")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Settings:
    """What the gateway needs to know and may hold."""

    socket_path: str
    extra_hosts: tuple[str, ...] = ()
    tls: bool = False
    max_frame_bytes: int = 64 * 1024
    max_sockets_per_session: int = 8
    max_sockets: int = 512
    # WebSockets from one browser address (an IPv6 one by its /64), logged in or not (`--max-tabs-per-address`).
    max_sockets_per_address: int = 32
    # Seconds a POST's body may take to arrive once its head is in (`--body-timeout`).
    body_seconds: float = 10.0
    max_queued_bytes: int = 1024 * 1024
    # Log-ins, registrations and log-outs waiting on rosterd at once; past it a POST is answered 503 busy.
    max_posts: int = 32
    # The reverse proxies whose X-Forwarded-For names the browser (`--trusted-proxy`); none by default.
    trusted_proxies: TrustedProxies = TrustedProxies()


class Gateway:
    """One roster-web: its settings, whom it serves (`guard`, known once it listens) and its open sockets."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.guard = Guard(frozenset(), frozenset())
        self.sockets = SocketBudget(settings.max_sockets_per_session, settings.max_sockets,
                                    settings.max_sockets_per_address)
        self._posts = asyncio.Semaphore(settings.max_posts)
        # Tokens of passkey log-ins made over a tab's WebSocket, until the page trades its ticket for the cookie.
        self.tickets = LoginTickets()
        # Connections still owed their first request head (see connections.GatedConnection), by aiohttp protocol.
        self.awaiting_head: dict[object, GatedConnection] = {}
        # CardDAV under /dav/ (dav.py), on logged-in rosterd connections kept between requests (davpool.py).
        self.dav = CardDav(settings.socket_path, self._browser, settings.body_seconds)

    def listening_on(self, host: str, port: int) -> None:
        """Called once the port is bound (it may have been 0): from now on only these names are served."""
        self.guard = Guard.listening(host, port, self.settings.tls, self.settings.extra_hosts)

    def application(self) -> web.Application:
        app = web.Application(middlewares=[self._head_arrived, self._check_host],
                              client_max_size=self.settings.max_frame_bytes)
        app.router.add_get("/", self._home)
        for page in PAGES:
            app.router.add_get(f"/{page}", self._page)
        app.router.add_post("/register", self._register)
        app.router.add_post("/login", self._login)
        app.router.add_post("/forgot", self._recover_start)
        app.router.add_post("/recover", self._recover)
        app.router.add_post("/logout", self._logout)
        app.router.add_post("/passkey-login", self._passkey_login)
        app.router.add_get("/ws", self._websocket)
        self.dav.add_routes(app)
        app.router.add_static("/static", STATIC_DIRECTORY, show_index=False, follow_symlinks=False)
        app.on_response_prepare.append(_add_security_headers)
        app.cleanup_ctx.append(self._sweeping)
        return app

    async def _sweeping(self, _: web.Application) -> AsyncIterator[None]:
        """While the gateway runs: revokes, every few seconds, the tokens of passkey log-ins whose page never traded
        its ticket (it closed, or lost its way), so an abandoned log-in leaves no session behind."""
        async def sweep() -> None:
            while True:
                await asyncio.sleep(SWEEP_SECONDS)
                for token in self.tickets.abandoned():
                    await self._revoke(token)
                # CardDAV log-ins whose cached entry expired or was pushed out: their sessions end with them.
                for token in self.dav.cache.take_retired():
                    await self._revoke(token)
        task = asyncio.create_task(sweep())
        yield
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for token in self.tickets.drain() + self.dav.cache.drain():
            await self._revoke(token)
        await self.dav.pool.close()

    async def _revoke(self, token: str) -> None:
        try:
            client = await AsyncClient.connect(self.settings.socket_path, timeout=10.0)
        except ConnectionLost:
            return
        try:
            await client.call("session.hello", hello_params("en", None))
            await client.session_resume(token=token)
            await client.session_logout()
        except (RosterError, ConnectionLost, TimeoutError):
            pass  # already gone (logged out, revoked, expired), or the daemon is: either way nothing more to do
        finally:
            await client.close()

    @web.middleware
    async def _head_arrived(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """A request reached the application, so its connection's first head is in: the head deadline is off."""
        if (connection := self.awaiting_head.get(request.protocol)) is not None:
            connection.head_arrived()
        return await handler(request)

    @web.middleware
    async def _check_host(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self.guard.host_allowed(request.headers.get("Host")):
            log.info("refused a request for Host %r", request.headers.get("Host"))
            return web.Response(status=421, text="This gateway does not serve that host name.\n")
        origin = request.headers.get("Origin")
        # A CardDAV client is no browser page and sends no Origin; a page of another site that does is refused.
        dav = origin is None and (request.path.startswith("/dav") or request.path == "/.well-known/carddav")
        if request.method not in ("GET", "HEAD") and not dav and not self.guard.origin_allowed(origin):
            log.info("refused a %s from Origin %r", request.method, request.headers.get("Origin"))
            return web.Response(status=403, text="Cross-origin requests are refused.\n")
        return await handler(request)

    async def _home(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/contacts" if request.cookies.get(COOKIE) else "/login")

    async def _page(self, request: web.Request) -> web.StreamResponse:
        page = request.path.strip("/")
        if page in LOGGED_IN_PAGES and not request.cookies.get(COOKIE):
            raise web.HTTPFound("/login")
        return web.Response(text=render(page, _locale(request), logged_in=bool(request.cookies.get(COOKIE))),
                            content_type="text/html", charset="utf-8")

    async def _register(self, request: web.Request) -> web.StreamResponse:
        async def register(client: AsyncClient, form: dict[str, str]) -> str:
            email = form.get("email") or None
            created = await client.users_register(username=form.get("username", ""),
                                                  password=form.get("password", ""), email=email)
            login = await client.auth_login(username=created["username"], password=form.get("password", ""))
            return login["token"]
        # An email given is mailed a code by the daemon itself: the verify page is where it is typed.
        return await self._log_in(request, register, lambda form: "/verify" if form.get("email") else "/contacts")

    async def _login(self, request: web.Request) -> web.StreamResponse:
        async def login(client: AsyncClient, form: dict[str, str]) -> str:
            answer = await client.auth_login(username=form.get("username", ""), password=form.get("password", ""),
                                             code=form.get("code") or None)
            return answer["token"]
        return await self._log_in(request, login)

    async def _recover_start(self, request: web.Request) -> web.StreamResponse:
        """POST /forgot: asks rosterd to mail a recovery code. Its answer is the same whether or not the account
        exists or has a verified email, and so is this one."""
        form = await self._read_post(request)
        if isinstance(form, web.StreamResponse):
            return form
        fields: dict[str, str] = form

        async def start(client: AsyncClient) -> str:
            await client.auth_recover_start(username=fields.get("username", ""))
            return ""
        outcome = await self._with_daemon(request, _locale(request, fields.get("locale")), start)
        return outcome if isinstance(outcome, web.StreamResponse) else web.json_response({})

    async def _recover(self, request: web.Request) -> web.StreamResponse:
        """POST /recover: a mailed (or recovery) code sets a new password and logs in, as POST /login does."""
        async def recover(client: AsyncClient, form: dict[str, str]) -> str:
            answer = await client.auth_recover(username=form.get("username", ""), code=form.get("code", ""),
                                               new_password=form.get("new_password", ""))
            return answer["token"]
        return await self._log_in(request, recover)

    async def _log_in(self, request: web.Request, action: Callable[[AsyncClient, dict[str, str]], Awaitable[str]],
                      redirect: Callable[[dict[str, str]], str] = lambda _: "/contacts") -> web.StreamResponse:
        """A POST whose `action` answers a token: it goes into the cookie, and the page is sent to `redirect`."""
        form = await self._read_post(request)
        if isinstance(form, web.StreamResponse):
            return form
        fields: dict[str, str] = form
        locale = _locale(request, fields.get("locale"))
        outcome = await self._with_daemon(request, locale, lambda client: action(client, fields))
        if not isinstance(outcome, str):
            return outcome
        response = web.json_response({"redirect": redirect(fields)})
        response.set_cookie(COOKIE, outcome, path="/", httponly=True, samesite="Strict", secure=_secure(request))
        return response

    async def _read_post(self, request: web.Request) -> dict[str, str] | web.StreamResponse:
        """The POST's JSON body, read within the body deadline; a late or unreadable one is answered here."""
        try:
            async with asyncio.timeout(self.settings.body_seconds):
                form = await _form(request)
        except TimeoutError:
            log.info("closed a POST whose body took over %g s", self.settings.body_seconds)
            response = web.json_response({"reason": "timeout"}, status=408)
            response.force_close()
            return response
        if form is None:
            return web.json_response({"reason": "invalid_request"}, status=400)
        return form

    async def _passkey_login(self, request: web.Request) -> web.StreamResponse:
        """POST /passkey-login {ticket}: the page's passkey log-in, made on its WebSocket, becomes the cookie. The
        ticket is good once, for a few seconds, from the browser address it was issued to."""
        form = await self._read_post(request)
        if isinstance(form, web.StreamResponse):
            return form
        held = self.tickets.redeem(form.get("ticket", ""), address_bucket(self._browser(request)))
        if held is None:
            locale = _locale(request, form.get("locale"))
            return web.json_response({"reason": "invalid_ticket", "message": WORDS[locale]["passkey_ticket"]},
                                     status=STATUS_BY_REASON["invalid_ticket"])
        response = web.json_response({"redirect": "/contacts"})
        response.set_cookie(COOKIE, held.token, path="/", httponly=True, samesite="Strict", secure=_secure(request))
        return response

    async def _logout(self, request: web.Request) -> web.StreamResponse:
        cookie = request.cookies.get(COOKIE)
        if cookie:
            token: str = cookie

            async def logout(client: AsyncClient) -> str:
                try:
                    await client.session_resume(token=token)
                except RosterError as error:
                    if error.reason != "not_found":
                        raise
                    return ""
                await client.session_logout()
                return ""
            outcome = await self._with_daemon(request, _locale(request), logout)
            if not isinstance(outcome, str):
                return outcome
        response = web.json_response({"redirect": "/login"})
        response.set_cookie(COOKIE, "", path="/", max_age=0, expires="Thu, 01 Jan 1970 00:00:00 GMT",
                            httponly=True, samesite="Strict", secure=_secure(request))
        return response

    def _browser(self, request: web.Request) -> str | None:
        """The address of the browser behind `request`, as rosterd is told it (see forwarded.browser_address)."""
        return browser_address(request.remote, request.headers.getall("X-Forwarded-For", []),
                               self.settings.trusted_proxies)

    async def _with_daemon(self, request: web.Request, locale: str,
                           action: Callable[[AsyncClient], Awaitable[str]]) -> str | web.StreamResponse:
        """Runs `action` on a connection of its own, said to be `request`'s browser's in `locale`; a refusal becomes
        the JSON answer for the page."""
        if self._posts.locked():
            return web.json_response({"reason": "busy", "retry_after_ms": 1000}, status=503,
                                     headers={"Retry-After": "1"})
        async with self._posts:
            try:
                client = await AsyncClient.connect(self.settings.socket_path, timeout=30.0)
            except ConnectionLost:
                return web.json_response({"reason": "unavailable"}, status=503)
            try:
                try:
                    await client.call("session.hello", hello_params(locale, self._browser(request)))
                except RosterError as error:
                    # The gateway's own setup failed, not the browser's request: it is told only that.
                    log_refused_hello(error.reason)
                    return web.json_response({"reason": "unavailable"}, status=503)
                return await action(client)
            except RosterError as error:
                answer: dict[str, Any] = {"reason": error.reason, "message": error.message}
                for key in ("field", "retry_after_ms"):
                    if key in error.data:
                        answer[key] = error.data[key]
                return web.json_response(answer, status=STATUS_BY_REASON.get(error.reason, 400))
            except (ConnectionLost, TimeoutError):
                return web.json_response({"reason": "unavailable"}, status=503)
            finally:
                await client.close()

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        # The middleware checked Host; a WebSocket upgrade is a GET, so its Origin is checked here.
        if not self.guard.origin_allowed(request.headers.get("Origin")):
            log.info("refused a WebSocket from Origin %r", request.headers.get("Origin"))
            return web.Response(status=403, text="Cross-origin WebSockets are refused.\n")
        token = request.cookies.get(COOKIE) or None
        key = self.sockets.acquire(token, address_bucket(self._browser(request)))
        if isinstance(key, Refusal):
            log.info("refused a WebSocket: too many open pages (%s)", key.value)
            return web.Response(status=429, text=REFUSED_SOCKET[key], headers={"Retry-After": "5"})
        ticket: Ticket = key
        try:
            ws = web.WebSocketResponse(max_msg_size=self.settings.max_frame_bytes, heartbeat=30.0)
            await ws.prepare(request)
            locale = _locale(request, request.query.get("locale"))
            browser = self._browser(request)
            log_ins = LogIns(self.tickets, address_bucket(browser), set(), WORDS[locale]["passkey_busy"])
            ending = await relay(ws, request, self.settings.socket_path, locale, browser, token,
                                 RelayLimits(self.settings.max_queued_bytes), WORDS[locale]["not_relayed"], log_ins)
            if ending is Ending.TOO_SLOW:
                log.info("closed a WebSocket whose browser stopped reading (1008)")
            return ws
        finally:
            self.sockets.release(ticket)


async def _form(request: web.Request) -> dict[str, str] | None:
    """The POST's JSON object of strings. Only JSON is read: another site's plain HTML form cannot send it. JSON is
    UTF-8 (RFC 8259 §8.1), so a body said to be in any other charset is refused, not decoded by a codec it names."""
    if request.content_type != "application/json":
        return None
    if (request.charset or "utf-8").lower() not in ("utf-8", "utf8"):
        log.info("refused a POST whose body is said to be in a charset other than UTF-8")
        return None
    try:
        body = json.loads((await request.read()).decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(body, dict) or not all(isinstance(value, str) for value in body.values()):
        return None
    return body


def _secure(request: web.Request) -> bool | None:
    """`Secure` for a page served over TLS, by this gateway or by a proxy in front of it (the Origin, which the
    middleware has checked against the gateway's own, says which)."""
    return True if (request.headers.get("Origin") or "").startswith("https://") else None


def _locale(request: web.Request, chosen: str | None = None) -> str:
    """`?lang=` (or the page's own choice) when it names one of the four languages, else Accept-Language."""
    for tag in (chosen, request.query.get("lang")):
        if tag and (mapped := map_tag(tag)) is not None:
            return mapped
    return from_accept_language(request.headers.get("Accept-Language"))


async def _add_security_headers(_: web.Request, response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
