#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test-hw-mpi.sh - collsim-hw's MPI backend end to end, on 2 and 4 local
# CPU ranks (what CI can run without a GPU):
#   bench      nccl-tests-style table, CSV header = `collsim collective
#              --format csv` columns + measurement columns, one row per size,
#              rows join with the simulator's (cluster cpu-local) on
#              (op, size_bytes, ranks); --check passes for every op; a
#              deliberately corrupted element is caught (exit 3); a hung
#              rank times out (exit 5) with the rows measured before it kept;
#              --algo forcing accepted, unknown names rejected (exit 2)
#   compute    GEMM and copy rows
#   replay     a `collsim simulate --emit-schedule` schedule on 2 ranks:
#              CSV rows join the schedule's tasks on id, trace is JSON; a
#              2-stage pipeline (1F1B) with its p2p batches on 2 ranks
#   errors     bad arguments / schedules rejected with exit 2 before MPI
#              starts, a missing schedule with exit 1
#
# Usage: sh test-hw-mpi.sh COLLSIM-HW COLLSIM PYTHON3 SOURCE_ROOT
# Exits 77 (skipped) when mpirun is missing; 1 if any check failed.
# Under AddressSanitizer, leaks inside Open MPI are suppressed with
# tests/lsan-mpi.supp (collsim-hw's own allocations are still checked).
set -eu

