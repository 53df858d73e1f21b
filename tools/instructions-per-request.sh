#!/bin/sh
# Instructions rosterd spends per pipelined users.check_username, counted by callgrind: repeatable to a few
# instructions whatever else the machine is doing, unlike timings. Runs the release build twice under
# valgrind (1,000 and 21,000 requests, 32 in flight) and prints the difference divided by 20,000.
# Usage: tools/instructions-per-request.sh [path/to/rosterd]   (needs valgrind and python3)
set -eu
rosterd=${1:-"$(dirname "$0")/../.build/release/rosterd"}
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }

count() {
    dir=$(mktemp -d)
    valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$rosterd" --socket "$dir/s.sock" \
        --database "$dir/db.sqlite" --config /dev/null >/dev/null 2>"$dir/err" &
    pid=$!
    python3 - "$dir/s.sock" "$1" <<'PY'
import socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(600):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); break
    except OSError:
        time.sleep(0.05)
names = [("user%07d" % i) if i % 2 == 0 else ("free%07d" % i) for i in range(64)] + ["ab", "bad name", "x!y!zzz"]
sent = got = 0
buf = b""
while got < n:
    batch = [b'{"jsonrpc":"2.0","id":%d,"method":"users.check_username","params":{"username":"%s"}}\n'
             % (i, names[i % len(names)].encode()) for i in range(sent, min(n, sent + 32))]
    sent += len(batch)
    s.sendall(b"".join(batch))
    while got < sent:
        buf += s.recv(65536)
        got += buf.count(b"\n")
        buf = buf[buf.rfind(b"\n") + 1:]
PY
    kill -TERM "$pid"
    wait "$pid" || true
    sed -n 's/^summary: //p; s/^totals: //p' "$dir"/out* | head -1
    rm -rf "$dir"
}

small=$(count 1000)
large=$(count 21000)
echo "instructions per check_username: $(( (large - small) / 20000 ))"
