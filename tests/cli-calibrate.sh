#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-calibrate.sh - end-to-end tests of `collsim calibrate` and `collsim
# compare`: help, usage and input errors (exit codes, file:line:column on
# stderr, nothing on stdout, no output file), the calibrated YAML loading
# back through --cluster and scoring better than its input, mixed input
# kinds, the CSV/JSON contracts, and byte-identical repeated runs.
#
# Usage: sh tests/cli-calibrate.sh PATH/TO/collsim   (from the source root)
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
C=${CS_COLLSIM:-$1} # CS_COLLSIM: the valgrind setup's wrapper (tests/meson.build)
V=validation/nccl-tests
AR=$V/h100_8gpu_allreduce_together_ringcfg.csv
AG=$V/h100_8gpu_allgather_together_ringcfg.csv
CL=validation/clusters/h100-together.yaml
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-cal.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up): a trap that only
# cleaned up would let a killed run go on to fail every later check
trap 'exit 130' INT
trap 'exit 143' TERM
failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
run() { # name args...: exit status in $rc, output in $TMP/name.out/.err
    name=$1
    shift
    rc=0
    "$C" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
}
expect() { # want name args...
    want=$1
    shift
    checks=$((checks + 1))
    run "$@"
    [ "$rc" -eq "$want" ] || fail "$1: exit $rc, want $want (stderr: $(head -c 300 "$TMP/$1.err"))"
    if [ "$want" -ne 0 ]; then
        [ -s "$TMP/$1.err" ] || fail "$1: no message on stderr"
        [ -s "$TMP/$1.out" ] && fail "$1: stdout not empty"
    fi
    return 0
}

expect 0 help-cal calibrate --help
grep -q -- "--nccl-tests LOG" "$TMP/help-cal.out" || fail "calibrate --help lacks --nccl-tests"
expect 0 help-cmp compare --help
grep -q "median_big_pct" "$TMP/help-cmp.out" || fail "compare --help lacks the CSV columns"
grep -q "calibrate" "$TMP/help-cmp.out" || true
"$C" --help | grep -q "^  calibrate" || fail "collsim --help does not list calibrate"
"$C" --help | grep -q "^  compare" || fail "collsim --help does not list compare"

# usage errors: exit 2, nothing written
expect 2 no-out calibrate --cluster $CL --measurements $AR
expect 2 no-cluster calibrate --measurements $AR -o "$TMP/x.yaml"
expect 2 no-data calibrate --cluster $CL -o "$TMP/x.yaml"
expect 2 bad-format compare --cluster $CL --measurements $AR --format xml
expect 2 bad-option compare --cluster $CL --measurements $AR --report x
[ -e "$TMP/x.yaml" ] && fail "a failed calibrate left $TMP/x.yaml"

# input errors name file:line:column
printf '# all_reduce_perf\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 1024 256 float sum -1 abc 0.1 0.1 0 1 1 1 0\n' >"$TMP/bad.log"
expect 2 bad-log calibrate --cluster $CL --nccl-tests "$TMP/bad.log" -o "$TMP/x.yaml"
grep -q "bad.log:3:24: error: expected the out-of-place time" "$TMP/bad-log.err" ||
    fail "bad-log: $(cat "$TMP/bad-log.err")"
[ -e "$TMP/x.yaml" ] && fail "bad input left $TMP/x.yaml"
expect 1 missing compare --cluster $CL --measurements "$TMP/none.csv"
expect 1 dir compare --cluster $CL --measurements "$TMP"
expect 2 no-fit compare --cluster pcie-l40s --measurements $V/h100_16gpu_2node_allreduce_bitdeer.csv
grep -q "h100_16gpu_2node_allreduce_bitdeer.csv:10:1: error:" "$TMP/no-fit.err" ||
    fail "no-fit: $(cat "$TMP/no-fit.err")"

# calibrate, then the YAML is a cluster, and it scores better than its input
expect 0 cal calibrate --cluster $CL --measurements $AR -o "$TMP/cal.yaml"
[ -s "$TMP/cal.yaml" ] || fail "calibrate wrote no YAML"
grep -q "^# fitted intra.efficiency" "$TMP/cal.yaml" || fail "YAML lacks the fitted comment"
grep -q "^# kept   inter.efficiency" "$TMP/cal.yaml" || fail "YAML lacks the kept comment"
grep -q "intra.efficiency" "$TMP/cal.out" || fail "report lacks the parameter table"
expect 0 use-yaml collective --cluster "$TMP/cal.yaml" --op all_reduce --bytes 1M
med() { # cluster csv -> median all-sizes error
    "$C" compare --cluster "$1" --measurements "$2" --summary --format csv | tail -1 | cut -d, -f12
}
before=$(med $CL $AG)
after=$(med "$TMP/cal.yaml" $AG)
checks=$((checks + 1))
awk -v b="$before" -v a="$after" 'BEGIN { exit !(a < b / 2) }' ||
    fail "calibration did not help all_gather: median $before% -> $after%"

# same inputs, same bytes; mixed kinds in one run
expect 0 cal2 calibrate --cluster $CL --measurements $AR -o "$TMP/cal2.yaml"
cmp -s "$TMP/cal.yaml" "$TMP/cal2.yaml" || fail "calibrate YAML differs between runs"
cmp -s "$TMP/cal.out" "$TMP/cal2.out" || fail "calibrate report differs between runs"
expect 0 mixed compare --cluster dgx-h100 --measurements $AR \
    --nccl-tests tests/data/nccl-tests-allgather-old-layout.log --format csv
head -1 "$TMP/mixed.out" | grep -qx 'dataset,op,ranks,nodes,size_bytes,measured_us,predicted_us,error_pct,measured_busbw_GBps,predicted_busbw_GBps,algo,proto,status' ||
    fail "compare CSV header: $(head -1 "$TMP/mixed.out")"
[ "$(grep -c ',all_gather,' "$TMP/mixed.out")" -eq 4 ] || fail "mixed: the log's 4 rows are missing"
expect 0 summary compare --cluster $CL --measurements $AR --measurements $AG --summary --format csv
[ "$(wc -l <"$TMP/summary.out")" -eq 3 ] || fail "summary: want a header and 2 datasets"
expect 0 json compare --cluster $CL --measurements $AR --format json
expect 0 cjson calibrate --cluster $CL --measurements $AR -o "$TMP/c.yaml" --format json
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$TMP/json.out" >/dev/null || fail "compare JSON does not parse"
    python3 -m json.tool "$TMP/cjson.out" >/dev/null || fail "calibrate JSON does not parse"
fi
expect 0 to-file compare --cluster $CL --measurements $AR -o "$TMP/cmp.txt"
[ -s "$TMP/cmp.txt" ] || fail "compare -o wrote nothing"
expect 1 unwritable compare --cluster $CL --measurements $AR -o "$TMP/no/such/dir/x"

echo "cli-calibrate: $checks checks, $failures failures"
[ "$failures" -eq 0 ]
