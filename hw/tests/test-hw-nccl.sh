#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test-hw-nccl.sh - collsim-hw's NCCL backend, where it can run. Without a
# GPU (or in a build without CUDA/NCCL) the backend must say so in one line
# on stderr, print nothing on stdout, leave no CSV behind and exit 77 -
# which meson counts as "skipped". With a GPU: a checked all_reduce on one
# GPU, whose CSV has the contract header and one row per size.
#
# Usage: sh test-hw-nccl.sh COLLSIM-HW
set -eu
HW=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-hw-nccl.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
trap 'exit 130' INT
trap 'exit 143' TERM
rc=0
"$HW" bench --backend nccl --op all_reduce --min 1K --max 1M --factor 32 --iters 5 --warmup 2 \
    --check --timeout 60 -o "$TMP/out.csv" >"$TMP/out" 2>"$TMP/err" || rc=$?
if [ "$rc" -eq 77 ]; then
    cat "$TMP/err"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || { echo "FAIL: want one line on stderr"; exit 1; }
    grep -q "unavailable\|not built" "$TMP/err" || { echo "FAIL: unclear message"; exit 1; }
    [ -s "$TMP/out" ] && { echo "FAIL: stdout not empty"; exit 1; }
    [ -e "$TMP/out.csv" ] && { echo "FAIL: a CSV was left behind"; exit 1; }
    exit 77
fi
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; cat "$TMP/err"; exit 1; }
head -n 1 "$TMP/out.csv" | grep -q '^op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,busbw_GBps,time_min_us' \
    || { echo "FAIL: CSV header"; exit 1; }
[ "$(wc -l <"$TMP/out.csv")" -eq 3 ] || { echo "FAIL: want 2 rows"; cat "$TMP/out.csv"; exit 1; }
grep -q "^# Out of bounds values : 0 OK" "$TMP/out" || { echo "FAIL: check"; cat "$TMP/out"; exit 1; }
echo "ok"
