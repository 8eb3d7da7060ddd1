#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-main.sh - how long the README's main command takes: `collsim
# crossover --ranks 8,64,512 --plot crossover.svg` on the built-in dgx-h100
# (41 model sizes x 3 rank counts x 3 strategies, each strategy at its
# fastest micro-batch and checkpointing at a 1024-sequence batch, the
# crossings refined, the rule of thumb checked at six sizes per rank count,
# five plots drawn by gnuplot), RUNS times (default 5); prints each run's
# wall and CPU (user + system) seconds, then the medians, and the load
# average, since a shared machine's figures depend on it. A benchmark, not
# a timed test (issue 21's target: under 5 s on a 2-core machine).
# Usage: tools/bench-main.sh [BUILD_DIR]
set -eu
B=${1:-build}
C=${CS_COLLSIM:-$B/cli/collsim}
RUNS=${RUNS:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
i=0
while [ "$i" -lt "$RUNS" ]; do
    /usr/bin/time -f '%e %U %S' -o "$T/t" "$C" crossover --ranks 8,64,512 --plot "$T/crossover.svg" >"$T/out"
    read -r wall user sys <"$T/t"
    cpu=$(echo "$user + $sys" | bc | awk '{printf "%.2f", $1}')
    echo "run $((i + 1)): wall $wall s, cpu $cpu s"
    echo "$wall $cpu" >>"$T/all"
    i=$((i + 1))
done
sort -n -k1 "$T/all" | awk '{w[NR] = $1} END {printf "median wall %.2f s", w[int((NR + 1) / 2)]}'
sort -n -k2 "$T/all" | awk '{c[NR] = $2} END {printf ", median cpu %.2f s", c[int((NR + 1) / 2)]}'
echo ", load average $(cut -d' ' -f1-3 /proc/loadavg)"
