#!/bin/sh
# SPDX-License-Identifier: MIT
#
# calibrate-loop.sh - the measure -> fit -> predict -> compare loop on local
# CPU ranks: `mpirun -np 2 collsim-hw bench --backend mpi` times all_reduce
# from 64 B to 16 MiB in steps of sqrt(2) (medians of 30 iterations), every
# other size is given to `collsim calibrate --cluster cpu-local`, and
# `collsim compare` scores the calibrated cluster on the held-back sizes. Local CPU timings are noisy, so
# the assertion is loose: the rows parse, the fit converges, the YAML loads,
# and the held-back median absolute error is within 50%. The actual errors
# (uncalibrated and calibrated) are printed. Each size is measured in 3
# separate bench runs and the run with the median time at that size is
# kept (a run a busy machine spoiled at some sizes is outvoted), and meson
# runs this test alone (is_parallel: false). The fit once failed on such
# data (weighted RMS 83%, held-back median 56%) because round one dropped
# LL and intra.efficiency for good; calibrate's second pass with second
# chances fits it (test-calibrate second_chance_after_round_one). The loop
# runs at most twice on fresh measurements; every run's errors are printed.
#
# Usage: sh tests/calibrate-loop.sh PATH/TO/collsim PATH/TO/collsim-hw
# Exit: 0 ok, 1 a check failed, 77 skipped (no mpirun, no collsim-hw, or
# collsim-hw built without MPI).
set -eu
HWLOOP_MPI=1
. "$(dirname "$0")/hwloop.sh"
ASAN_MPI="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-loop.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up): a trap that only
# cleaned up would let a killed run go on to fail every later check
trap 'exit 130' INT
trap 'exit 143' TERM

median() { # cluster -> "median_all max_all" of the held-back sizes
    "$C" compare --cluster "$1" --measurements "$TMP/held.csv" --summary --format csv |
        tail -1 | awk -F, '{ print $12, $14 }'
}

attempt() { # run number: 0 when the held-back median is within the bound, 1 when not
    run=$1
    for rep in 1 2 3; do
        rc=0
        ASAN_OPTIONS=$ASAN_MPI mpirun --allow-run-as-root --oversubscribe -np 2 "$HW" bench --backend mpi --op all_reduce \
            --min 64 --max 16M --factor 1.4142 --iters 30 --warmup 5 -o "$TMP/rep$rep.csv" >"$TMP/bench.out" 2>&1 || rc=$?
        if [ "$rc" -eq 77 ] || grep -q "not built" "$TMP/bench.out"; then
            echo "skip: collsim-hw has no MPI backend"
            exit 77
        fi
        if [ "$rc" -ne 0 ]; then
            echo "FAIL: collsim-hw bench exit $rc: $(tail -5 "$TMP/bench.out")"
            exit 1
        fi
    done
    # per size, the row of the run whose median time is the middle one
    # (comments and the header from the first run)
    awk -F, '
        FNR == 1 { f++ }
        /^#/ || !seen[f]++ { if (f == 1) print; next }
        { row[f, ++n[f]] = $0; split($0, c, ","); t[f, n[f]] = c[col] }
        END {
            for (i = 1; i <= n[1]; i++) {
                a = t[1, i]; b = t[2, i]; d = t[3, i]
                m = (a <= b) ? ((b <= d) ? 2 : ((a <= d) ? 3 : 1)) : ((a <= d) ? 1 : ((b <= d) ? 3 : 2))
                print row[m, i]
            }
        }' col=13 "$TMP/rep1.csv" "$TMP/rep2.csv" "$TMP/rep3.csv" >"$TMP/all.csv"

    # every other size to the fit, the rest held back (comments and header kept)
    awk -v out="$TMP" '
        /^#/ { print > (out "/train.csv"); print > (out "/held.csv"); next }
        !hdr { print > (out "/train.csv"); print > (out "/held.csv"); hdr = 1; next }
        { print > (out "/" ((n++ % 2) ? "held.csv" : "train.csv")) }' "$TMP/all.csv"
    rows=$(grep -vc '^#' "$TMP/all.csv")
    [ "$rows" -ge 36 ] || { echo "FAIL: bench wrote $rows lines, want a header and 35+ sizes"; exit 1; }

    rc=0
    "$C" calibrate --cluster cpu-local --measurements "$TMP/train.csv" -o "$TMP/cal.yaml" \
        >"$TMP/cal.out" 2>"$TMP/cal.err" || rc=$?
    if [ "$rc" -eq 3 ]; then # an unusable fit: timings a busy machine spoiled
        echo "calibrate-loop run $run: calibrate found the fit unusable (exit 3)"
        return 1
    fi
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: calibrate: $(cat "$TMP/cal.err")"
        exit 1
    fi
    head -1 "$TMP/cal.out" | grep -q "converged" || { echo "FAIL: fit: $(head -1 "$TMP/cal.out")"; exit 1; }
    "$C" collective --cluster "$TMP/cal.yaml" --ranks 2 --op all_reduce --bytes 1M >/dev/null ||
        { echo "FAIL: the calibrated YAML does not load"; exit 1; }

    set -- $(median cpu-local)
    unc_med=$1 unc_max=$2
    set -- $(median "$TMP/cal.yaml")
    cal_med=$1 cal_max=$2
    echo "calibrate-loop run $run: 2 MPI ranks, all_reduce 64 B..16 MiB (x sqrt 2), held-back sizes:" \
        "uncalibrated median $unc_med% (max $unc_max%), calibrated median $cal_med% (max $cal_max%)"
    grep -E "^  (intra|latency|hop|bw_factor)" "$TMP/cal.out" | grep -v kept || true
    awk -v m="$cal_med" 'BEGIN { exit !(m <= 50) }' && return 0
    echo "run $run: calibrated median error $cal_med% on held-back sizes exceeds 50%"
    head -3 "$TMP/cal.out"
    return 1
}

for run in 1 2; do
    attempt $run && exit 0
done
echo "FAIL: the calibrated median error exceeded 50% on held-back sizes in 2 runs"
cat "$TMP/cal.out" "$TMP/all.csv"
exit 1
