# SPDX-License-Identifier: MIT
# tests/hwloop.sh - sourced by the measure -> fit -> predict loops that run
# collsim-hw on this machine (calibrate-loop.sh, compute-loop.sh,
# replay-loop.sh): their two arguments, their skips and the sanitizer
# environment. Set HWLOOP_MPI=1 before sourcing when the loop needs mpirun.
# Sets C (collsim), HW (collsim-hw) and HERE (tests/); exits 2 on a usage
# error, 77 (skip) when what the loop needs is absent.
if [ $# -ne 2 ]; then
    echo "usage: $0 PATH/TO/collsim PATH/TO/collsim-hw" >&2
    exit 2
fi
C=$1
HW=$2
if [ "${HWLOOP_MPI:-0}" = 1 ]; then
    command -v mpirun >/dev/null 2>&1 || { echo "skip: mpirun not found"; exit 77; }
fi
[ -x "$HW" ] || { echo "skip: no collsim-hw at $HW"; exit 77; }
# Under AddressSanitizer, Open MPI's own never-freed memory is suppressed
# (tests/lsan-mpi.supp, as tests/cli-mpi.sh does); collsim-hw's is checked.
HERE=$(cd "$(dirname "$0")" && pwd)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$HERE/lsan-mpi.supp:print_suppressions=0"
