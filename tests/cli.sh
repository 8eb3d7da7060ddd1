#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli.sh - end-to-end tests of the `collsim` binary: help and version, the
# CSV/JSON contract, determinism (byte-identical output across runs, also
# with the discrete-event engine), exit codes and the stdout/stderr split for
# bad input, atomic -o (no file on error, same bytes as stdout on success),
# sweep length and the all_reduce bus-bandwidth identity.
#
# Usage: sh tests/cli.sh PATH/TO/collsim   (run from the source root, which
# holds configs/). Prints one line per failure; exits 1 if any failed.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
COLLSIM=${CS_COLLSIM:-$1} # CS_COLLSIM: the valgrind setup's wrapper (tests/meson.build)
HEADER='op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,busbw_GBps'

TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-cli.XXXXXX")
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

# run NAME ARGS...: runs collsim with stdout/stderr in $TMP/NAME.out/.err,
# leaves the exit status in $rc (never stops the script under set -e).
run() {
    name=$1
    shift
    rc=0
    "$COLLSIM" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    echo "$rc" >"$TMP/$name.rc"
}

# same A B WHAT: runs A and B (both expect_ok) wrote the same bytes. A run
# that failed is reported by its own check; comparing its output too would
# add a second, misleading failure ("two runs differ"), so it is skipped.
same() {
    [ "$(cat "$TMP/$1.rc" 2>/dev/null)" = 0 ] && [ "$(cat "$TMP/$2.rc" 2>/dev/null)" = 0 ] || return 0
    cmp -s "$TMP/$1.out" "$TMP/$2.out" || fail "$3"
}

# expect_ok NAME ARGS...: exit 0, something on stdout, nothing on stderr.
expect_ok() {
    checks=$((checks + 1))
    run "$@"
    if [ "$rc" -ne 0 ]; then
        fail "$1: exit $rc, want 0 (stderr: $(head -c 300 "$TMP/$1.err"))"
        return
    fi
    [ -s "$TMP/$1.out" ] || fail "$1: nothing on stdout"
    [ -s "$TMP/$1.err" ] && fail "$1: unexpected stderr: $(head -c 300 "$TMP/$1.err")"
    return 0
}

# expect_usage NAME ARGS...: exit 2, a message on stderr, nothing on stdout.
expect_usage() {
    checks=$((checks + 1))
    run "$@"
    [ "$rc" -eq 2 ] || fail "$1: exit $rc, want 2"
    [ -s "$TMP/$1.err" ] || fail "$1: no message on stderr"
    [ -s "$TMP/$1.out" ] && fail "$1: stdout not empty: $(head -c 300 "$TMP/$1.out")"
    return 0
}

# ---- help and version ------------------------------------------------------

expect_ok help --help
grep -q 'collective' "$TMP/help.out" || fail "help: does not list the collective command"
expect_ok version --version
grep -Eq '^collsim [0-9]+\.[0-9]+\.[0-9]+' "$TMP/version.out" ||
    fail "version: '$(cat "$TMP/version.out")' is not 'collsim X.Y.Z'"
expect_ok chelp collective --help
grep -qF "$HEADER" "$TMP/chelp.out" || fail "collective --help: does not show the CSV header"

# ---- CSV contract ------------------------------------------------------------

expect_ok csv collective --op all_reduce --bytes 1G --format csv
first=$(head -n 1 "$TMP/csv.out")
[ "$first" = "$HEADER" ] || fail "csv: first line is '$first', want the header"
rows=$(tail -n +2 "$TMP/csv.out" | wc -l | tr -d ' ')
[ "$rows" -eq 1 ] || fail "csv: $rows data rows, want 1"
fields=$(sed -n 2p "$TMP/csv.out" | awk -F, '{print NF}')
[ "$fields" = 11 ] || fail "csv: data row has '$fields' fields, want 11"
sed -n 2p "$TMP/csv.out" | grep -q '^all_reduce,' || fail "csv: data row is not all_reduce"

# ---- determinism ---------------------------------------------------------------

for engine in analytic des; do
    expect_ok "det-$engine-1" collective --op all_reduce --min 8 --max 256M --format csv \
        --engine "$engine" --ranks 16
    expect_ok "det-$engine-2" collective --op all_reduce --min 8 --max 256M --format csv \
        --engine "$engine" --ranks 16
    same "det-$engine-1" "det-$engine-2" "determinism: two --engine $engine runs differ"
    grep -q ",$engine," "$TMP/det-$engine-1.out" ||
        fail "determinism: --engine $engine rows do not say $engine"
