#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test-hw-nccl.sh - collsim-hw's NCCL backend, where it can run. Without a
# GPU (or in a build without CUDA/NCCL) the backend must say so in one line
# on stderr, print nothing on stdout, leave no CSV behind and exit 77 -
# which meson counts as "skipped". With a GPU: a checked all_reduce on one
# GPU, whose CSV has the contract header and one row per size.
# A pipeline's schedule (2 stages, p2p in NCCL groups): without a GPU its
# replay exits 77 with one clear line too; with 2 GPUs and mpirun it
# replays on 2 processes (else that part says why it is skipped).
#
# Usage: sh test-hw-nccl.sh COLLSIM-HW [COLLSIM]
set -eu
HW=$1
C=${2:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-hw-nccl.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
trap 'exit 130' INT
trap 'exit 143' TERM
rc=0
"$HW" bench --backend nccl --op all_reduce --min 1K --max 1M --factor 32 --iters 5 --warmup 2 \
    --check --timeout 60 -o "$TMP/out.csv" >"$TMP/out" 2>"$TMP/err" || rc=$?
# the pipeline's schedule, when collsim is given
if [ -n "$C" ]; then
    "$C" simulate --model gpt2-124m --ranks 2 --cluster dgx-h100 --pp 2 --grad-accum 4 --strategy ddp \
        --emit-schedule "$TMP/pp.json" >/dev/null || { echo "FAIL: simulate --pp 2 --emit-schedule"; exit 1; }
fi
if [ "$rc" -eq 77 ]; then
    cat "$TMP/err"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || { echo "FAIL: want one line on stderr"; exit 1; }
    grep -q "unavailable\|not built" "$TMP/err" || { echo "FAIL: unclear message"; exit 1; }
    [ -s "$TMP/out" ] && { echo "FAIL: stdout not empty"; exit 1; }
    [ -e "$TMP/out.csv" ] && { echo "FAIL: a CSV was left behind"; exit 1; }
    if [ -n "$C" ]; then
        prc=0
        "$HW" replay "$TMP/pp.json" --backend nccl -o "$TMP/pp" --iters 1 >"$TMP/pout" 2>"$TMP/perr" || prc=$?
        [ "$prc" -eq 77 ] || { echo "FAIL: pipeline replay without a GPU: exit $prc"; exit 1; }
        [ "$(wc -l <"$TMP/perr")" -eq 1 ] && grep -q "unavailable\|not built" "$TMP/perr" ||
            { echo "FAIL: pipeline replay without a GPU: unclear message"; cat "$TMP/perr"; exit 1; }
    fi
    exit 77
fi
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; cat "$TMP/err"; exit 1; }
head -n 1 "$TMP/out.csv" | grep -q '^op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,busbw_GBps,time_min_us' \
    || { echo "FAIL: CSV header"; exit 1; }
[ "$(wc -l <"$TMP/out.csv")" -eq 3 ] || { echo "FAIL: want 2 rows"; cat "$TMP/out.csv"; exit 1; }
grep -q "^# Out of bounds values : 0 OK" "$TMP/out" || { echo "FAIL: check"; cat "$TMP/out"; exit 1; }
# a 2-stage pipeline on 2 GPUs, one process each: its p2p batches (ncclSend /
# ncclRecv in one group) meet, every task has a row
if [ -n "$C" ]; then
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    if [ "$ngpu" -ge 2 ] && command -v mpirun >/dev/null 2>&1; then
        prc=0
        mpirun --allow-run-as-root --oversubscribe -np 2 "$HW" replay "$TMP/pp.json" --backend nccl \
            -o "$TMP/pp" --iters 2 --timeout 60 >"$TMP/pout" 2>"$TMP/perr" || prc=$?
        [ "$prc" -eq 0 ] || { echo "FAIL: pipeline replay: exit $prc"; cat "$TMP/perr"; exit 1; }
        [ "$(grep -c ',p2p,' "$TMP/pp.csv")" -eq 16 ] || { echo "FAIL: pipeline replay: p2p rows"; exit 1; }
    else
        echo "skip: the pipeline replay needs 2 GPUs and mpirun ($ngpu GPU(s))"
    fi
fi
echo "ok"
