#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-training.sh - end-to-end tests of `collsim compare --training-runs`
# and `collsim calibrate --training-runs`: on each GPU table of the
# validation CSV, compare's per-file median / p90 / max equal the scores
# validation/run records (validation/training_scores.csv, from `collsim
# simulate`); the CSV columns; calibrate on 5 rows writes a YAML that
# simulate and plan accept and that predicts the held-back rows better;
# mixed collective + training inputs; collsim-hw compute's CSV
# (--compute-measurements); collsim-hw replay's per-task CSV with its
# schedule (--schedule --replay); a single model size keeps the
# width-dependent term and says so; usage and input errors.
#
# Usage: sh tests/cli-training.sh PATH/TO/collsim   (from the source root)
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
C=$1
V=validation/training/mpt_llm_foundry_a100_80gb_h100.csv
S=validation/training_scores.csv
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-train.XXXXXX")
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
check() { # description command...: the command must succeed
    d=$1
    shift
    checks=$((checks + 1))
    "$@" || fail "$d"
}
split() { # table: the table's rows, with the file's comments and header
    grep '^#' $V
    grep '^source_table,' $V
    grep "^$1," $V
}

# ---- compare equals validation/run's scores -----------------------------------------
for t in h100_bf16:dgx-h100 a100_80gb:dgx-a100; do
    table=${t%%:*}
    cl=${t#*:}
    split "$table" >"$TMP/$table.csv"
    "$C" compare --cluster "$cl" --training-runs "$TMP/$table.csv" >"$TMP/$table.out"
    got=$(awk -v f="$TMP/$table.csv" '$1 == f { print $3 "," $4 "," $5 }' "$TMP/$table.out")
    want=$(awk -F, -v t="$table" '$1 == t { print $3 "," $4 "," $5 }' $S)
    check "$table: compare's median,p90,max '$got' differ from $S's '$want'" [ "$got" = "$want" ]
done

# the CSV: the issue's columns, one line per run
"$C" compare --cluster dgx-a100 --training-runs "$TMP/a100_80gb.csv" --format csv >"$TMP/a.csv"
check "CSV header" grep -q '^file,line,table,model,gpus,seq_len,micro_batch,grad_accum,checkpointing,measured_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu,error_pct,measured_mfu_pct,predicted_mfu_pct$' "$TMP/a.csv"
check "CSV rows" [ "$(($(wc -l <"$TMP/a.csv") - 1))" -eq "$(grep -c '^a100_80gb,' $V)" ]

# ---- calibrate on 5 rows, predict the rest -----------------------------------------
grep -v '^a100_80gb,mpt-\(125m\|760m\|3b\|13b\|70b\),' "$TMP/a100_80gb.csv" >"$TMP/rest.csv"
{ split a100_80gb | grep -v '^a100' ; grep '^a100_80gb,mpt-\(125m\|760m\|3b\|13b\|70b\),' $V | awk -F, 'NR % 4 == 1'; } >"$TMP/fit.csv"
"$C" calibrate --cluster dgx-a100 --training-runs "$TMP/fit.csv" -o "$TMP/cal.yaml" >"$TMP/cal.out"
check "calibrate fits gemm" grep -q '^  gemm .*fitted from every row' "$TMP/cal.out"
check "YAML notes the fitted gemm" grep -q 'gemm: .*# fitted to training runs: gemm = ' "$TMP/cal.yaml"
check "simulate accepts the YAML" "$C" simulate --cluster "$TMP/cal.yaml" --model gpt3-1.3b --ranks 8 --format csv >/dev/null
check "plan accepts the YAML" "$C" plan --cluster "$TMP/cal.yaml" --model gpt3-1.3b --ranks 8 >/dev/null
check "crossover accepts the YAML" "$C" crossover --cluster "$TMP/cal.yaml" --ranks 8 --models gpt3-1.3b --format csv -o "$TMP/x.csv"
med() { "$C" compare --cluster "$1" --training-runs "$TMP/rest.csv" | awk -v f="$TMP/rest.csv" '$1 == f { print $3 }'; }
before=$(med dgx-a100)
after=$(med "$TMP/cal.yaml")
check "calibrated median $after not below uncalibrated $before" awk -v a="$after" -v b="$before" 'BEGIN { exit !(a < b) }'

# a single model size: the width-dependent term is kept, and the output says so
{ split a100_80gb | grep -v '^a100'; grep '^a100_80gb,mpt-1b,' $V; } >"$TMP/one.csv"
"$C" calibrate --cluster dgx-a100 --training-runs "$TMP/one.csv" -o "$TMP/one.yaml" >"$TMP/one.out"
check "one width keeps gemm_half" grep -q 'gemm_half .*kept: the rows are all of one model width (hidden 2048): a width-dependent term cannot be determined' "$TMP/one.out"

# mixed with collective inputs (a one-node cluster: the 8-GPU runs): both fits, one YAML
{ split h100_bf16 | grep -v '^h100'; grep '^h100_bf16,' $V | awk -F, '$15 == 8'; } >"$TMP/h8.csv"
n8=$(grep -c '^h100' "$TMP/h8.csv")
"$C" calibrate --cluster validation/clusters/h100-together.yaml \
    --measurements validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv \
    --training-runs "$TMP/h8.csv" -o "$TMP/mix.yaml" >"$TMP/mix.out"
check "mixed: collective fit" grep -q 'intra.efficiency' "$TMP/mix.out"
check "mixed: training fit" grep -q 'collsim calibrate (training runs)' "$TMP/mix.out"
check "mixed: YAML header has both" grep -q "^# Compute model fitted to $n8 measured training runs" "$TMP/mix.yaml"

# collsim-hw compute's CSV (measured on a CPU): the fit moves hbm past 1 into the rate
"$C" calibrate --cluster cpu-local --compute-measurements tests/data/compute-cpu.csv -o "$TMP/cpu.yaml" >"$TMP/cpu.out"
check "compute: hbm fitted" grep -q '^  hbm .*fitted from memory-bound' "$TMP/cpu.out"
check "compute: the rate carries hbm > 1" grep -q 'hbm_bandwidth: .*# fitted to kernel timings: the achievable rate' "$TMP/cpu.yaml"
"$C" compare --cluster "$TMP/cpu.yaml" --compute-measurements tests/data/compute-cpu.csv --format csv >"$TMP/kc.csv"
check "compare --compute-measurements CSV header" grep -q '^file,line,kind,dtype,m,n,k,bytes,kernel,measured_us,predicted_us,error_pct$' "$TMP/kc.csv"
check "compare --compute-measurements rows" [ "$(grep -c '^tests/data/compute-cpu.csv,' "$TMP/kc.csv")" -eq 6 ]
check "compute: simulate accepts the YAML" "$C" simulate --cluster "$TMP/cpu.yaml" --model gpt2-124m --ranks 2 --format csv >/dev/null

# collsim-hw replay's per-task CSV (measured on a CPU) joined with its schedule
R="--schedule tests/data/replay-cpu.json --replay tests/data/replay-cpu.csv"
# shellcheck disable=SC2086
"$C" calibrate --cluster cpu-local $R -o "$TMP/rp.yaml" >"$TMP/rp.out" 2>"$TMP/rp.err"
check "replay: gemm fitted" grep -q '^  gemm .*fitted from every row' "$TMP/rp.out"
check "replay: the slowdown kept, and why" grep -q '^  comm_compute_slowdown .*kept: .*replayed tasks ran beside collectives' "$TMP/rp.out"
check "replay: the counts on stderr" grep -q 'replay-cpu.csv: 53 tasks joined with tests/data/replay-cpu.json: [0-9]* kernel timings alone' "$TMP/rp.err"
check "replay: simulate accepts the YAML" "$C" simulate --cluster "$TMP/rp.yaml" --model gpt2-124m --ranks 2 --format csv >/dev/null
# shellcheck disable=SC2086
"$C" compare --cluster "$TMP/rp.yaml" $R --format csv >"$TMP/rc.csv" 2>/dev/null
check "compare --replay: a row per timing, labelled by task" [ "$(grep -c '^tests/data/replay-cpu.csv,[0-9]*,\(gemm\|copy\),.*,task [0-9]*: ' "$TMP/rc.csv")" -ge 30 ]
rc=0
"$C" calibrate --cluster cpu-local --replay tests/data/replay-cpu.csv -o "$TMP/ns.yaml" >/dev/null 2>"$TMP/ns.err" || rc=$?
check "--replay without --schedule exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "--replay without --schedule says so" grep -q 'needs the schedule it replayed: give --schedule FILE' "$TMP/ns.err"
# a --schedule no --replay follows would be read by nothing: refused, not ignored
rc=0
# shellcheck disable=SC2086
"$C" calibrate --cluster cpu-local $R --schedule tests/data/replay-cpu.json -o "$TMP/nr.yaml" >/dev/null 2>"$TMP/nr.err" || rc=$?
check "--schedule without a --replay after it exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "--schedule without a --replay after it says so" grep -q -- '--schedule tests/data/replay-cpu.json: no --replay CSV after it' "$TMP/nr.err"
check "no YAML when --schedule dangles" [ ! -e "$TMP/nr.yaml" ]
"$C" simulate --model gpt2-124m --ranks 2 --cluster cpu-local --emit-schedule "$TMP/other.json" >/dev/null
rc=0
"$C" compare --cluster cpu-local --schedule "$TMP/other.json" --replay tests/data/replay-cpu.csv >/dev/null 2>"$TMP/ws.err" || rc=$?
check "a replay of another schedule exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "a replay of another schedule: file:line:column" grep -q "^collsim: tests/data/replay-cpu.csv:3:[0-9]*: error: task 0's .* in the schedule ($TMP/other.json:[0-9]*:[0-9]*), .* here: this CSV is not a replay of it" "$TMP/ws.err"

# ---- errors ----
rc=0
"$C" calibrate --cluster validation/clusters/h100-together.yaml --format json \
    --measurements validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv \
    --training-runs "$TMP/h8.csv" -o "$TMP/mixj.yaml" >/dev/null 2>&1 || rc=$?
check "mixed inputs refuse one JSON report (exit $rc)" [ "$rc" -eq 2 ]
check "no YAML when refused" [ ! -e "$TMP/mixj.yaml" ]------------------------------------------------------------------------
rc=0
"$C" compare --cluster dgx-a100 --training-runs "$TMP/fit.csv" \
    --measurements validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv >/dev/null 2>"$TMP/e1" || rc=$?
check "compare refuses mixing (exit $rc)" [ "$rc" -eq 2 ]
sed -E 's/,(amp_bf16\/DEFAULT|bf16\/PURE),/,fp8,/' "$TMP/fit.csv" >"$TMP/bad.csv"
line=$(grep -n '^a100' "$TMP/bad.csv" | head -1 | cut -d: -f1)
rc=0
"$C" compare --cluster dgx-a100 --training-runs "$TMP/bad.csv" >"$TMP/e2.out" 2>"$TMP/e2" || rc=$?
check "bad precision exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "bad precision at file:line:column" grep -q "bad.csv:$line:[0-9]*: error: column 'precision': expected amp_bf16/DEFAULT or bf16/PURE, got 'fp8'" "$TMP/e2"
check "nothing on stdout on error" [ ! -s "$TMP/e2.out" ]

# optimizer_in_backward steps each gradient as it is made: plan derives
# grad_accum per layout from the global batch, and a layout that needs
# accumulation is n/a, never recommended (it was, at accum 4: tp 4)
"$C" plan --model llama2-7b --ranks 8 --global-batch 8 --optimizer-in-backward --strategy fsdp \
    --seq-len 32768 >"$TMP/oib" 2>&1 || fail "plan with --optimizer-in-backward: exit $?"
check "plan with optimizer_in_backward recommends grad_accum 1" \
    grep -q "^recommended: .*, grad_accum 1," "$TMP/oib"
check "plan with optimizer_in_backward: layouts needing accumulation are n/a" \
    grep -q "n/a: optimizer_in_backward needs grad_accum 1" "$TMP/oib"

echo "cli-training: $checks checks, $failures failures"
[ "$failures" -eq 0 ]