done

# ---- JSON ------------------------------------------------------------------------

expect_ok json collective --ranks 4096 --op all_reduce --bytes 1G --format json
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["rows"]) == 1 and d["rows"][0]["ranks"] == 4096' \
        <"$TMP/json.out" 2>"$TMP/json.py.err" ||
        fail "json: not valid JSON with one 4096-rank row: $(tail -n 1 "$TMP/json.py.err")"
else
    echo "note: python3 not found; JSON validity not checked"
fi
# every JSON output names its format and version (docs/json-output.md)
if command -v python3 >/dev/null 2>&1; then
    expect_ok jv-memory memory --format json
    expect_ok jv-simulate simulate --model gpt2-124m --ranks 8 --format json
    expect_ok jv-plan plan --model gpt2-124m --ranks 8 --format json
    expect_ok jv-crossover crossover --ranks 8 --params 1e8:1e9:2 --format json
    expect_ok jv-compare compare --cluster dgx-h100 --nccl-tests tests/data/nccl-tests-allreduce-2node-srun.log --format json
    for k in collective:json memory:jv-memory simulate:jv-simulate plan:jv-plan crossover:jv-crossover compare:jv-compare; do
        python3 -c 'import json,sys; d=json.load(open(sys.argv[2])); assert list(d)[:2] == ["format", "version"] and d["format"] == "collsim-" + sys.argv[1] and d["version"] == (2 if sys.argv[1] == "crossover" else 1), list(d)[:2]' \
            "${k%%:*}" "$TMP/${k#*:}.out" 2>"$TMP/jv.err" || fail "json ${k%%:*}: no format/version first: $(tail -n 1 "$TMP/jv.err")"
    done
fi

# ---- the table is nccl-tests' -------------------------------------------------------
# 13 fields a row (size count type redop root, then time algbw busbw #wrong twice),
# the header of nccl-tests >= 2.10, the footer; our own nccl-tests reader reads it
# back and `compare` finds it predicts itself (0.0 % error).
expect_ok nt-table collective --op all_gather --ranks 16 --min 1K --max 1G --factor 32
awk '!/^#/ { n++; if (NF != 13 || $9 != "N/A" || $13 != "N/A" || $6 != $10 || $8 != $12) bad = 1 }
    END { exit !(n == 5 && !bad) }' "$TMP/nt-table.out" || fail "collective table: rows are not nccl-tests' 13 fields"
grep -q '^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong $' \
    "$TMP/nt-table.out" || fail "collective table: not nccl-tests' header"
grep -q '^#  *out-of-place  *in-place' "$TMP/nt-table.out" || fail "collective table: no out-of-place/in-place line"
grep -q '^# Avg bus bandwidth    : [0-9.]* $' "$TMP/nt-table.out" || fail "collective table: no Avg bus bandwidth line"
cp "$TMP/nt-table.out" "$TMP/nt-ag.log"
expect_ok nt-readback compare --cluster dgx-h100 --nccl-tests "$TMP/nt-ag.log" --format csv
awk -F, 'NR > 1 { n++; if ($3 != 16 || $8 + 0 > 0.05 || $8 + 0 < -0.05) bad = 1 } END { exit !(n == 5 && !bad) }' \
    "$TMP/nt-readback.out" || fail "collective table: not read back as 5 rows of 16 ranks at 0 % error: $(head -3 "$TMP/nt-readback.out")"
# a broadcast (busbw = algbw: only the "#  Rank" lines tell the ranks) on 2 uneven nodes
expect_ok nt-bcast collective --cluster dgx-a100 --ranks 12 --nodes 2 --op broadcast --min 1K --max 1M --factor 32
[ "$(grep -c '^#  Rank [ 0-9]* Group  0 Pid      0 on      node[01] device' "$TMP/nt-bcast.out")" -eq 12 ] ||
    fail "collective table: not 12 nccl-tests rank lines"
cp "$TMP/nt-bcast.out" "$TMP/nt-bc.log"
expect_ok nt-bc-back compare --cluster dgx-a100 --nccl-tests "$TMP/nt-bc.log" --format csv
awk -F, 'NR > 1 { n++; if ($3 != 12 || $4 != 2 || $8 + 0 > 0.05 || $8 + 0 < -0.05) bad = 1 } END { exit !(n == 3 && !bad) }' \
    "$TMP/nt-bc-back.out" || fail "collective table: broadcast not read back as 12 ranks on 2 nodes: $(head -3 "$TMP/nt-bc-back.out")"
