#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-des.sh - the discrete-event engine's figures (issue 16), each the
# median of RUNS runs (default 3) of user time, with the simulated time so a
# speed-up that changed a result shows:
#   ring all_reduce 1 GiB, uniform (one node simulated): N = 4096, 16384;
#   ring all_reduce 1 GiB with one straggler (rank 5, 1.5x slower), every
#     rank simulated (the max-plus pass): N = 4096, 16384;
#   tree all_reduce 1 GiB (the nodes' chains and the heads' tree run apart,
#     equal chains once: coll/treepipe.h): N = 4096, 16384;
#   `collsim --version` start-up (the dynamic loader's cycles, and whether
#     libmpi is mapped: it should not be, MPI is loaded only under mpirun);
# then the closed-form and training-iteration benchmarks. The DES-priced
# 10,000-point crossover sweep is `build/tools/bench-sweep 1 1` (about
# 10 s). Numbers go into the README's Benchmarks section, not into timed
# tests. Usage: tools/bench-des.sh [BUILD_DIR]   (RUNS=5 for more runs)
set -eu
B=${1:-build}
C="$B/cli/collsim"
RUNS=${RUNS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-des.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
trap 'exit 130' INT
trap 'exit 143' TERM

# dgx-h100 with room for 16384 ranks and one straggler
sed 's/^nodes: 1 .*/nodes: 2048/' "$HERE/../configs/clusters/dgx-h100.yaml" >"$TMP/straggler.yaml"
printf 'des:\n  stragglers:\n    - {rank: 5, slowdown: 1.5}\n' >>"$TMP/straggler.yaml"

# median user time of RUNS runs of "$@", and the last CSV row's time_us
bench() {
    label=$1
    shift
    : >"$TMP/times"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        /usr/bin/time -f %U -o "$TMP/t" "$@" --format csv >"$TMP/out"
        cat "$TMP/t" >>"$TMP/times"
        i=$((i + 1))
    done
    med=$(sort -n "$TMP/times" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    sim=$(tail -n 1 "$TMP/out" | cut -d, -f9)
    printf '  %-44s %7s s user (median of %d)   simulated %s us\n' "$label" "$med" "$RUNS" "$sim"
}

echo "DES, all_reduce 1 GiB on dgx-h100 nodes of 8:"
for n in 4096 16384; do
    bench "ring, uniform, N=$n" "$C" collective --op all_reduce --ranks "$n" --bytes 1G --algo ring --engine des
done
for n in 4096 16384; do
    bench "ring, one straggler, N=$n" "$C" collective --cluster "$TMP/straggler.yaml" --op all_reduce \
        --ranks "$n" --bytes 1G --algo ring --engine des
done
for n in 4096 16384; do
    bench "tree, N=$n" "$C" collective --op all_reduce --ranks "$n" --bytes 1G --algo tree --engine des
done

echo "collsim --version start-up:"
cycles=$(LD_DEBUG=statistics "$C" --version 2>&1 >/dev/null | awk '/total startup time/ {print $(NF - 1)}')
echo "  dynamic loader: ${cycles:-?} cycles (LD_DEBUG=statistics)"
if LD_TRACE_LOADED_OBJECTS=1 "$C" | grep -q libmpi; then
    echo "  libmpi is loaded by a plain run"
else
    echo "  libmpi not loaded by a plain run ($(LD_TRACE_LOADED_OBJECTS=1 "$C" | wc -l) objects mapped)"
fi

echo "closed form (auto-free ring/simple evaluations, 4 rank counts x 5 ops x 11 sizes):"
"$B/tools/bench-closed-form"
echo "training iteration:"
"$B/tools/bench-iteration"
