#!/bin/sh
# Say hello to rosterd: which server, version and protocol, in English.
socket=${ROSTER_SOCKET:-${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/roster/roster.sock}
echo '{"id":1,"method":"session.hello","params":{"locale":"en"}}' | socat -t 2 - "UNIX-CONNECT:$socket"