expect_ok nt-big collective --ranks 4096 --op all_reduce --bytes 1M
grep -q '^#  (4096 ranks on 512 nodes, 8 per node: not listed one by one)$' "$TMP/nt-big.out" ||
    fail "collective table: 4096 ranks listed one by one"

# ---- the trace: a process per strategy, no overlapping slices on a track -----------
expect_ok trace2 simulate --model gpt2-124m --ranks 8 --strategy fsdp_full_shard,ddp --trace "$TMP/t2.json"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/t2.json" <<'PY' 2>"$TMP/trace.err" || fail "trace: $(tail -n 1 "$TMP/trace.err")"
import json, sys
from decimal import Decimal
d = json.load(open(sys.argv[1]), parse_float=Decimal)
assert d["otherData"] == {"format": "collsim-trace", "version": 1}, d.get("otherData")
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
assert names == {0: "fsdp_full_shard: rank 0 of 8", 1: "ddp: rank 0 of 8"}, names
tracks = {}
for e in d["traceEvents"]:
    if e["ph"] == "X":
        tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["dur"], e["name"]))
assert len({p for p, _ in tracks}) == 2
for k, ev in tracks.items():
    ev.sort()
    for a, b in zip(ev, ev[1:]):
        assert a[0] + a[1] <= b[0], ("overlap on track", k, a, b)
PY
fi
expect_usage sched2 simulate --model gpt2-124m --ranks 8 --strategy fsdp_full_shard,ddp --emit-schedule "$TMP/s2.json"

# crossover: --optimizer sgd needs less memory than adamw at the same configuration (a
# searched micro-batch would fill what sgd frees); aliases in --strategies
expect_ok xo-sgd crossover --ranks 8 --params 1e9:1e10:2 --strategies ddp,zero3 --optimizer sgd \
    --micro-batch 2 --checkpointing full --format csv
expect_ok xo-adamw crossover --ranks 8 --params 1e9:1e10:2 --strategies ddp,fsdp_full_shard \
    --micro-batch 2 --checkpointing full --format csv
paste -d, "$TMP/xo-sgd.out" "$TMP/xo-adamw.out" | awk -F, 'NR > 1 { n++; h = NF / 2; if ($1 != $(1 + h) || $9 + 0 >= $(9 + h) + 0) bad = 1 }
    END { exit !(n == 4 && !bad) }' || fail "crossover: --optimizer sgd does not lower peak memory, or zero3 is not fsdp_full_shard"

# ---- des: heterogeneity is priced by the DES only: the closed form says it ignores it
{ cat configs/clusters/dgx-h100.yaml; printf 'des:\n  stragglers:\n    - {rank: 3, slowdown: 2}\n'; } >"$TMP/strag.yaml"
for c in "collective --op all_reduce --bytes 1M" "simulate --model gpt2-124m --ranks 8" "plan --model gpt2-124m --ranks 8"; do
    n=${c%% *}
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    run "warn-$n" $c --cluster "$TMP/strag.yaml"
    [ "$rc" -eq 0 ] || fail "warn-$n: exit $rc"
    grep -q "collsim $n: warning: the cluster's des: section (0 link overrides, 1 straggler) is ignored by the closed form" \
        "$TMP/warn-$n.err" || fail "warn-$n: no des warning: $(head -c 300 "$TMP/warn-$n.err")"
