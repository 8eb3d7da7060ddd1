#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-mpi.sh - `collsim crossover` scaled out with MPI: under
# `mpirun -np K` (K = 2, 3, 4) the grid is split across processes and
# gathered on rank 0, whose output (stdout, -o, --crossings) must be
# byte-identical to a serial run; no other rank prints anything; an error
# that only some rank meets is reported once, as the serial run reports it.
# A plain run does not load MPI (collsim-mpi.so is loaded under mpirun).
#
# Usage: sh tests/cli-mpi.sh PATH/TO/collsim mpi|no-mpi
#   (the second argument says whether collsim was built with MPI).
# Exits 77 (skipped) without mpirun or without MPI in collsim; 1 if any
# check failed. Under AddressSanitizer, leaks inside OpenMPI are suppressed
# (tests/lsan-mpi.supp); collsim's own are still reported.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 PATH/TO/collsim mpi|no-mpi" >&2
    exit 2
fi
COLLSIM=$1
if [ "$2" != mpi ]; then
    echo "skip: collsim was built without MPI"
    exit 77
fi
# collsim itself is not linked with MPI: only collsim-mpi.so is, loaded
# under a launcher (glibc's loader lists what a plain run maps).
if LD_TRACE_LOADED_OBJECTS=1 "$COLLSIM" 2>/dev/null | grep -q 'libc\.so'; then
    if LD_TRACE_LOADED_OBJECTS=1 "$COLLSIM" | grep -q 'libmpi'; then
        echo "FAIL: a plain collsim loads libmpi"
        exit 1
    fi
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "skip: mpirun not found (tools/install-deps.sh installs openmpi-bin)"
    exit 77
fi
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-mpi.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up): a trap that only
# cleaned up would let a killed run go on to fail every later check
trap 'exit 130' INT
trap 'exit 143' TERM

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

TIMEOUT=""
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 300"
# mpirun as root needs --allow-run-as-root; --oversubscribe lets 4 ranks
# share fewer cores.
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
# OpenMPI's own allocations outlive MPI_Finalize: suppress those leaks
# only (a full unwind is needed to see through its plugins).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$HERE/lsan-mpi.supp:print_suppressions=0"
ASAN_MPI="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"

# A grid that splits unevenly over 3 and 4 processes (2 x 13 x 3 = 78
# points) and has throughput and OOM crossings to refine.
GRID="--ranks 8,64 --params 1e7:2e10:13 --strategies ddp,zero1,fsdp_full_shard"

"$COLLSIM" crossover $GRID --format csv -o "$TMP/serial.csv" --crossings "$TMP/serial-x.csv" \
    2>"$TMP/serial.err" || fail "serial run: exit $? ($(head -c 300 "$TMP/serial.err"))"
"$COLLSIM" crossover $GRID >"$TMP/serial.table" 2>>"$TMP/serial.err" || fail "serial table run failed"
grep -q ',throughput,' "$TMP/serial-x.csv" || fail "serial: no throughput crossing to compare"
grep -q ',oom,' "$TMP/serial-x.csv" || fail "serial: no oom crossing to compare"

for np in 2 3 4; do
    rc=0
    ASAN_OPTIONS=$ASAN_MPI $TIMEOUT $MPIRUN -np "$np" "$COLLSIM" crossover $GRID --format csv \
        -o "$TMP/mpi$np.csv" --crossings "$TMP/mpi$np-x.csv" >"$TMP/mpi$np.out" 2>"$TMP/mpi$np.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "-np $np: exit $rc ($(head -c 500 "$TMP/mpi$np.err"))"
        continue
    fi
    cmp -s "$TMP/serial.csv" "$TMP/mpi$np.csv" || fail "-np $np: grid CSV differs from the serial run"
    cmp -s "$TMP/serial-x.csv" "$TMP/mpi$np-x.csv" || fail "-np $np: crossings differ from the serial run"
    [ -s "$TMP/mpi$np.out" ] && fail "-np $np: stdout not empty with -o: $(head -c 200 "$TMP/mpi$np.out")"
    [ -s "$TMP/mpi$np.err" ] && fail "-np $np: stderr not empty: $(head -c 300 "$TMP/mpi$np.err")"
done

# stdout (table format) through mpirun: rank 0's bytes only, once
rc=0
ASAN_OPTIONS=$ASAN_MPI $TIMEOUT $MPIRUN -np 3 "$COLLSIM" crossover $GRID >"$TMP/mpi.table" \
    2>"$TMP/mpi-table.err" || rc=$?
[ "$rc" -eq 0 ] || fail "-np 3 table: exit $rc ($(head -c 300 "$TMP/mpi-table.err"))"
cmp -s "$TMP/serial.table" "$TMP/mpi.table" || fail "-np 3: table on stdout differs from the serial run"

# An error met by one rank only (8 ranks of pcie-l40s span 2 nodes, which
# it cannot: the points of --ranks 8 fail, those of --ranks 4 do not):
# exit 2 and the serial run's message, printed once.
BAD="--cluster pcie-l40s --ranks 4,8 --params 1e9:2e9:2 --strategies ddp,fsdp_full_shard --format csv"
rc=0
"$COLLSIM" crossover $BAD >"$TMP/bad-serial.out" 2>"$TMP/bad-serial.err" || rc=$?
[ "$rc" -eq 2 ] || fail "bad serial: exit $rc, want 2"
rc=0
ASAN_OPTIONS=$ASAN_MPI $TIMEOUT $MPIRUN -np 3 "$COLLSIM" crossover $BAD >"$TMP/bad-mpi.out" \
    2>"$TMP/bad-mpi.err" || rc=$?
[ "$rc" -eq 2 ] || fail "bad -np 3: exit $rc, want 2"
[ -s "$TMP/bad-mpi.out" ] && fail "bad -np 3: stdout not empty"
n=$(grep -c '^collsim: ' "$TMP/bad-mpi.err" || true)
[ "$n" = 1 ] || fail "bad -np 3: $n collsim messages, want 1: $(head -c 300 "$TMP/bad-mpi.err")"
grep -qxF "$(head -n 1 "$TMP/bad-serial.err")" "$TMP/bad-mpi.err" ||
    fail "bad -np 3: message differs from the serial run's '$(head -n 1 "$TMP/bad-serial.err")'"

if [ "$failures" -ne 0 ]; then
    echo "$failures MPI check(s) failed"
    exit 1
fi
echo "MPI crossover: -np 2, 3, 4 byte-identical to serial; errors reported once"
exit 0
