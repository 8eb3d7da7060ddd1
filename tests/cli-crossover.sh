#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-crossover.sh - end-to-end tests of `collsim crossover` (one process):
# the CSV column contract and grid size, the crossings CSV, the table's
# sentences, JSON validity, determinism, --models, --engine des (byte-
# identical reruns), layouts (--tp / --pp lists), usage errors (exit 2,
# stderr only, no -o file), and no progress bar when stderr is not a
# terminal.
#
# Usage: sh tests/cli-crossover.sh PATH/TO/collsim   (from the source root)
# Prints one line per failure; exits 1 if any failed.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
COLLSIM=${CS_COLLSIM:-$1} # CS_COLLSIM: the valgrind setup's wrapper (tests/meson.build)
HEADER='strategy,ranks,params,fits,iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,peak_bytes,exposed_comm_s'
XHEADER='ranks,strategy_a,strategy_b,kind,params'

TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-crossover.XXXXXX")
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
run() {
    name=$1
    shift
    rc=0
    "$COLLSIM" crossover "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
}
expect_ok() {
    run "$@"
    [ "$rc" -eq 0 ] || fail "$1: exit $rc (stderr: $(head -c 300 "$TMP/$1.err"))"
    [ -s "$TMP/$1.err" ] && fail "$1: unexpected stderr: $(head -c 300 "$TMP/$1.err")"
    return 0
}
expect_usage() {
    run "$@"
    [ "$rc" -eq 2 ] || fail "$1: exit $rc, want 2"
    [ -s "$TMP/$1.err" ] || fail "$1: no message on stderr"
    [ -s "$TMP/$1.out" ] && fail "$1: stdout not empty"
    return 0
}

expect_ok help --help
grep -qF "$HEADER" "$TMP/help.out" || fail "help: does not show the CSV columns"

# CSV contract: header, 2 ranks x 7 P x 3 strategies rows, canonical order
expect_ok csv --ranks 8,64 --params 10M:10B:7 --format csv --crossings "$TMP/x.csv"
case "$(head -n 1 "$TMP/csv.out")" in
"$HEADER"*) ;;
*) fail "csv: header '$(head -n 1 "$TMP/csv.out")' does not start with the contract" ;;
esac
rows=$(tail -n +2 "$TMP/csv.out" | wc -l | tr -d ' ')
[ "$rows" = 42 ] || fail "csv: $rows rows, want 42"
sed -n 2p "$TMP/csv.out" | grep -q '^ddp,8,10000000,' || fail "csv: first row is not ddp,8,10000000"
tail -n 1 "$TMP/csv.out" | grep -q '^fsdp_full_shard,64,10000000000,' ||
    fail "csv: last row is not fsdp_full_shard,64,10000000000"
case "$(head -n 1 "$TMP/x.csv")" in
"$XHEADER"*) ;;
*) fail "crossings: header '$(head -n 1 "$TMP/x.csv")' does not start with $XHEADER" ;;
esac
grep -q '^8,ddp,ddp,oom,' "$TMP/x.csv" || fail "crossings: no ddp OOM boundary on 8 GPUs"
grep -q '^64,ddp,fsdp_full_shard,throughput,' "$TMP/x.csv" ||
    fail "crossings: no ddp/fsdp_full_shard crossing on 64 GPUs"

# table: the grid, then one sentence per crossing
expect_ok table --ranks 8,64 --params 10M:10B:7
nx=$(tail -n +2 "$TMP/x.csv" | wc -l | tr -d ' ')
ns=$(grep -c '^  on dgx-h100 with [0-9]* GPUs, ' "$TMP/table.out" || true)
[ "$nx" = "$ns" ] || fail "table: $ns sentences for $nx crossings"
grep -Eq 'ddp \(micro-batch [0-9]+, [a-z ]+\) beats fsdp_full_shard \(micro-batch [0-9]+, [a-z ]+\) below [0-9.]+M params by [0-9.]+%' "$TMP/table.out" ||
    fail "table: no 'ddp (its choice) beats fsdp_full_shard (its choice) below X params by Y%' sentence"
grep -Eq 'ddp OOMs above [0-9.]+B params' "$TMP/table.out" || fail "table: no 'ddp OOMs above' sentence"