done
expect_ok warn-des collective --op all_reduce --bytes 1M --cluster "$TMP/strag.yaml" --engine des
# under the DES the straggler runs its own timeline: a track per stream per rank class,
# the iteration time the slowest class's (its last slice's end), no slice overlapping
expect_ok strag-trace simulate --model gpt2-124m --ranks 8 --cluster "$TMP/strag.yaml" --engine des \
    --strategy ddp,fsdp_full_shard --format csv --trace "$TMP/strag.json"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/strag.json" "$TMP/strag-trace.out" <<'PY' 2>"$TMP/strag.err" || fail "strag-trace: $(tail -n 1 "$TMP/strag.err")"
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
procs = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
assert procs == {0: "ddp: 8 ranks", 1: "fsdp_full_shard: 8 ranks"}, procs
for pid, row in enumerate(rows):
    threads = {e["tid"]: e["args"]["name"] for e in d["traceEvents"]
               if e.get("name") == "thread_name" and e["pid"] == pid}
    assert threads[0] == "compute stream: ranks 0-2,4-7", threads
    assert threads[3] == "compute stream: rank 3 (2x)", threads
    end, tracks = {}, {}
    for e in d["traceEvents"]:
        if e["ph"] == "X" and e["pid"] == pid:
            cls = e["tid"] // 3
            end[cls] = max(end.get(cls, 0), e["ts"] + e["dur"])
            tracks.setdefault(e["tid"], []).append((e["ts"], e["dur"]))
    assert sorted(end) == [0, 1], end
    assert end[1] > end[0], ("the straggler does not end last", end)
    it = float(row["iteration_time_s"])
    assert abs(end[1] / 1e6 - it) < 1e-6, ("iteration time is not the straggler's", end, it)
    for k, ev in tracks.items():
        ev.sort()
        for a, b in zip(ev, ev[1:]):
            assert a[0] + a[1] <= b[0] + 1e-9, ("overlap on track", pid, k, a, b)
PY
fi

# ---- usage errors: exit 2, stderr only ---------------------------------------------

expect_usage bad-op collective --op all_reduse --bytes 1M
expect_usage bad-size collective --op all_reduce --bytes 12QB
expect_usage bad-preset collective --op all_reduce --bytes 1M --cluster dgx-z900
expect_usage no-op collective --bytes 1M
# a size of 0 B is no sweep: refused, not a loop that never ends (0 x F = 0)
expect_usage zero-bytes collective --op all_reduce --bytes 0
expect_usage zero-min collective --op all_reduce --min 0 --max 8
# a --factor so close to 1 that the sweep would not end in practice
expect_usage tiny-factor collective --op all_reduce --factor 1.0000000000000002
expect_usage tree-ag collective --algo tree --op all_gather --bytes 1M
grep -q 'tree' "$TMP/tree-ag.err" || fail "tree-ag: message does not mention tree"
expect_usage bad-cmd frobnicate
# --ranks has the scenario schema's limit, 1..2^30, and says so
expect_usage ranks-over collective --op all_reduce --bytes 1M --ranks 1073741825
grep -qF -- "--ranks expects an integer in 1..1073741824, got '1073741825'" "$TMP/ranks-over.err" ||
    fail "ranks-over: message is '$(cat "$TMP/ranks-over.err")'"
printf 'cluster: dgx-h100\nmodel: gpt2-124m\ntraining:\n  strategy: ddp\nranks: 1073741825\n' >"$TMP/ranks-over.yaml"
expect_usage ranks-over-yaml memory "$TMP/ranks-over.yaml"
grep -qF "1..1073741824, got 1073741825" "$TMP/ranks-over-yaml.err" ||
    fail "ranks-over-yaml: message is '$(cat "$TMP/ranks-over-yaml.err")'"

# ---- bad cluster file: FILE:LINE:COL and no -o file ----------------------------------

sed 's/^gpus_per_node:/gpus_per_nod:/' configs/clusters/dgx-h100.yaml >"$TMP/bad.yaml"
grep -q '^gpus_per_nod:' "$TMP/bad.yaml" || fail "setup: could not break configs/clusters/dgx-h100.yaml"
line=$(grep -n '^gpus_per_nod:' "$TMP/bad.yaml" | cut -d: -f1 || true)
expect_usage bad-yaml collective --cluster "$TMP/bad.yaml" --op all_reduce --bytes 1M \
    --format csv -o "$TMP/out.csv"
grep -qF "$TMP/bad.yaml:$line:1" "$TMP/bad-yaml.err" ||
    fail "bad-yaml: message lacks '$TMP/bad.yaml:$line:1': $(cat "$TMP/bad-yaml.err")"
grep -q 'gpus_per_nod' "$TMP/bad-yaml.err" || fail "bad-yaml: message does not name the key"
[ -e "$TMP/out.csv" ] && fail "bad-yaml: -o file was created despite the error"

# the control: the unbroken file is accepted
expect_ok good-yaml collective --cluster configs/clusters/dgx-h100.yaml --op all_reduce \
    --bytes 1M --format csv

# ---- -o on success ---------------------------------------------------------------------

expect_ok o-stdout collective --op all_gather --min 1K --max 64M --format csv
checks=$((checks + 1))
run o-file collective --op all_gather --min 1K --max 64M --format csv -o "$TMP/ok.csv"
[ "$rc" -eq 0 ] || fail "-o: exit $rc"
[ -s "$TMP/o-file.out" ] && fail "-o: data also went to stdout"
if [ -f "$TMP/ok.csv" ]; then
    cmp -s "$TMP/ok.csv" "$TMP/o-stdout.out" || fail "-o: file differs from stdout"
