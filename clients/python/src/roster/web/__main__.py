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
from .forwarded import Network, TrustedProxies, proxy_network


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
                               trusted_proxies=TrustedProxies(tuple(options.trusted_proxy))))
    runner = web.AppRunner(gateway.application(), access_log=None, handle_signals=False)
    await runner.setup()
    host, port = options.listen
    try:
        listener = _listen(host, port)
    except OSError as error:
        await runner.cleanup()
        sys.exit(f"roster-web: cannot listen on {host}:{port}: {error.strerror}")
    await web.SockSite(runner, listener, ssl_context=tls).start()
    bound = int(listener.getsockname()[1])
    gateway.listening_on(host, bound)
    shown = f"[{host}]" if ":" in host else host
    print(f"roster-web serves {'https' if tls else 'http'}://{shown}:{bound}/ for rosterd at {socket_path}",
          flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    await stop.wait()
    await runner.cleanup()


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
    logging.basicConfig(level=logging.INFO, format="roster-web: %(message)s", stream=sys.stderr)
    asyncio.run(serve(arguments(argv)))


if __name__ == "__main__":
    main()
