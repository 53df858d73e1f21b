#!/bin/sh
# Instructions the contacts parsers spend per byte of import, counted by callgrind (issue 12: CSV was quadratic
# in the line breaks inside a quoted field). Runs `roster-bench --parse-once` under valgrind on the parse
# scenario's input (one field of nothing but line breaks) at 0, 1 MiB and 4 MiB, and prints instructions per
# byte over the first MiB and over all four: a linear parser gives the same figure twice.
# Usage: tools/instructions-per-parse.sh [path/to/roster-bench]   (needs valgrind)
set -eu
bench=${1:-"$(dirname "$0")/../.build/release/roster-bench"}
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }

count() {
    dir=$(mktemp -d)
    valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$bench" --parse-once "$1" "$2" >/dev/null 2>"$dir/err" \
        || { cat "$dir/err" >&2; exit 1; }
    sed -n 's/^summary: //p; s/^totals: //p' "$dir"/out* | head -1
    rm -rf "$dir"
}

for format in csv vcard; do
    none=$(count "$format" 0)
    one=$(count "$format" 1048576)
    four=$(count "$format" 4194304)
    echo "$format: $(( (one - none) / 1048576 )) instructions per byte at 1 MiB," \
         "$(( (four - none) / 4194304 )) at 4 MiB"
done