else
    fail "-o: $TMP/ok.csv not created"
fi

# ---- sweep length ------------------------------------------------------------------------

expect_ok sweep collective --op all_reduce --min 8 --max 1M --factor 2 --format csv
rows=$(tail -n +2 "$TMP/sweep.out" | wc -l | tr -d ' ')
[ "$rows" -eq 18 ] || fail "sweep: 8..1M by 2 gave $rows rows, want 18"
sizes=$(tail -n +2 "$TMP/sweep.out" | cut -d, -f6 | tr '\n' ' ')
[ "$sizes" = "8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 " ] ||
    fail "sweep: sizes are '$sizes'"

# ---- busbw = algbw * 2(n-1)/n for all_reduce ---------------------------------------------

for ranks in 8 16 4096; do
    expect_ok "busbw-$ranks" collective --op all_reduce --ranks "$ranks" --min 1K --max 1G \
        --factor 32 --format csv
    bad=$(awk -F, 'NR > 1 {
            n = $5; want = $10 * 2 * (n - 1) / n
            d = $11 - want; if (d < 0) d = -d
            # both columns are rounded to 4 decimals
            if (d > 0.0002 + 1e-6 * want) print "size " $6 ": busbw " $11 " want " want
        }' "$TMP/busbw-$ranks.out")
    [ -z "$bad" ] || fail "busbw ($ranks ranks): $bad"
    [ "$(tail -n +2 "$TMP/busbw-$ranks.out" | wc -l | tr -d ' ')" -gt 0 ] ||
        fail "busbw ($ranks ranks): no rows"
done

# ---- memory and simulate --------------------------------------------------------

MEMCOLS='strategy,ranks,params,params_bytes,grads_bytes,optimizer_bytes,model_states_bytes,activations_bytes,overhead_bytes,peak_bytes,capacity_bytes,fits'
SIMCOLS='iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,exposed_comm_s,all_reduce_bytes,all_gather_bytes,reduce_scatter_bytes'
expect_ok mem-csv memory --params 13e9 --strategy ddp,zero1,fsdp_shard_grad_op,fsdp_full_shard \
    --ranks 64 --format csv --model-states-only
head -n 1 "$TMP/mem-csv.out" | grep -q "^$MEMCOLS" || fail "memory csv: header does not start with the contract columns"
[ "$(tail -n +2 "$TMP/mem-csv.out" | wc -l | tr -d ' ')" -eq 4 ] || fail "memory csv: want 4 rows"
# the seed's figure: 13B under DDP with Adam needs > 200 GB of model states per GPU
awk -F, 'NR == 2 && !($1 == "ddp" && $7 > 200e9) { exit 1 }' "$TMP/mem-csv.out" ||
    fail "memory: 13B ddp model states not > 200 GB"
# model states shrink ddp > zero1 > shard_grad_op > full_shard
awk -F, 'NR > 2 && $7 >= prev { exit 1 } { prev = $7 }' "$TMP/mem-csv.out" ||
    fail "memory: model states do not shrink along the ZeRO stages"

expect_ok sim-csv simulate --model gpt3-1.3b --ranks 16 --strategy ddp,fsdp_full_shard --format csv
head -n 1 "$TMP/sim-csv.out" | grep -q "^$MEMCOLS" || fail "simulate csv: memory columns missing"
head -n 1 "$TMP/sim-csv.out" | grep -qF "$SIMCOLS" || fail "simulate csv: iteration columns missing"
expect_ok sim-csv2 simulate --model gpt3-1.3b --ranks 16 --strategy ddp,fsdp_full_shard --format csv
same sim-csv sim-csv2 "simulate: two runs differ"
# --engine des: same rows, DES-timed collectives, repeatable; memory refuses it
expect_ok sim-des simulate --model gpt3-1.3b --ranks 16 --strategy ddp,fsdp_full_shard --format csv --engine des
expect_ok sim-des2 simulate --model gpt3-1.3b --ranks 16 --strategy ddp,fsdp_full_shard --format csv --engine des
same sim-des sim-des2 "simulate --engine des: two runs differ"
[ "$(wc -l <"$TMP/sim-des.out")" = "$(wc -l <"$TMP/sim-csv.out")" ] || fail "simulate --engine des: rows differ"
cmp -s "$TMP/sim-des.out" "$TMP/sim-csv.out" && fail "simulate --engine des: identical to analytic (engine ignored?)"
expect_usage sim-bad-engine simulate --engine simgrid
expect_usage mem-engine memory --engine des
expect_ok sim-help simulate --help
grep -q -- '--engine E' "$TMP/sim-help.out" || fail "simulate --help: no --engine"

