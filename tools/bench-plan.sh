#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-plan.sh - `collsim plan` over the whole layout space (issue 24's
# target: under 10 s on the 2-core development machine): llama3-70b on 1024
# H100s (128 dgx-h100 nodes), every strategy x TP x PP x V x pipeline
# schedule x checkpointing policy x micro-batch, at the default global batch
# (1024 sequences of 8192 tokens: micro-batch 1 on every rank) and at Llama
# 3's 16M tokens (2048 sequences; Llama 3 paper Sec 3.4.1). Prints the median
# of RUNS runs (default 3) of wall and user time, the configurations
# simulated and layouts pruned, and the recommendation, so a speed-up that
# changed a result shows. Numbers go into the README's Benchmarks section.
# Usage: tools/bench-plan.sh [BUILD_DIR]   (RUNS=5 for more runs)
set -eu
B=${1:-build}
C="$B/cli/collsim"
RUNS=${RUNS:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-plan.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
trap 'exit 130' INT
trap 'exit 143' TERM

# median of the numbers in file $1
median() { sort -n "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

bench() {
    label=$1
    shift
    : >"$TMP/wall"
    : >"$TMP/user"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        /usr/bin/time -f '%e %U' -o "$TMP/t" "$C" plan "$@" >"$TMP/out"
        cut -d' ' -f1 "$TMP/t" >>"$TMP/wall"
        cut -d' ' -f2 "$TMP/t" >>"$TMP/user"
        i=$((i + 1))
    done
    printf '  %-36s %6s s wall, %6s s user (median of %d)\n' "$label" "$(median "$TMP/wall")" \
        "$(median "$TMP/user")" "$RUNS"
    counts=$(tr '\n' ' ' <"$TMP/out" |
        sed -n 's/.* \([0-9][0-9]*\) configurations simulated; \([0-9][0-9]*\) layouts pruned.*/\1 configurations simulated, \2 layouts pruned/p')
    printf '    %s\n' "$counts"
    sed -n 's/^recommended: /    recommended: /p' "$TMP/out"
}

echo "collsim plan, llama3-70b on 1024 H100 (dgx-h100), the whole layout space:"
bench "global batch 1024 (default)" --cluster dgx-h100 --ranks 1024 --model llama3-70b
bench "global batch 2048 (16M tokens)" --cluster dgx-h100 --ranks 1024 --model llama3-70b \
    --global-batch 2048