# determinism, and -o writes what stdout gets
expect_ok csv2 --ranks 8,64 --params 10M:10B:7 --format csv -o "$TMP/o.csv"
cmp -s "$TMP/csv.out" "$TMP/o.csv" || fail "determinism: -o output differs from the stdout run"
[ -s "$TMP/csv2.out" ] && fail "csv2: stdout not empty with -o"

# JSON
expect_ok json --ranks 64 --params 1e8:1e10:3 --format json
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["points"]) == 9 and all("kind" in c for c in d["crossings"])' \
        <"$TMP/json.out" 2>"$TMP/json.py.err" || fail "json: invalid: $(tail -n 1 "$TMP/json.py.err")"
fi

# a list of models
expect_ok models --models gpt2-124m,llama2-7b,13B --format csv
rows=$(tail -n +2 "$TMP/models.out" | wc -l | tr -d ' ')
[ "$rows" = 9 ] || fail "models: $rows rows, want 9"
grep -q ',llama2-7b,' "$TMP/models.out" || fail "models: no llama2-7b row"

# --engine des: collectives timed by the DES; runs repeat byte for byte,
# the title says so, and the grid differs from the closed form's only in
# times (same rows)
expect_ok des1 --engine des --ranks 8,16 --params 100M:10B:5 --format csv --crossings "$TMP/xd1.csv"
expect_ok des2 --engine des --ranks 8,16 --params 100M:10B:5 --format csv --crossings "$TMP/xd2.csv"
cmp -s "$TMP/des1.out" "$TMP/des2.out" || fail "des: grid differs between two runs"
cmp -s "$TMP/xd1.csv" "$TMP/xd2.csv" || fail "des: crossings differ between two runs"
rows=$(tail -n +2 "$TMP/des1.out" | wc -l | tr -d ' ')
[ "$rows" = 30 ] || fail "des: $rows rows, want 30"
expect_ok ana1 --engine analytic --ranks 8,16 --params 100M:10B:5 --format csv
cmp -s "$TMP/des1.out" "$TMP/ana1.out" && fail "des: grid identical to the closed form's (engine ignored?)"
expect_ok des-table --engine des --ranks 16 --params 100M:10B:3
head -n 1 "$TMP/des-table.out" | grep -q ', DES collectives$' || fail "des: title does not name the engine"
expect_usage bad-engine --engine simgrid
grep -q -- '--engine' "$TMP/help.out" || fail "help: no --engine"

# the batch (issue 21): each point at its best at one global batch; the
# columns say what ran, micro_batch x grad_accum x ranks is the batch
expect_ok best --ranks 8,64 --params 1e8:1e10:3 --format csv
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { mb = $col["micro_batch"]; ga = $col["grad_accum"]; r = $col["ranks"]
      if (mb * ga * r != 1024) bad = bad " " r "x" mb "x" ga
      if ($col["activation_checkpointing"] !~ /^(none|selective|full)$/) bad = bad " ckpt" }
    END { if (bad) { print bad; exit 1 } }' "$TMP/best.out" ||
    fail "best: rows do not keep the 1024-sequence batch: $(head -n 3 "$TMP/best.out")"
# then a pipeline's exposed send_recv and bubble, appended after them
head -n 1 "$TMP/best.out" |
    grep -q ',micro_batch,grad_accum,activation_checkpointing,exposed_send_recv_s,pipeline_bubble_s$' ||
    fail "best: the choice columns are not appended"
# more than one micro-batch is chosen over the grid (the search is on)
[ "$(awk -F, 'NR > 1 { print $22 }' "$TMP/best.out" | sort -u | wc -l)" -gt 1 ] ||
    fail "best: every point chose the same micro-batch"
# pinned: --micro-batch B --grad-accum G is the fixed configuration everywhere
expect_ok pinned --ranks 8,64 --params 1e8:1e10:3 --micro-batch 2 --grad-accum 3 --format csv
[ "$(awk -F, 'NR > 1 { print $22 "," $23 "," $24 }' "$TMP/pinned.out" | sort -u)" = "2,3,none" ] ||
    fail "pinned: rows are not micro-batch 2, grad-accum 3, no checkpointing"
# a global batch that does not divide: the nearest whole grad-accum, said
expect_ok odd --ranks 12 --params 1e8:1e9:2 --global-batch 100
grep -q '^note: the global batch of 100 sequences is no whole multiple of 12 ranks' "$TMP/odd.out" ||
    fail "odd: no note on the batch that ran"