if [ $# -ne 4 ]; then
    echo "usage: $0 COLLSIM-HW COLLSIM PYTHON3 SOURCE_ROOT" >&2
    exit 2
fi
HW=$1
COLLSIM=$2
PY=$3
SRC=$4
if ! command -v mpirun >/dev/null 2>&1; then
    echo "skip: mpirun not found (tools/install-deps.sh installs openmpi-bin)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-hw-mpi.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
trap 'exit 130' INT
trap 'exit 143' TERM
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$SRC/tests/lsan-mpi.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
TO=""
command -v timeout >/dev/null 2>&1 && TO="timeout 60"

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run NAME NP ARGS...: collsim-hw under mpirun -np NP (NP 0: no mpirun),
# output in $TMP/NAME.out/.err, status in $rc.
run() {
    name=$1
    np=$2
    shift 2
    checks=$((checks + 1))
    rc=0
    if [ "$np" -eq 0 ]; then
        $TO "$HW" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    else
        $TO $MPIRUN -np "$np" "$HW" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    fi
}

expect_rc() { # NAME WANT
    if [ "$rc" -ne "$2" ]; then
        fail "$1: exit $rc, want $2 (stderr: $(head -c 600 "$TMP/$1.err"))"
        return 1
    fi
    return 0
}

HEADER='op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,busbw_GBps,time_min_us,time_median_us,time_max_us,iters,host,backend,library_version'

# join MEASURED.csv PREDICTED.csv NAME: every measured row must have a
# predicted row with the same (op, size_bytes, ranks), and the numbers
# must parse as positive.
join_rows() {
    awk -F, -v name="$3" '
        FNR == 1 { next }
        NR == FNR { key[$1 "," $6 "," $5] = 1; next }
        {
            n++
            if (!(($1 "," $6 "," $5) in key)) { print name ": no simulator row for " $1 " " $6 " " $5; bad++ }
            if (!($9 > 0 && $10 > 0 && $11 > 0 && $12 > 0 && $12 <= $13 && $13 <= $14)) { print name ": bad numbers: " $0; bad++ }
            if ($4 != "measured" || $17 != "mpi") { print name ": engine/backend columns: " $0; bad++ }
        }
        END { if (n == 0) { print name ": no measured rows"; bad++ } exit bad ? 1 : 0 }' "$2" "$1"
}

# --- bench, 2 ranks: the command from the issue -------------------------------
run bench2 2 bench --backend mpi --op all_reduce --min 1K --max 1M --factor 4 --iters 5 \
    --warmup 2 --check -o "$TMP/ar2.csv"
if expect_rc bench2 0; then
    [ "$(head -n 1 "$TMP/ar2.csv")" = "$HEADER" ] || fail "bench2: CSV header is '$(head -n 1 "$TMP/ar2.csv")'"
    [ "$(wc -l <"$TMP/ar2.csv")" -eq 7 ] || fail "bench2: want 6 rows (1K..1M x4), got $(($(wc -l <"$TMP/ar2.csv") - 1))"
    grep -q "^# Out of bounds values : 0 OK" "$TMP/bench2.out" || fail "bench2: check did not pass"
    [ "$(grep -c '^ *[0-9]' "$TMP/bench2.out")" -eq 6 ] || fail "bench2: table rows"
    "$COLLSIM" collective --cluster cpu-local --ranks 2 --op all_reduce --min 1K --max 1M \
        --factor 4 --format csv >"$TMP/ar2.sim.csv" || fail "bench2: collsim collective failed"
    join_rows "$TMP/ar2.csv" "$TMP/ar2.sim.csv" bench2 || fail "bench2: rows do not join with the simulator's"
fi

# --- bench, 4 ranks: every op checked; all_gather rows join ---------------
for op in all_reduce all_gather reduce_scatter broadcast reduce; do
    run "bench4-$op" 4 bench --backend mpi --op "$op" --min 4K --max 256K --factor 8 --iters 3 \
        --warmup 1 --check --dtype bf16 -o "$TMP/$op.csv"
    if expect_rc "bench4-$op" 0; then
        grep -q "^# Out of bounds values : 0 OK" "$TMP/bench4-$op.out" || fail "bench4-$op: check"
        "$COLLSIM" collective --cluster cpu-local --ranks 4 --op "$op" --min 4K --max 256K \
            --factor 8 --dtype bf16 --format csv >"$TMP/$op.sim.csv" || fail "bench4-$op: collsim"
        join_rows "$TMP/$op.csv" "$TMP/$op.sim.csv" "bench4-$op" || fail "bench4-$op: join"
    fi
done

# --- algorithm forcing -----------------------------------------------------------
run algo-ring 2 bench --backend mpi --op all_reduce --min 64K --max 64K --iters 2 --warmup 0 \
    --check --algo ring -o "$TMP/ring.csv"
expect_rc algo-ring 0 && { cut -d, -f2 "$TMP/ring.csv" | tail -n 1 | grep -qx ring || fail "algo-ring: algo column"; }
run algo-bad 0 bench --backend mpi --op all_gather --algo tree --min 1K --max 1K
expect_rc algo-bad 2 && { grep -q "tree" "$TMP/algo-bad.err" || fail "algo-bad: message"; }

# --- deliberate faults: a wrong element must be caught, a hang must time out -
run corrupt 2 bench --backend mpi --op all_reduce --min 1K --max 1K --iters 1 --warmup 0 \
    --check --inject corrupt
expect_rc corrupt 3 && { grep -q "ERROR" "$TMP/corrupt.out" || fail "corrupt: no ERROR line"; }
run hang 2 bench --backend mpi --op all_reduce --min 1K --max 16K --factor 4 --iters 2 \
    --warmup 0 --inject hang --timeout 2 -o "$TMP/hang.csv"
if [ "$rc" -eq 0 ]; then
    fail "hang: exit 0, want a timeout"
else
    grep -q "timeout" "$TMP/hang.err" || fail "hang: no timeout message"
    [ "$(wc -l <"$TMP/hang.csv")" -eq 2 ] || fail "hang: want the header and the 1K row kept, got $(cat "$TMP/hang.csv")"
fi

# --- compute ---------------------------------------------------------------------
run compute 2 compute --backend mpi --min-n 32 --max-n 64 --copy-min 64K --copy-max 256K \
    --iters 2 --warmup 0 -o "$TMP/compute.csv"
if expect_rc compute 0; then
    head -n 1 "$TMP/compute.csv" | grep -q '^kind,backend,dtype,m,n,k,bytes,ranks,iters' || fail "compute: header"
    [ "$(grep -c '^gemm,mpi,fp32' "$TMP/compute.csv")" -eq 2 ] || fail "compute: gemm rows"
    [ "$(grep -c '^copy,mpi' "$TMP/compute.csv")" -eq 2 ] || fail "compute: copy rows"
fi

# compute --shapes: the compute model's own kernels (collsim simulate --kernels)
printf 'name: tiny\nlayers: 2\nhidden: 64\nheads: 2\nffn_hidden: 256\nseq_len: 32\nvocab: 512\n' >"$TMP/tiny.yaml"
"$COLLSIM" simulate --cluster cpu-local --ranks 2 --model "$TMP/tiny.yaml" --kernels "$TMP/kernels.csv" \
    >/dev/null || fail "collsim simulate --kernels failed"
run shapes 2 compute --backend mpi --shapes "$TMP/kernels.csv" --iters 2 --warmup 0 -o "$TMP/shapes.csv"
if expect_rc shapes 0; then
    "$PY" - "$TMP/kernels.csv" "$TMP/shapes.csv" <<'EOF' || fail "compute --shapes: rows"
import csv, sys
k = list(csv.DictReader(open(sys.argv[1])))
m = list(csv.DictReader(open(sys.argv[2])))
gemms = {(r["m"], r["n"], r["k"]) for r in k if r["class"] == "gemm" and r["batch"] == "1"}
got = {(r["m"], r["n"], r["k"]) for r in m if r["kind"] == "gemm"}
assert got == gemms, (got, gemms)
names = {r["kernel"] for r in k}
assert all(r["kernel"] in names for r in m), [r["kernel"] for r in m]
assert any(r["kind"] == "copy" for r in m)
EOF
fi
printf 'class,kernel\ngemm,x\n' >"$TMP/bad-shapes.csv"
run badshapes 2 compute --backend mpi --shapes "$TMP/bad-shapes.csv"
expect_rc badshapes 2 && { grep -q "no column 'm'" "$TMP/badshapes.err" || fail "compute --shapes: message"; }

# --- replay --------------------------------------------------------------------
"$COLLSIM" simulate --model gpt2-124m --ranks 2 --cluster cpu-local --strategy fsdp_full_shard \
    --emit-schedule "$TMP/sched.json" >/dev/null || fail "collsim simulate --emit-schedule failed"
run replay 2 replay "$TMP/sched.json" --backend mpi -o "$TMP/rp" --bytes-scale 0.05 --iters 2 --progress 0
if expect_rc replay 0; then
    head -n 1 "$TMP/rp.csv" | grep -qx 'id,name,stream,kind,predicted_s,measured_s,start_s,end_s,scale,predicted_scaled_s,work,m,n,k,reps,dtype,executed_flops,executed_bytes' \
        || fail "replay: CSV header"
    # --progress 0: one line per iteration (1 warmup + 2), from process 0 only
    [ "$(grep -c '^collsim-hw replay: iteration [1-3] of 3' "$TMP/replay.err")" -eq 3 ] ||
        fail "replay: progress lines: $(head -c 400 "$TMP/replay.err")"
    # the scaled prediction: bytes x 0.05, FLOPs x the backend's 1e-4, below the unscaled one
    awk '/^  iteration time \(s\)/ { if (!($4 + 0 > 0 && $5 + 0 > 0 && $5 + 0 < $6 + 0)) bad = 1; n++ } END { exit !(n == 1 && !bad) }' \
        "$TMP/replay.out" || fail "replay: no scaled prediction below the unscaled one: $(grep 'iteration time (s)' "$TMP/replay.out")"
    grep -q '^# predicted: .*pred. scaled: each x its work scale (FLOPs x 0.0001, bytes x 0.05)' "$TMP/replay.out" ||
        fail "replay: the scales are not named"
    "$PY" - "$TMP/sched.json" "$TMP/rp.csv" "$TMP/rp.trace.json" <<'EOF' || fail "replay: outputs"
import csv, json, sys
sched = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
trace = json.load(open(sys.argv[3]))
ids = {t["id"]: t for t in sched["tasks"]}
assert len(rows) == len(ids), (len(rows), len(ids))
for r in rows:
    t = ids[int(r["id"])]
    assert r["name"] == t["name"] and r["kind"] == t["kind"] and r["stream"] == t["stream"], r
    assert abs(float(r["predicted_s"]) - t["predicted_s"]) <= 1e-6 * t["predicted_s"] + 1e-15, r
    assert abs(float(r["predicted_scaled_s"]) - float(r["predicted_s"]) * float(r["scale"])) \
        <= 1e-6 * float(r["predicted_s"]) + 1e-15, r
    s, e, m = float(r["start_s"]), float(r["end_s"]), float(r["measured_s"])
    assert 0 <= s <= e and abs(e - s - m) < 1e-9, r
    # what ran: the MPI backend's SGEMMs of the task's FLOPs x scale (the
    # shape rounds each side: 10% at most here), copies of mem_bytes x
    # scale, collectives of size_bytes x scale (the count rounds down)
    fl, by, sc = float(r["executed_flops"]), float(r["executed_bytes"]), float(r["scale"])
    if r["work"] == "gemm":
        mm, nn, kk, reps = (int(r[c]) for c in ("m", "n", "k", "reps"))
        assert r["dtype"] == "fp32" and fl == 2.0 * mm * nn * kk * reps, r
        assert abs(fl / (t["flops"] * sc) - 1) < 0.1, (r, t["flops"])
        assert by == 4.0 * (mm * kk + kk * nn + mm * nn) * reps, r
    elif r["work"] == "copy":
        assert fl == 0 and r["m"] == "" and int(r["reps"]) >= 1, r
        assert abs(by - t["mem_bytes"] * sc) <= 2, (r, t["mem_bytes"])
    else:
        assert r["work"] == "collective" == r["kind"] and r["dtype"] == t["dtype"], r
        assert 0 < t["size_bytes"] * sc - by < 1e-3 * t["size_bytes"] * sc + 64, (r, t["size_bytes"])
    for d in t["deps"]:
        dep = next(x for x in rows if int(x["id"]) == d["task"])
        bound = float(dep["start_s"] if d["when"] == "start" else dep["end_s"])
        assert s >= bound - 1e-9, (r, dep)
ev = [e for e in trace["traceEvents"] if e["ph"] == "X"]
assert len(ev) == 2 * len(ids) and {e["pid"] for e in ev} == {0, 1}
EOF
    grep -q "exposed communication" "$TMP/replay.out" || fail "replay: no summary"
fi
grep -q '"version": 2' "$TMP/sched.json" && grep -q '"mesh"' "$TMP/sched.json" ||
    fail "simulate --emit-schedule: not a version-2 schedule with its mesh"
# a version-1 schedule (written before the device mesh: groups as world/shard/replica counts)
# still replays, its groups read as the mesh tp 1 x dp_shard x dp_replicate
run replayv1 2 replay "$SRC/tests/data/replay-cpu.json" --backend mpi -o "$TMP/rv1" --bytes-scale 0.05 \
    --iters 1 --progress 0
expect_rc replayv1 0 && { grep -q "exposed communication" "$TMP/replayv1.out" || fail "replay v1: no summary"; }
# HYBRID_SHARD on 4 ranks of 2 nodes (shard groups of 2, a node's): the replay splits
# its dp_shard and dp_replicate communicators from the schedule's mesh
"$COLLSIM" simulate --model gpt2-124m --ranks 4 --nodes 2 --cluster dgx-h100 --strategy fsdp_hybrid_shard \
    --emit-schedule "$TMP/hsched.json" >/dev/null 2>&1 || fail "collsim simulate hybrid --emit-schedule failed"
run replayhsdp 4 replay "$TMP/hsched.json" --backend mpi -o "$TMP/rh" --bytes-scale 0.02 --iters 1 --progress 0
expect_rc replayhsdp 0 && { grep -q '"group": "dp_replicate"' "$TMP/hsched.json" || fail "hybrid schedule: no dp_replicate collective"; }
# FSDP x TP 2 on 4 ranks of 2 nodes (tp innermost: ranks 0-1 and 2-3; dp_shard 0,2 and 1,3):
# the replay splits the tp communicators from the schedule's mesh and runs its collectives
"$COLLSIM" simulate --model gpt2-124m --ranks 4 --nodes 2 --cluster dgx-h100 --strategy fsdp --tp 2 \
    --emit-schedule "$TMP/tsched.json" >/dev/null 2>&1 || fail "collsim simulate --tp 2 --emit-schedule failed"
run replaytp 4 replay "$TMP/tsched.json" --backend mpi -o "$TMP/rt" --bytes-scale 0.02 --iters 1 --progress 0
if expect_rc replaytp 0; then
    grep -q '"group": "tp"' "$TMP/tsched.json" || fail "tp schedule: no tp collective"
    grep -q '{"name": "tp", "size": 2}' "$TMP/tsched.json" || fail "tp schedule: no tp dimension of 2 in the mesh"
    grep -q ',tp,' "$TMP/rt.csv" || fail "tp replay: no measured row on the tp stream"
fi

# a 2-stage pipeline (1F1B, 4 micro-batches, full-size 1.5 MB transfers: past the eager
# limit, so unbatched blocking sends would wait on each other) on 2 ranks: each rank runs its stage's
# passes, its p2p batches (Isend/Irecv, a send with the next receive) meet the other's:
# every task has a row (from a rank of its stage), a pass starts after its receive
# ends, and the run ends (no deadlock) within the timeout (ranks' clocks differ by the
# barrier's skew, so a receive is not compared with its send's start)
"$COLLSIM" simulate --model gpt2-124m --ranks 2 --cluster cpu-local --pp 2 --grad-accum 4 \
    --strategy ddp --emit-schedule "$TMP/psched.json" >/dev/null || fail "collsim simulate --pp 2 --emit-schedule failed"
run replaypp 2 replay "$TMP/psched.json" --backend mpi -o "$TMP/rpp" --iters 2 --progress 0 --timeout 20
if expect_rc replaypp 0; then
    grep -q 'each task from the first rank of its pipeline stage' "$TMP/replaypp.out" ||
        fail "pipeline replay: the summary does not say whose timeline"
    "$PY" - "$TMP/psched.json" "$TMP/rpp.csv" "$TMP/rpp.trace.json" <<'EOF2' || fail "pipeline replay: outputs"
import csv, json, sys
sched = json.load(open(sys.argv[1]))
rows = {int(r["id"]): r for r in csv.DictReader(open(sys.argv[2]))}
trace = json.load(open(sys.argv[3]))
tasks = {t["id"]: t for t in sched["tasks"]}
assert set(rows) == set(tasks), (len(rows), len(tasks))
p2p = [t for t in tasks.values() if t["kind"] == "p2p"]
assert len(p2p) == 2 * 2 * 4 and {t["stage"] for t in p2p} == {0, 1}, len(p2p)
send = {t["tag"]: t for t in p2p if t["op"] == "send"}
for t in p2p:
    r = rows[t["id"]]
    assert r["kind"] == "p2p" and r["work"] == "collective" and float(r["measured_s"]) >= 0, r
    # the pass after a receive (same rank: same clock) starts after it ends
    nxt = rows.get(t["id"] + 1)
    if t["op"] == "recv" and nxt and tasks[t["id"] + 1]["kind"] == "compute":
        assert float(nxt["start_s"]) >= float(r["end_s"]) - 1e-6, (r, nxt)
    assert tasks[send[t["tag"]]["id"]]["stage"] == t["peer"]["pp"] if t["op"] == "recv" else True
for st in sched["stages"]:  # a stage's tasks one after another on its rank
    mine = [rows[i] for i in range(st["first_task"], st["first_task"] + st["tasks"])
            if tasks[i]["stream"] == "compute"]
    for a, b in zip(mine, mine[1:]):
        assert float(b["start_s"]) >= float(a["start_s"]) - 1e-6, (a, b)
# the trace: each rank shows its own stage's tasks only
ev = [e for e in trace["traceEvents"] if e["ph"] == "X"]
assert len(ev) == len(tasks), (len(ev), len(tasks))
for e in ev:
    assert tasks[e["args"]["id"]]["stage"] == e["pid"], e
EOF2
fi
# the pipeline on another number of ranks is refused, naming the ranks it needs
run replaypp3 1 replay "$TMP/psched.json" --backend mpi -o "$TMP/rpp3" --iters 1 --progress 0
expect_rc replaypp3 2 && { grep -q 'pipeline of 2 stages on 2 ranks: replay it on 2 ranks' "$TMP/replaypp3.err" ||
    fail "pipeline replay on 1 rank: message: $(head -c 300 "$TMP/replaypp3.err")"; }

# --- errors before any MPI start ------------------------------------------------
run bad-op 0 bench --backend mpi --op all_sum
expect_rc bad-op 2
run bad-size 0 bench --backend mpi --op all_reduce --min 4Q
expect_rc bad-size 2
run bad-backend 0 bench --backend gloo --op all_reduce
expect_rc bad-backend 2
run bad-g 0 bench --backend mpi --op all_reduce -g 2
expect_rc bad-g 2
run no-sched 0 replay "$TMP/nope.json"
expect_rc no-sched 1
printf '{"format": "collsim-schedule", "version": 1, "groups": {"world": 1, "shard": 1, "replica": 1},\n "tasks": [{"id": 0, "kind": "compute", "stream": "compute", "name": "x", "predicted_s": 1, "deps": [{"task": 3, "when": "end"}]}]}\n' >"$TMP/bad.json"
run bad-sched 0 replay "$TMP/bad.json"
expect_rc bad-sched 2 && { grep -q "bad.json:2:" "$TMP/bad-sched.err" || fail "bad-sched: no file:line in '$(cat "$TMP/bad-sched.err")'"; }
for f in bad-op bad-size bad-backend bad-g; do
    [ -s "$TMP/$f.out" ] && fail "$f: stdout not empty"
done

echo "$checks runs, $failures failures"
[ "$failures" -eq 0 ]
