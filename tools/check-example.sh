#!/bin/sh
# Checks that an outside package can use the RosterClient library product: examples/swift, built against this
# checkout, says hello to a throwaway rosterd (the debug build) and prints what it was answered.
# Run from the repository root after `swift build` and `swift build` in examples/swift.
set -eu

fail() { echo "check-example: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/roster-check-example.XXXXXX")
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

: > "$work/rosterd.conf"
.build/debug/rosterd --socket "$work/roster.sock" --database "$work/roster.db" --config "$work/rosterd.conf" \
    2> "$work/rosterd.log" &
pid=$!
tries=0
until [ -S "$work/roster.sock" ]; do
    tries=$((tries + 1))
    [ "$tries" -le 200 ] || fail "rosterd did not listen within 10 s: $(cat "$work/rosterd.log")"
    kill -0 "$pid" 2>/dev/null || fail "rosterd exited: $(cat "$work/rosterd.log")"
    sleep 0.05
done
out=$(ROSTER_SOCKET="$work/roster.sock" LANG=C.UTF-8 examples/swift/.build/debug/roster-hello) ||
    fail "roster-hello failed: $out"
# A fresh daemon: the name is free, and contacts.list before a log-in is refused as unauthenticated (1030).
[ "$(printf '%s\n' "$out" | sed -n 1p)" = "available" ] || fail "unexpected first line: $out"
printf '%s\n' "$out" | sed -n 2p | grep -q '^unauthenticated 1030 ' || fail "unexpected second line: $out"
kill "$pid"
wait "$pid" || fail "rosterd did not stop cleanly: $(cat "$work/rosterd.log")"
pid=
echo "ok: examples/swift (RosterClient from an outside package) answered: $(printf '%s' "$out" | tr '\n' '|')"