expect_ok sim-trace simulate --model gpt2-124m --ranks 8 --strategy fsdp_full_shard \
    --trace "$TMP/trace.json" --emit-schedule "$TMP/sched.json"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/trace.json" "$TMP/sched.json" <<'PY' || fail "trace/schedule: invalid JSON or content"
import json, sys
tr = json.load(open(sys.argv[1]))
ev = tr["traceEvents"]
assert any(e["ph"] == "X" for e in ev) and any(e["ph"] == "C" for e in ev)
assert {e["tid"] for e in ev if e["ph"] == "X"} >= {0, 1}
sc = json.load(open(sys.argv[2]))
ids = {t["id"] for t in sc["tasks"]}
assert sc["format"] == "collsim-schedule"
for t in sc["tasks"]:
    for dep in t["deps"]:
        assert dep["task"] in ids and dep["task"] < t["id"]
assert any(t["kind"] == "collective" and t["op"] == "all_gather" for t in sc["tasks"])
PY
fi

SCEN=$(ls configs/scenarios/*.yaml | head -n 1)
expect_ok sim-scenario simulate "$SCEN" --format json
expect_usage sim-bad-strategy simulate --strategy fsdp_full_shrd
expect_usage sim-bad-model simulate --model llama2-7 --ranks 8
expect_usage sim-model-and-params memory --model llama2-7b --params 7e9
# A Hugging Face config.json is the preset's shape: same bytes but the name.
expect_ok mem-hf memory --model hf:tests/data/hf/llama2-7b/config.json
expect_ok mem-preset memory --model llama2-7b
sed 's|meta-llama/Llama-2-7b-hf|llama2-7b|' "$TMP/mem-hf.out" | cmp -s - "$TMP/mem-preset.out" ||
    fail "memory --model hf:.../llama2-7b/config.json differs from --model llama2-7b beyond the name"
printf 'cluster: dgx-h100\nmodel: llama2-7b\ntraining:\n  strategy: ddp\n  micro_bach: 2\n' >"$TMP/bad-scen.yaml"
expect_usage sim-bad-scenario simulate "$TMP/bad-scen.yaml" -o "$TMP/never.csv"
grep -q 'bad-scen.yaml:5:' "$TMP/sim-bad-scenario.err" || fail "bad scenario: no file:line in '$(cat "$TMP/sim-bad-scenario.err")'"
[ -e "$TMP/never.csv" ] && fail "bad scenario: output file was written"

# ---- plan ------------------------------------------------------------------------

PLAN_SCEN=configs/scenarios/gpt3-13b-fsdp-64.yaml
# Under valgrind's wrapper (CS_COLLSIM) the same checks run on a smaller
# search: memcheck needs plan's paths, not the 16,000 configurations of the
# scenario (1.2 s a run plain, some 5 minutes under memcheck; the golden
# corpus runs the scenario itself there).
if [ -n "${CS_COLLSIM:-}" ]; then
    set -- --model gpt2-124m --ranks 16
else
    set -- "$PLAN_SCEN"
fi
expect_ok plan plan "$@"
expect_ok plan2 plan "$@"
same plan plan2 "plan: two runs differ"
rec=$(sed -n 's/^recommended: \([a-z0-9_]*\),.*/\1/p' "$TMP/plan.out")
case "$rec" in
    ddp|zero1|deepspeed_zero1|fsdp_no_shard|fsdp_shard_grad_op|fsdp_full_shard|fsdp_hybrid_shard) ;;
    *) fail "plan: no recommended strategy in '$(grep '^recommended' "$TMP/plan.out")'" ;;
esac
# the row marked as recommended is that strategy and fits
# (columns: strategy tp pp v schedule ckpt sac micro accum peak fits ...)
awk -v s="$rec" '/<- recommended/ { n++; if ($1 != s || $11 != "yes") bad = 1 }
    END { exit !(n == 1 && !bad) }' "$TMP/plan.out" || fail "plan: the recommended row is not one fitting $rec row"
