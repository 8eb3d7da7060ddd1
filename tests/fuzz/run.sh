#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run.sh - one libFuzzer target for a fixed budget: a corpus of its own in
# the build directory (created; new inputs go there), then the found/ and
# seed directories (read only). A crash, leak or sanitizer report fails;
# the reproducer is left in the build directory (libFuzzer's crash-*), and
# belongs in tests/fuzz/found/NAME/ once fixed. The last status line
# (execs, coverage) is printed. Every target gets hostile.dict's tokens.
#
# Usage: run.sh FUZZER SECONDS CORPUS_DIR [SEED_DIR_OR_FILE...]
set -eu
FUZZER=$1
SECS=$2
CORPUS=$3
shift 3
mkdir -p "$CORPUS"
# libFuzzer reads directories: a seed file is copied into the corpus
dirs=""
for d in "$@"; do
    if [ -d "$d" ]; then dirs="$dirs $d"; elif [ -f "$d" ]; then cp "$d" "$CORPUS/"; fi
done
set -- "$CORPUS" $dirs
# the shared dictionary of hostile tokens (NUL bytes, huge integers: issue 27)
DICT="$(cd "$(dirname "$0")" && pwd)/hostile.dict"
[ -f "$DICT" ] && set -- -dict="$DICT" "$@"
LOG="$CORPUS.log"
rc=0
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    "$FUZZER" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$CORPUS-" "$@" >"$LOG" 2>&1 || rc=$?
grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$LOG" | tail -1
grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$LOG" || true
if [ "$rc" -ne 0 ]; then
    tail -40 "$LOG"
    exit 1
fi
