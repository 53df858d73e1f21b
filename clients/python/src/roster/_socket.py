"""Where rosterd's socket is when nobody says: the same rule as rosterd and rosterctl (SocketLocation.swift)."""
from __future__ import annotations

import os
from collections.abc import Mapping

SYSTEM_SOCKET = "/run/roster/roster.sock"


def default_socket_path(environ: Mapping[str, str] | None = None, is_root: bool | None = None) -> str:
    """`$ROSTER_SOCKET`, else the system socket for root, else `$XDG_RUNTIME_DIR/roster/roster.sock`."""
    env = os.environ if environ is None else environ
    root = os.geteuid() == 0 if is_root is None else is_root
    explicit = env.get("ROSTER_SOCKET", "")
    if explicit:
        return explicit
    if root:
        return SYSTEM_SOCKET
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return os.path.join(runtime, "roster", "roster.sock")
    raise LookupError("XDG_RUNTIME_DIR is not set; pass socket_path or set ROSTER_SOCKET")
