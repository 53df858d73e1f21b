#!/bin/sh
# Instructions rosterd spends per keystroke in the register form (debounce 0): a `form.input` of the username,
# its answer, and the field events up to the final one for that rev, as roster-bench's typing scenario sends
# them, but one at a time on one connection. Counted by callgrind, so repeatable whatever else the machine is
# doing. Runs the release build twice under valgrind (200 and 2,200 keystrokes) and prints the difference
# divided by 2,000.
# Usage: tools/instructions-per-keystroke.sh [path/to/rosterd]   (needs valgrind and python3)
set -eu
rosterd=${1:-"$(dirname "$0")/../.build/release/rosterd"}
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }

count() {
    dir=$(mktemp -d)
    valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$rosterd" --socket "$dir/s.sock" \
        --database "$dir/db.sqlite" --config /dev/null >/dev/null 2>"$dir/err" &
    pid=$!
    python3 - "$dir/s.sock" "$1" <<'PY'
import json, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(600):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); break
    except OSError:
        time.sleep(0.05)
f = s.makefile("rb")
def send(i, method, params):
    s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
def until(done):
    while True:
        line = json.loads(f.readline())
        if done(line): return
send(1, "session.hello", {"locale": "en", "timing": {"debounce_ms": 0}})
until(lambda m: m.get("id") == 1)
send(2, "form.open", {"form": "register"})
until(lambda m: m.get("id") == 2)
name = "mona" + "lisa26"
for k in range(1, n + 1):
    send(2 + k, "form.input", {"form": "register", "field": "username", "value": name[:(k - 1) % len(name) + 1]})
    until(lambda m: m.get("method") == "event" and m["params"].get("type") == "field"
          and m["params"].get("field") == "username" and m["params"].get("state") != "validating"
          and m["params"].get("rev") == k)
PY
    kill -TERM "$pid"
    wait "$pid" || true
    sed -n 's/^summary: //p; s/^totals: //p' "$dir"/out* | head -1
    rm -rf "$dir"
}

small=$(count 200)
large=$(count 2200)
echo "instructions per keystroke: $(( (large - small) / 2000 ))"
