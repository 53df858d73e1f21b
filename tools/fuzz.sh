#!/bin/sh
# Runs one libFuzzer target of `make fuzz` for SECONDS, from the repository root, after the fuzzer build.
#   tools/fuzz.sh TARGET SECONDS run     new inputs join Fuzz/corpus/TARGET, which is then minimized (-merge=1)
#   tools/fuzz.sh TARGET SECONDS smoke   the corpus is replayed and fuzzed, and left as it is (`make test`)
# TARGET is `request` (roster-fuzz, the whole request path) or a parser of roster-fuzz-parsers (vcard, csv, json,
# framer, ini, conninfo, remote, base32, notify, mail, webauthn, card). A crash, a timeout or a broken property exits non-zero, with
# the input in Fuzz/crashes/; files named known-crash-* (inputs that once crashed) and keep-* (inputs put there on
# purpose, for paths whose checks may come later) survive the minimizing as they are. The last line is
# `fuzz TARGET: N runs, N exec/s, corpus N files, cov N, ft N` for the report.
set -eu

target=$1
seconds=$2
mode=$3
binary=.build-fuzz/debug/roster-fuzz-parsers
[ "$target" = request ] && binary=.build-fuzz/debug/roster-fuzz
[ -x "$binary" ] || { echo "fuzz: $binary is not built (make fuzz-build)" >&2; exit 2; }
corpus=Fuzz/corpus/$target
[ -d "$corpus" ] || { echo "fuzz: no corpus $corpus" >&2; exit 2; }
mkdir -p Fuzz/crashes
work=$(mktemp -d "${TMPDIR:-/tmp}/roster-fuzz-$target.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The request target speaks in whole request sessions, which need more room than one parser's input.
max_len=4096
[ "$target" = request ] && max_len=8192

export SWIFT_BACKTRACE=enable=no ROSTER_FUZZ_TARGET="$target"
# New inputs go to the first directory: the repository's corpus only in `run` mode.
first=$corpus
[ "$mode" = smoke ] && first=$work/new
mkdir -p "$first"
status=0
"$binary" -max_total_time="$seconds" -max_len=$max_len -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="Fuzz/crashes/$target-" "$first" "$corpus" > "$work/log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    tail -n 40 "$work/log" >&2
    echo "fuzz $target: FAILED (exit $status); the input is in Fuzz/crashes/$target-*" >&2
    exit 1
fi

if [ "$mode" = run ]; then
    mkdir "$work/merged"
    "$binary" -merge=1 -max_len=$max_len -timeout=10 "$work/merged" "$corpus" > "$work/merge.log" 2>&1 || {
        tail -n 20 "$work/merge.log" >&2; echo "fuzz $target: minimizing failed" >&2; exit 1; }
    for kept in "$corpus"/known-crash-* "$corpus"/keep-*; do [ -e "$kept" ] && cp "$kept" "$work/merged/"; done
    rm -rf "$corpus"
    mv "$work/merged" "$corpus"
fi

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1 | cut -d' ' -f2)
ft=$(grep -o 'ft: [0-9]*' "$work/log" | tail -n 1 | cut -d' ' -f2)
files=$(find "$corpus" -type f | wc -l)
echo "fuzz $target: ${runs:-?} runs, ${speed:-?} exec/s, corpus $files files, cov ${cov:-?}, ft ${ft:-?} (${seconds} s, $mode)"