awk '/^  peak memory/ { if ($3 + 0 > $6 + 0) bad = 1; n++ } END { exit !(n == 1 && !bad) }' \
    "$TMP/plan.out" || fail "plan: recommended peak memory exceeds capacity"
grep -q '^Rule of thumb: "DDP below 3B params' "$TMP/plan.out" || fail "plan: no rule-of-thumb check"
grep -q 'runner-up' "$TMP/plan.out" || fail "plan: no runner-up"
expect_ok plan-json plan "$@" --format json
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/plan-json.out" <<'PY' || fail "plan json: invalid or inconsistent"
import json, sys
j = json.load(open(sys.argv[1]))
names = {"ddp", "zero1", "deepspeed_zero1", "fsdp_no_shard", "fsdp_shard_grad_op", "fsdp_full_shard",
         "fsdp_hybrid_shard"}
cfgs = j["configs"]
assert {c["strategy"] for c in cfgs} == names, "not all seven strategies searched"
ok = [c for c in cfgs if c["simulated"] and c["fits"] and c["batch_kept"]]
r = j["recommendation"]
assert r and r["fits"] and r["peak_bytes"] <= r["capacity_bytes"] and r["batch_kept"]
assert r["tokens_per_s"] == max(c["tokens_per_s"] for c in ok), "not the fastest that fits"
assert r["micro_batch"] * r["grad_accum"] * (j["ranks"] // (r["tp"] * r["pp"])) == j["global_batch"]
assert all(c["tp"] >= 1 and j["ranks"] % c["tp"] == 0 for c in cfgs), "a tp degree not dividing the ranks"
assert all(j["ranks"] % (c["tp"] * c["pp"]) == 0 for c in cfgs), "a tp x pp not dividing the ranks"
assert ok and {c["tp"] for c in ok} >= {1, 2}, "TP degrees not searched by default"
assert ok and {c["pp"] for c in ok} >= {1, 2}, "PP degrees not searched by default"
assert all((c["pipeline_schedule"] is None) == (c["pp"] == 1) for c in cfgs)
assert all((c["selective_ac"] is None) == (c["checkpointing"] != "selective") for c in cfgs)
pruned = [c for c in cfgs if c["note"].startswith("pruned")]
assert len(pruned) <= j["pruned"] and not any(c["simulated"] for c in pruned)
assert j["simulated"] >= sum(1 for c in cfgs if c["simulated"])
keys = [(c["strategy"], c["tp"], c["pp"]) for c in cfgs]
assert len(keys) == len(set(keys)), "configs: not one per strategy x tp x pp"
for a in j["alternatives"]:
    assert a["loses"] in ("throughput", "memory", "batch", "n/a"), a
    if a["loses"] == "throughput":
        assert a["tokens_per_s"] <= r["tokens_per_s"] and a["slower_pct"] >= 0, a
ru = j["runner_up"]
assert ru and ru["strategy"] != r["strategy"] and ru["fits"]
assert ru["tokens_per_s"] == max(c["tokens_per_s"] for c in ok if c["strategy"] != r["strategy"])
assert abs(j["runner_up_slower_pct"] - 100 * (1 - ru["tokens_per_s"] / r["tokens_per_s"])) < 0.01
rows = j["rule_of_thumb"]["rows"]
assert len(rows) == 10 and j["rule_of_thumb"]["agrees"] == sum(x["agrees"] for x in rows)
for x in rows:
    want = "ddp" if x["params"] < 3e9 else "fsdp_shard_grad_op" if x["params"] <= 7e9 else "fsdp_full_shard"
    assert x["rule"] == want, x
    t = {s: x[s + "_tokens_per_s"] for s in ("ddp", "fsdp_shard_grad_op", "fsdp_full_shard")}
    fit = {s: v for s, v in t.items() if v is not None}
    assert (x["winner"] is None) == (not fit)
    if fit:
        assert t[x["winner"]] == max(fit.values())
    assert (x["ddp_vs_full_shard_pct"] is not None) == (x["params"] < 3e9 and t["ddp"] is not None
                                                      and t["fsdp_full_shard"] is not None)
PY
fi
# plan takes simulate's options without a scenario file, and searches
# layouts: one row per strategy x tp x pp (pp 1 and 2 at least); with
# --checkpointing only that mode; --strategy / --zero restrict the search
expect_ok plan-options plan --cluster dgx-a100 --nodes 2 --model gpt3-1.3b
grep -q '^# collsim plan: gpt3-1.3b .* on dgx-a100, 16 ranks on 2 nodes' "$TMP/plan-options.out" ||
    fail "plan options: not gpt3-1.3b on 2 dgx-a100 nodes: $(head -1 "$TMP/plan-options.out")"
for pp in 1 2; do
    grep -Eq "^fsdp_full_shard +1 +$pp +[0-9]+ +[-a-z0-9_]+ +(none|selective|full) " "$TMP/plan-options.out" ||
        fail "plan options: no fsdp_full_shard tp 1 pp $pp row"
done
expect_ok plan-fixed plan --model gpt3-1.3b --ranks 8 --checkpointing full --zero 3 --global-batch 32
awk '/^[a-z_0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[-a-z0-9_]+ +(none|selective|full) / { n++; if ($1 != "fsdp_full_shard" || $6 != "full") bad = 1 }
    END { exit !(n > 0 && !bad) }' "$TMP/plan-fixed.out" || fail "plan fixed: rows other than fsdp_full_shard/full"
grep -q '^# global batch 32 sequences = micro_batch 1 x grad_accum 4 x 8 ranks' "$TMP/plan-fixed.out" ||
    fail "plan fixed: --global-batch 32 not micro_batch 1 x grad_accum 4: $(sed -n 2p "$TMP/plan-fixed.out")"
expect_usage plan-bad-global plan --ranks 8 --global-batch 12
# a pinned layout that applies nowhere (pp 3 on 8 GPUs): every row says why
expect_ok plan-pp3 plan --model gpt2-124m --ranks 8 --pp 3 --strategy ddp
grep -q '^recommended: none: no configuration applies' "$TMP/plan-pp3.out" ||
    fail "plan pp 3: $(grep '^recommended' "$TMP/plan-pp3.out")"
grep -q 'n/a: pipeline_parallel 3 does not divide the 8 ranks' "$TMP/plan-pp3.out" ||
    fail "plan pp 3: no row says why"
# built-in scenarios by name, with a did-you-mean for a near miss
expect_ok sim-named simulate gpt3-13b-fsdp-64 --format csv
expect_ok sim-file simulate configs/scenarios/gpt3-13b-fsdp-64.yaml --format csv
same sim-named sim-file "simulate: built-in scenario differs from its file"
expect_usage sim-named-typo simulate gpt3-13b-fsdp-46
grep -q "did you mean 'gpt3-13b-fsdp-64'" "$TMP/sim-named-typo.err" || fail "scenario typo: no did-you-mean: $(cat "$TMP/sim-named-typo.err")"
# --seq-len changes the model; --global-batch sets grad_accum (tokens/s per GPU
# agree with the explicit grad_accum), aliases name the same strategies
expect_ok sim-seq simulate --model gpt3-1.3b --ranks 8 --seq-len 1024 --strategy FULL_SHARD --micro-batch 2 --global-batch 64 --format csv
expect_ok sim-seq-ref simulate --model gpt3-1.3b --ranks 8 --seq-len 1024 --strategy fsdp_full_shard --micro-batch 2 --grad-accum 4 --format csv
same sim-seq sim-seq-ref "simulate: --global-batch/alias differ from --grad-accum/name"
expect_ok sim-seq-2k simulate --model gpt3-1.3b --ranks 8 --seq-len 2048 --strategy fsdp_full_shard --micro-batch 2 --grad-accum 4 --format csv
cmp -s "$TMP/sim-seq.out" "$TMP/sim-seq-2k.out" && fail "simulate: --seq-len 1024 changed nothing"
expect_usage sim-zero3-typo simulate --strategy zero33
grep -q "did you mean 'zero3'" "$TMP/sim-zero3-typo.err" || fail "strategy typo: no did-you-mean: $(cat "$TMP/sim-zero3-typo.err")"
expect_usage plan-bad-format plan "$@" --format csv
expect_usage plan-bad-scenario plan "$TMP/bad-scen.yaml" -o "$TMP/never-plan.txt"
grep -q 'bad-scen.yaml:5:' "$TMP/plan-bad-scenario.err" || fail "plan bad scenario: no file:line in '$(cat "$TMP/plan-bad-scenario.err")'"
[ -e "$TMP/never-plan.txt" ] && fail "plan bad scenario: output file was written"
expect_ok plan-help plan --help

if [ "$failures" -ne 0 ]; then
    echo "cli: $failures failure(s) in $checks runs"
    exit 1
fi
echo "cli: all $checks runs passed"
