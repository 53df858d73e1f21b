#!/bin/sh
# Stream the register form's verdicts for one username (debounce 0 for this connection), for a second.
socket=${ROSTER_SOCKET:-${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/roster/roster.sock}
{
    echo '{"id":1,"method":"session.hello","params":{"locale":"en","timing":{"debounce_ms":0}}}'
    echo '{"id":2,"method":"form.open","params":{"form":"register"}}'
    printf '{"id":3,"method":"form.input","params":{"form":"register","field":"username","value":"%s"}}\n' "${1:-alice1}"
    sleep 1  # keep the connection open: events come after the answers
} | socat -t 2 - "UNIX-CONNECT:$socket"
