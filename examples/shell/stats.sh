#!/bin/sh
# The daemon's counters (root or the daemon's own user only), pretty-printed with python3.
socket=${ROSTER_SOCKET:-${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/roster/roster.sock}
echo '{"id":1,"method":"admin.stats"}' | socat -t 2 - "UNIX-CONNECT:$socket" | python3 -m json.tool
