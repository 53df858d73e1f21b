#!/bin/sh
# Instructions rosterd spends per request, counted by callgrind: repeatable to a few instructions whatever else
# the machine is doing, unlike timings. Runs the release build twice under valgrind and prints the difference
# divided by the requests between the two runs.
#   (default)    pipelined users.check_username, 32 in flight: 1,000 and 21,000 requests
#   --keystroke  register form keystrokes with debounce 0, one at a time, as roster-bench's typing scenario
#                sends them: a form.input of the username, its answer and its field events up to the final one
#                for that rev; 200 and 2,200 keystrokes
# Usage: tools/instructions-per-request.sh [--keystroke] [path/to/rosterd]   (needs valgrind and python3)
set -eu
scenario=check_username
if [ "${1:-}" = --keystroke ]; then scenario=keystroke; shift; fi
rosterd=${1:-"$(dirname "$0")/../.build/release/rosterd"}
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }

count() {
    dir=$(mktemp -d)
    valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$rosterd" --socket "$dir/s.sock" \
        --database "$dir/db.sqlite" --config /dev/null >/dev/null 2>"$dir/err" &
    pid=$!
    python3 - "$dir/s.sock" "$scenario" "$1" <<'PY'
import json, socket, sys, time
path, scenario, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(600):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); break
    except OSError:
        time.sleep(0.05)

def pipelined_check_username():
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

def keystrokes():
    f = s.makefile("rb")
    def send(i, method, params):
        s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
    def until(done):
        while not done(json.loads(f.readline())):
            pass
    def final(k):
        return lambda m: (m.get("method") == "event" and m["params"].get("type") == "field"
                          and m["params"].get("field") == "username" and m["params"].get("state") != "validating"
                          and m["params"].get("rev") == k)
    send(1, "session.hello", {"locale": "en", "timing": {"debounce_ms": 0}})
    until(lambda m: m.get("id") == 1)
    send(2, "form.open", {"form": "register"})
    until(lambda m: m.get("id") == 2)
    name = "monalisa26"
    for k in range(1, n + 1):
        send(2 + k, "form.input", {"form": "register", "field": "username", "value": name[:(k - 1) % len(name) + 1]})
        until(final(k))

pipelined_check_username() if scenario == "check_username" else keystrokes()
PY
    kill -TERM "$pid"
    wait "$pid" || true
    sed -n 's/^summary: //p; s/^totals: //p' "$dir"/out* | head -1
    rm -rf "$dir"
}

if [ "$scenario" = keystroke ]; then small=200 large=2200; else small=1000 large=21000; fi
first=$(count $small)
second=$(count $large)
echo "instructions per $scenario: $(( (second - first) / (large - small) ))"
