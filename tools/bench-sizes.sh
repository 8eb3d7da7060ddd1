#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-sizes.sh - how long `collsim memory`, `simulate` and `plan` take as
# the model grows (a generic model of 1e9, 1e12 and 1e15 parameters on 8
# ranks, DDP and FSDP FULL_SHARD) and as grad-accum grows (1 and 1e6 on
# gpt2-124m): issue 27's figures, which must stay in milliseconds because
# the iteration graph's size depends on neither (DDP's equal buckets are one
# task with a count; micro-steps past the first few are extrapolated). Each
# command once, wall time, cut at LIMIT seconds (default 20) and printed as
# ">LIMIT" then. A benchmark, not a timed test.
# Usage: tools/bench-sizes.sh [BUILD_DIR]
set -u
B=${1:-build}
C=${CS_COLLSIM:-$B/cli/collsim}
LIMIT=${LIMIT:-20}
run() {
    s=$(date +%s.%N)
    timeout "$LIMIT" "$C" "$@" >/dev/null 2>&1
    rc=$?
    e=$(date +%s.%N)
    if [ $rc -eq 124 ]; then t=">$LIMIT s"; else t=$(echo "$e - $s" | bc | awk '{printf "%.3f s", $1}'); fi
    printf '%-10s %-44s rc=%-3s %s\n' "$1" "$*" "$rc" "$t" | cut -c1-120
}
for cmd in memory simulate plan; do
    for p in 1e9 1e12 1e15; do
        run "$cmd" --params "$p" --ranks 8 --strategy ddp,fsdp_full_shard
    done
    for g in 1 1000000; do
        run "$cmd" --model gpt2-124m --ranks 8 --strategy ddp,fsdp_full_shard --grad-accum "$g"
    done
done