# the rule of thumb after the crossings, per rank count, in plan's words
expect_ok rule --ranks 8,64 --params 1e8:1e10:3
grep -q '^Rule of thumb: "DDP below 3B params' "$TMP/rule.out" || fail "rule: no rule section"
[ "$(grep -c '^On dgx-h100 with [0-9]* GPUs the rule.s pick is the fastest' "$TMP/rule.out")" = 2 ] ||
    fail "rule: not one verdict per rank count"
expect_usage ga-alone --grad-accum 4
expect_usage ga-and-global --micro-batch 1 --grad-accum 4 --global-batch 64

# usage errors: exit 2, message, nothing on stdout, no -o file
# layouts (--tp / --pp lists): every strategy x tp x pp a series, in that
# order; tp and pp columns after strategy (CSV), beside each side of a
# crossing, series names for people, JSON version 3; a layout that does
# not apply at a point (tp 8 x pp 2 on 8 GPUs) is an empty point
expect_ok lay --ranks 8 --params 1B:30B:3 --strategies ddp,fsdp_full_shard --tp 1,8 --pp 1,2 \
    --format csv --crossings "$TMP/xl.csv"
case "$(head -n 1 "$TMP/lay.out")" in
strategy,tp,pp,ranks,params,fits,*) ;;
*) fail "lay: header '$(head -n 1 "$TMP/lay.out")' has no tp,pp after strategy" ;;
esac
rows=$(tail -n +2 "$TMP/lay.out" | wc -l | tr -d ' ')
[ "$rows" = 24 ] || fail "lay: $rows rows, want 3 sizes x 2 strategies x 2 tp x 2 pp = 24"
sed -n 2,9p "$TMP/lay.out" | cut -d, -f1-3 | tr '\n' ' ' |
    grep -q '^ddp,1,1 ddp,1,2 ddp,8,1 ddp,8,2 fsdp_full_shard,1,1 fsdp_full_shard,1,2 fsdp_full_shard,8,1 fsdp_full_shard,8,2 $' ||
    fail "lay: series not in strategy, tp, pp order: $(sed -n 2,9p "$TMP/lay.out" | cut -d, -f1-3 | tr '\n' ' ')"
grep -q '^ddp,8,2,8,1000000000,0,,' "$TMP/lay.out" || fail "lay: tp 8 x pp 2 on 8 GPUs is not an empty point"
case "$(head -n 1 "$TMP/xl.csv")" in
ranks,strategy_a,tp_a,pp_a,strategy_b,tp_b,pp_b,kind,params*) ;;
*) fail "lay crossings: header '$(head -n 1 "$TMP/xl.csv")'" ;;
esac
expect_ok lay-table --ranks 8 --params 1B:30B:3 --strategies ddp,fsdp_full_shard --tp 1,8 --pp 1,2
grep -q '^generic-1B  *fsdp_full_shard tp8 pp2  *n/a' "$TMP/lay-table.out" || fail "lay-table: no n/a series row"
grep -q '^  on dgx-h100 with 8 GPUs, [a-z_0-9]* tp[0-9]* pp[0-9]* ' "$TMP/lay-table.out" ||
    fail "lay-table: crossings not named by series"
expect_ok lay-json --ranks 8 --params 1B:30B:3 --strategies fsdp_full_shard --pp 1,2 --format json
grep -q '"version": 3' "$TMP/lay-json.out" || fail "lay-json: not version 3"
grep -q '"version": 2' "$TMP/json.out" || fail "json: without layout lists not version 2"
expect_usage bad-tp --tp 1,0
expect_usage bad-tp2 --tp 2,2
expect_usage bad-pp --pp 1,x
expect_usage bad-params --params 1e8:1e7:5 -o "$TMP/never.csv"
expect_usage bad-params2 --params 1e8:1e9
expect_usage bad-strategy --strategies ddp,fsdp_fool_shard
expect_usage both --params 1e8:1e9:3 --models gpt2-124m
expect_usage bad-ranks --ranks 8,x
expect_usage tiny --params 10:1e9:3
expect_usage bad-model --models gpt2-124m,gpt9
[ -e "$TMP/never.csv" ] && fail "bad-params: -o file written on error"

if [ "$failures" -ne 0 ]; then
    echo "$failures crossover CLI check(s) failed"
    exit 1
fi
echo "crossover CLI: all checks passed"
exit 0
