#!/bin/sh
# Check a username against the register rules: ./check-username.sh alice1
socket=${ROSTER_SOCKET:-${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/roster/roster.sock}
printf '{"id":1,"method":"users.check_username","params":{"username":"%s"}}\n' "${1:?usage: $0 USERNAME}" |
    socat -t 2 - "UNIX-CONNECT:$socket"
