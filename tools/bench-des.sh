#!/bin/sh
# DES and closed-form speed benchmark (numbers go into closing notes, not
# into timed tests). Usage: tools/bench-des.sh [BUILD_DIR]
set -eu
B=${1:-build}
C="$B/cli/collsim"
run() { /usr/bin/time -f "  %e s wall, %M KiB peak RSS" "$@" >/dev/null; }
echo "DES ring all_reduce 1 GiB, N=4096 (dgx-h100, 512 nodes):"
run "$C" collective --op all_reduce --ranks 4096 --bytes 1G --algo ring --engine des
echo "DES ring all_reduce 1 GiB, N=16384:"
run "$C" collective --op all_reduce --ranks 16384 --bytes 1G --algo ring --engine des
echo "DES tree all_reduce 1 GiB, N=4096:"
run "$C" collective --op all_reduce --ranks 4096 --bytes 1G --algo tree --engine des
echo "closed form (auto-free ring/simple evaluations, 4 rank counts x 5 ops x 11 sizes):"
"$B/tools/bench-closed-form"
echo "training iteration:"
"$B/tools/bench-iteration"
