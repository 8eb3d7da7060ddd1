#!/bin/sh
# SPDX-License-Identifier: MIT
#
# golden.sh - the golden corpus: re-runs every command of tests/golden/commands
# and compares its exit status, stdout, stderr and every file it wrote under
# its output folder with tests/golden/expected/NAME.txt, byte for byte.
#
# Usage: sh tests/golden.sh PATH/TO/collsim            (compare; from the source root)
#        sh tests/golden.sh PATH/TO/collsim --update   (rewrite expected/; only
#        for a documented bug fix, in its own commit)
# Exits 1 if any output differs, printing a diff of the first lines.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 PATH/TO/collsim [--update]" >&2
    exit 2
fi
C=${CS_COLLSIM:-$1} # CS_COLLSIM: the valgrind setup's wrapper (tests/meson.build)
UPDATE=${2:-}
PLAIN=$1
# Under valgrind's wrapper, plan's two whole-space searches (plan-scenario
# and plan-json: 2 s of the corpus's 3.3 s plain, most of its memcheck time)
# and crossover's two grids of 18 and 10 points (xo-table, xo-plot: 1.1 s of
# the rest's 2.2 s) run plain: their bytes are still compared, and the
# corpus's other plan and crossover commands (plan-options, xo-csv-crossings,
# xo-json-models) run those paths under memcheck on smaller searches.
PLAIN_ONLY=" plan-scenario plan-json xo-table xo-plot "
# calibrated YAML carries a date: pinned, not the checkout's file times
export SOURCE_DATE_EPOCH=1767225600
G=tests/golden
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-golden.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up): a trap that only
# cleaned up would let a killed run go on to fail every later check
trap 'exit 130' INT
trap 'exit 143' TERM
failures=0
count=0
# capture NAME ARGS...: the command's whole golden text on stdout.
capture() {
    name=$1
    shift
    out=$TMP/out/$name
    mkdir -p "$out"
    rc=0
    # shellcheck disable=SC2046
    bin=$C
    case $PLAIN_ONLY in *" $name "*) bin=$PLAIN ;; esac
    "$bin" "$@" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr" </dev/null || rc=$?
    echo "# exit $rc"
    echo "# stdout"
    cat "$TMP/$name.stdout"
    echo "# stderr"
    sed "s|$out|@OUT@|g" "$TMP/$name.stderr"
    for f in $(cd "$out" && find . -type f | LC_ALL=C sort); do
        echo "# file $f"
        cat "$out/$f"
    done
}
while read -r name args; do
    case $name in '' | '#'*) continue ;; esac
    count=$((count + 1))
    out=$TMP/out/$name
    # shellcheck disable=SC2086
    set -- $(echo "$args" | sed "s|@OUT@|$out|g")
    capture "$name" "$@" >"$TMP/$name.txt"
    if [ "$UPDATE" = --update ]; then
        cp "$TMP/$name.txt" "$G/expected/$name.txt"
    elif ! cmp -s "$TMP/$name.txt" "$G/expected/$name.txt"; then
        echo "FAIL: $name differs from $G/expected/$name.txt:"
        diff "$G/expected/$name.txt" "$TMP/$name.txt" | head -20 || true
        failures=$((failures + 1))
    fi
done <"$G/commands"
echo "golden: $count commands, $failures differ"
[ "$failures" -eq 0 ]
