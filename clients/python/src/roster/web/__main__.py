"""`python -m roster.web`: serves the pages on 127.0.0.1:8080 until SIGINT or SIGTERM."""
from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import ssl
import sys

from aiohttp import web

from .._socket import default_socket_path
from .app import Gateway, Settings
from .connections import ConnectionGate, gated
from .forwarded import Network, TrustedProxies, proxy_network
from .logthrottle import SUMMARY, LogThrottle


def parse_listen(value: str) -> tuple[str, int]:
    host, separator, port = value.rpartition(":")
    if not separator or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def parse_proxy(value: str) -> Network:
    try:
        return proxy_network(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an IP address or CIDR block") from None


def positive_int(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return int(value)


def seconds(value: str) -> float:
    try:
        parsed = float(value)
    except ValueError:
        parsed = -1.0
    if not 0.0 < parsed <= 3600.0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds above 0 and at most 3600")
    return parsed


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="roster-web", description="The Roster web front end: a gateway from "
                                     "browsers to rosterd, one daemon connection per browser tab.")
    parser.add_argument("--listen", type=parse_listen, default=("127.0.0.1", 8080), metavar="HOST:PORT",
                        help="where to listen (default 127.0.0.1:8080; port 0 picks a free one)")
    parser.add_argument("--socket", help="rosterd's socket (default: $ROSTER_SOCKET, then as rosterctl finds it)")
    parser.add_argument("--host", action="append", default=[], metavar="[https://]NAME[:PORT]",
                        help="another name browsers use for this gateway; https://NAME for a TLS reverse proxy "
                             "in front of it; repeatable")
    parser.add_argument("--tls-certificate", metavar="FILE", help="serve HTTPS with this certificate chain")
    parser.add_argument("--tls-key", metavar="FILE", help="the certificate's private key")
    parser.add_argument("--trusted-proxy", type=parse_proxy, action="append", default=[], metavar="ADDR[/BITS]",
                        help="a reverse proxy in front of the gateway (an address or a CIDR block; repeatable): "
                             "for a request from it, the browser's address rosterd is told is the rightmost "
                             "X-Forwarded-For entry that is not a trusted proxy. Without one, X-Forwarded-For is "
                             "ignored and the browser's address is the TCP peer's")
    bounds = parser.add_argument_group("bounds", "what one browser address, and everyone, may hold (the unit's "
                                       "LimitNOFILE= must stay above --max-connections plus one daemon connection "
                                       "per tab and per POST: 1024 + 512 + 32 by default)")
    bounds.add_argument("--max-connections", type=positive_int, default=1024, metavar="N",
                        help="open TCP connections in all, counted before any byte is read (default 1024); "
                             "past it a new one is answered 503 and closed")
    bounds.add_argument("--max-connections-per-address", type=positive_int, default=64, metavar="N",
                        help="open TCP connections from one peer address, an IPv6 one by its /64 (default 64; a "
                             "--trusted-proxy counts only in all); past it a new one is answered 429 and closed")
    bounds.add_argument("--max-tabs-per-address", type=positive_int, default=32, metavar="N",
                        help="WebSockets from one browser address (as rosterd is told it, behind --trusted-proxy "
                             "too; IPv6 by its /64), logged in or not (default 32); past it HTTP 429")
    bounds.add_argument("--header-timeout", type=seconds, default=10.0, metavar="SECONDS",
                        help="for a request head to arrive, the first on a connection or the next on a kept-alive "
                             "one (default 10); past it the connection is answered 408 and closed")
    bounds.add_argument("--body-timeout", type=seconds, default=10.0, metavar="SECONDS",
                        help="for a POST's body to arrive once its head is in (default 10); past it HTTP 408")
    bounds.add_argument("--log-interval", type=seconds, default=10.0, metavar="SECONDS",
                        help="one log line per kind of event in this time, then a count of the rest (default 10)")
    parser.add_argument("--max-queued-bytes", type=int, default=1024 * 1024, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if bool(options.tls_certificate) != bool(options.tls_key):
        parser.error("--tls-certificate and --tls-key go together")
    return options


async def serve(options: argparse.Namespace) -> None:
    try:
        socket_path = options.socket or default_socket_path()
    except LookupError as error:
        sys.exit(f"roster-web: {error}")
    tls = None
    if options.tls_certificate:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(options.tls_certificate, options.tls_key)
    gateway = Gateway(Settings(socket_path=socket_path, extra_hosts=tuple(options.host), tls=tls is not None,
                               max_queued_bytes=options.max_queued_bytes,
                               max_sockets_per_address=options.max_tabs_per_address,
                               body_seconds=options.body_timeout,
                               trusted_proxies=TrustedProxies(tuple(options.trusted_proxy))))
    # aiohttp's keep-alive timeout bounds every head after the first on a connection; an unread body is drained
    # (lingering) no longer than a read one may take.
    runner = web.AppRunner(gateway.application(), access_log=None, handle_signals=False,
                           keepalive_timeout=options.header_timeout, lingering_time=options.body_timeout)
    await runner.setup()
    gate = ConnectionGate(options.max_connections_per_address, options.max_connections,
                          TrustedProxies(tuple(options.trusted_proxy)))
    host, port = options.listen
    try:
        listener = _listen(host, port)
    except OSError as error:
        await runner.cleanup()
        sys.exit(f"roster-web: cannot listen on {host}:{port}: {error.strerror}")
    loop = asyncio.get_running_loop()
    assert runner.server is not None, "set up above"
    # Not web.SockSite: its server hands each connection to aiohttp at once, and the gate must see it first.
    server = await loop.create_server(gated(runner.server, gate, options.header_timeout, gateway.awaiting_head),
                                      sock=listener, ssl=tls,
                                      ssl_handshake_timeout=options.header_timeout if tls else None)
    bound = int(listener.getsockname()[1])
    gateway.listening_on(host, bound)
    shown = f"[{host}]" if ":" in host else host
    print(f"roster-web serves {'https' if tls else 'http'}://{shown}:{bound}/ for rosterd at {socket_path}",
          flush=True)
    stop = asyncio.Event()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    counting = asyncio.create_task(_say_counts(options.log_interval))
    await stop.wait()
    counting.cancel()
    server.close()
    await runner.cleanup()


async def _say_counts(interval: float) -> None:
    """Says how many lines each throttled kind dropped, once its window has closed."""
    while True:
        await asyncio.sleep(interval)
        for handler in logging.getLogger().handlers:
            for each in handler.filters:
                if isinstance(each, LogThrottle):
                    for line in each.flush():
                        logging.getLogger("roster.web").warning("%s", line, extra={SUMMARY: True})


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that port 0's real port is known before the first request."""
    family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
        listener.setblocking(False)
    except OSError:
        listener.close()
        raise
    return listener


def main(argv: list[str] | None = None) -> None:
    options = arguments(argv)
    logging.basicConfig(level=logging.INFO, format="roster-web: %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        handler.addFilter(LogThrottle(options.log_interval))
    asyncio.run(serve(options))


if __name__ == "__main__":
    main()
