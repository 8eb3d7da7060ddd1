#!/bin/sh
# Crossover analysis of one cluster, with its plots: runs
#   collsim crossover --cluster CLUSTER --format csv -o BASE.csv
#       --crossings BASE-crossings.csv --plot BASE.EXT [OPTIONS...]
# and lists what it wrote: the sweep table (BASE.csv), the crossings
# (BASE-crossings.csv) and five plots, BASE-throughput.EXT, BASE-memory.EXT,
# BASE-winner.EXT, BASE-wire.EXT and BASE-breakdown.EXT (see sim/out/plot.h for
# what each shows).
#
# Usage: tools/plot-crossover.sh [-b BUILD_DIR] CLUSTER [OUT.svg|OUT.png] [OPTIONS...]
#   CLUSTER   a preset (dgx-h100, dgx-a100, hgx-h200, pcie-l40s) or a cluster YAML
#   OUT       the plot name; its extension picks SVG or PNG
#             (default plots/<cluster name>.svg)
#   OPTIONS   passed to `collsim crossover` (--ranks 8,64,512 --params 1e9:70e9:12
#             --strategies ddp,fsdp_full_shard ...; see `collsim crossover --help`)
#   -b DIR    the meson build directory holding cli/collsim (default build);
#             $COLLSIM, if set, names the binary instead
# Needs gnuplot (tools/install-deps.sh installs gnuplot-nox).
# Exit status: that of collsim (0 ok, 1 output not written, 2 bad usage).
set -eu
usage() { sed -n '9,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=build
if [ "${1:-}" = "-b" ]; then
    [ $# -ge 2 ] || usage
    build=$2
    shift 2
fi
case "${1:-}" in ""|-h|--help) usage ;; esac
cluster=$1
shift
name=$(basename "$cluster")
name=${name%.yaml}
name=${name%.yml}
out="plots/$name.svg"
case "${1:-}" in *.svg|*.png) out=$1; shift ;; esac
collsim=${COLLSIM:-$build/cli/collsim}
[ -x "$collsim" ] || { echo "plot-crossover: $collsim not found: build first (meson setup $build && ninja -C $build) or set COLLSIM" >&2; exit 2; }
command -v gnuplot >/dev/null 2>&1 || { echo "plot-crossover: gnuplot not found: install gnuplot-nox (tools/install-deps.sh)" >&2; exit 1; }
base=${out%.*}
ext=${out##*.}
dir=$(dirname "$out")
mkdir -p "$dir"
"$collsim" crossover --cluster "$cluster" --format csv -o "$base.csv" \
    --crossings "$base-crossings.csv" --plot "$out" "$@"
for f in "$base.csv" "$base-crossings.csv" "$base-throughput.$ext" "$base-memory.$ext" \
    "$base-winner.$ext" "$base-wire.$ext" "$base-breakdown.$ext"; do
    [ -e "$f" ] && echo "$f"
done
exit 0
