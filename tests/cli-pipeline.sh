#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-pipeline.sh - a pipeline's outputs end to end (issue 24): the trace
# of `collsim simulate --pp` has one track per stage with every pass of
# every micro-batch (F and B, W under zero_bubble) and the transfers it
# sends, no two slices of a track overlapping, each pass starting no
# earlier than the end of the transfer it receives (matched by tag), and
# a stage's gradient sync and optimizer step after its last pass. The
# schedule JSON (version 2) of `--emit-schedule` carries the pipeline,
# its stages and each stage's tasks with p2p send / recv tasks that pair
# up by tag. The iteration's parts: simulate's last CSV column
# pipeline_bubble_s (> 0 under --pp, 0 without), the parts adding up to
# the iteration, the card's bubble line and send_recv's bytes sent; plan's
# pipeline_bubble_s and its recommendation's bubble line.
#
# Usage: sh tests/cli-pipeline.sh PATH/TO/collsim   (from the source root)
# Prints one line per failure; exits 1 if any failed.
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
C=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-pipeline.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
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

# --- the trace: a track per stage -------------------------------------------

# trace_ok FILE P M PASSES CHUNKS: the checks of the header on FILE.
trace_ok() {
    python3 - "$@" <<'PY'
import json, sys
path, P, M, passes, V = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
d = json.load(open(path))
assert d["otherData"] == {"format": "collsim-trace", "version": 1}, d["otherData"]
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
assert names == {s: "stage %d (of %d)" % (s, P) for s in range(P)}, names
x = [e for e in ev if e["ph"] == "X"]
sends = {}
for s in range(P):
    track = sorted((e for e in x if e["tid"] == s), key=lambda e: float(e["ts"]))
    for a, b in zip(track, track[1:]):
        assert float(a["ts"]) + float(a["dur"]) <= float(b["ts"]) + 1e-3, ("overlap", a, b)
    got = sorted((e["args"]["pass"], e["args"]["micro"], e["args"]["chunk"]) for e in track if "pass" in e["args"])
    want = sorted((p, i, c) for p in passes for i in range(M) for c in range(V))
    assert got == want, ("stage %d passes" % s, got[:6], want[:6])
    assert track[-1]["name"] == "optimizer step", track[-1]
    assert track[-2]["name"].startswith("gradient sync"), track[-2]
    for e in track:
        if e["name"].startswith("send "):
            sends[e["args"]["tag"]] = (s, e["args"]["peer_stage"], float(e["ts"]) + float(e["dur"]))
# every transfer received once, by the peer it was sent to, and the pass
# that receives it starts no earlier than its end
recv = set()
for e in x:
    a = e["args"]
    if "pass" not in a or a["from_stage"] < 0:
        continue
    src, dst, end = sends[a["recv_tag"]]
    assert (src, dst) == (a["from_stage"], a["stage"]), (a, src, dst)
    assert float(e["ts"]) >= end - 1e-3, ("starts before its input arrived", e, end)
    assert a["recv_tag"] not in recv
    recv.add(a["recv_tag"])
assert recv == set(sends), (len(recv), len(sends))
n_fwd = (P * V - 1) * M
assert len(sends) == 2 * n_fwd, (len(sends), 2 * n_fwd)
PY
}

check "1f1b trace" "$C" simulate --model llama2-7b --ranks 16 --pp 4 --grad-accum 8 --strategy ddp \
    --trace "$TMP/1f1b.json" -o "$TMP/1f1b.txt"
check "1f1b trace: a track per stage" trace_ok "$TMP/1f1b.json" 4 8 FB 1
cat >"$TMP/inter.yaml" <<'YAML'
cluster: dgx-h100
model: llama2-7b
ranks: 16
training:
  strategy: fsdp_full_shard
  grad_accum: 4
  pipeline_parallel: 2
  virtual_stages: 2
YAML
check "interleaved trace" "$C" simulate "$TMP/inter.yaml" --trace "$TMP/inter.json" -o "$TMP/inter.txt"
check "interleaved trace: chunks" trace_ok "$TMP/inter.json" 2 4 FB 2
check "zero_bubble trace" "$C" simulate --model llama2-7b --ranks 16 --pp 2 --pp-schedule zero_bubble \
    --grad-accum 4 --strategy ddp --trace "$TMP/zb.json" -o "$TMP/zb.txt"
check "zero_bubble trace: W passes" trace_ok "$TMP/zb.json" 2 4 FBW 1

# --- the schedule: stages and their p2p tasks -------------------------------

# schedule_ok FILE P M PASSES CHUNKS: every stage's tasks in its range
# ("stages"), its passes all there, every send received once by the peer
# it names (same tag, size and dtype, the peer naming the sender back),
# and a pass's send in one batch with the next pass's receive (Megatron's
# send_forward_recv_backward pairing).
schedule_ok() {
    python3 - "$@" <<'PY'
import json, sys
path, P, M, passes, V = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
d = json.load(open(path))
assert (d["format"], d["version"]) == ("collsim-schedule", 2), (d["format"], d["version"])
assert d["pipeline"]["stages"] == P and d["pipeline"]["virtual_stages"] == V, d["pipeline"]
assert d["pipeline"]["micro_batches"] == M, d["pipeline"]
assert {"name": "pp", "size": P} in d["mesh"] and d["groups"]["pp"]["ranks"] == P, d["mesh"]
tasks = d["tasks"]
assert [t["id"] for t in tasks] == list(range(len(tasks)))
sends, recvs = {}, {}
for st in d["stages"]:
    s = st["stage"]
    mine = tasks[st["first_task"]:st["first_task"] + st["tasks"]]
    assert all(t["stage"] == s for t in mine), s
    got = sorted((t["pass"], t["micro"], t["chunk"]) for t in mine if t["kind"] == "compute")
    assert got == sorted((p, i, c) for p in passes for i in range(M) for c in range(V)), s
    batch = {}
    for t in mine:
        if t["kind"] != "p2p":
            continue
        key = t["tag"]
        book = sends if t["op"] == "send" else recvs
        assert key not in book, ("tag twice", t)
        book[key] = (s, t["peer"]["pp"], t["size_bytes"], t["dtype"])
        batch.setdefault(t["batch"], []).append(t)
    # a batch is consecutive tasks of one gap between passes
    for b, ts in batch.items():
        ids = [t["id"] for t in ts]
        assert ids == list(range(ids[0], ids[0] + len(ids))), ("batch not consecutive", s, b)
    assert mine[-1]["name"] == "optimizer step" and mine[-2]["kind"] == "collective", mine[-2:]
assert sends.keys() == recvs.keys(), (len(sends), len(recvs))
for tag, (s, peer, size, dt) in sends.items():
    r = recvs[tag]
    assert r == (peer, s, size, dt), ("send and recv disagree", tag, (s, peer, size, dt), r)
assert len(sends) == 2 * (P * V - 1) * M, len(sends)
PY
}

check "1f1b schedule" "$C" simulate --model llama2-7b --ranks 16 --pp 4 --grad-accum 8 --strategy ddp \
    --emit-schedule "$TMP/1f1b.sched.json" -o "$TMP/1f1b.txt"
check "1f1b schedule: stages and p2p" schedule_ok "$TMP/1f1b.sched.json" 4 8 FB 1
check "interleaved schedule" "$C" simulate "$TMP/inter.yaml" --emit-schedule "$TMP/inter.sched.json" \
    -o "$TMP/inter.txt"
check "interleaved schedule: chunks" schedule_ok "$TMP/inter.sched.json" 2 4 FB 2
check "zero_bubble schedule" "$C" simulate --model llama2-7b --ranks 16 --pp 2 --pp-schedule zero_bubble \
    --grad-accum 4 --strategy fsdp_full_shard --emit-schedule "$TMP/zb.sched.json" -o "$TMP/zb.txt"
check "zero_bubble schedule: W passes" schedule_ok "$TMP/zb.sched.json" 2 4 FBW 1

# --- the iteration's parts ---------------------------------------------------

# parts_ok FILE PP: simulate's CSV row: pipeline_bubble_s is the last
# column, > 0 with a pipeline (PP 1) and 0 without (0); the parts add up:
# iteration_time_s = compute_s + exposed_comm_s + cpu_wait_s +
# pipeline_bubble_s (no side copies under PP); the gradients' bytes sent
parts_ok() {
    python3 - "$@" <<'PY'
import csv, sys
path, pp = sys.argv[1], int(sys.argv[2])
rows = list(csv.reader(open(path)))
head, row = rows[0], rows[1]
assert head[-1] == "pipeline_bubble_s", head[-3:]
r = {k: float(v) for k, v in zip(head, row) if k not in ("strategy",)}
bubble = r["pipeline_bubble_s"]
assert (bubble > 0) if pp else (bubble == 0), bubble
if pp:
    parts = r["compute_s"] + r["exposed_comm_s"] + r["cpu_wait_s"] + bubble
    assert abs(parts - r["iteration_time_s"]) <= 1e-5, (parts, r["iteration_time_s"])
    assert r["exposed_comm_s"] < r["iteration_time_s"] - r["compute_s"] - bubble + 1e-5
assert r["all_reduce_bytes"] + r["reduce_scatter_bytes"] > 0, r
PY
}
check "pp parts (csv)" "$C" simulate --model llama2-7b --ranks 16 --pp 4 --grad-accum 8 \
    --strategy ddp --format csv -o "$TMP/parts.csv"
check "pp parts: bubble last, parts add up" parts_ok "$TMP/parts.csv" 1
check "no pp parts (csv)" "$C" simulate --model llama2-7b --ranks 16 --grad-accum 8 \
    --strategy ddp --format csv -o "$TMP/parts1.csv"
check "no pp parts: bubble 0" parts_ok "$TMP/parts1.csv" 0
# the block for people: the bubble beside the CPU's wait, not as exposed
# send_recv, and the transfers' bytes sent (the issue: 0.000 GB)
check "pp card" "$C" simulate --model llama2-7b --ranks 16 --pp 4 --grad-accum 8 --strategy ddp \
    -o "$TMP/parts.txt"
check "pp card: a bubble line" grep -q '^  *pipeline bubble (idle)  *[0-9.]* s$' "$TMP/parts.txt"
check "pp card: send_recv bytes sent" \
    awk '/^ *send_recv / { n++; if ($(NF - 4) + 0 <= 0) bad = 1 } END { exit !(n == 1 && !bad) }' \
    "$TMP/parts.txt"
check "no pp card" "$C" simulate --model llama2-7b --ranks 16 --grad-accum 8 --strategy ddp \
    -o "$TMP/parts1.txt"
check "no pp card: no bubble line" sh -c "! grep -q 'pipeline bubble' '$TMP/parts1.txt'"

# plan: a configuration with a pipeline carries its bubble apart from its
# exposed communication (JSON member pipeline_bubble_s, 0 at pp 1), and a
# recommendation with one says it in words
plan_ok() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pp = [c for c in d["configs"] if c["simulated"] and c["pp"] > 1]
flat = [c for c in d["configs"] if c["simulated"] and c["pp"] == 1]
assert pp and flat, (len(pp), len(flat))
for c in pp:
    assert c["pipeline_bubble_s"] > 0, c
    assert c["exposed_comm_s"] + c["pipeline_bubble_s"] < c["iteration_time_s"], c
for c in flat:
    assert c["pipeline_bubble_s"] == 0, c
PY
}
check "plan (json)" "$C" plan --model gpt2-124m --ranks 8 --format json -o "$TMP/plan.json"
check "plan: the bubble apart" plan_ok "$TMP/plan.json"
check "plan --pp 2" "$C" plan --model gpt2-124m --ranks 8 --pp 2 -o "$TMP/plan.txt"
check "plan --pp 2: the recommendation's bubble" \
    grep -q '^  pipeline bubble  *[0-9.]* s ([0-9.]* % of the iteration)$' "$TMP/plan.txt"

# memory has no iteration: with a pipeline too, its trace and schedule files are empty
check "memory --pp --trace --emit-schedule" "$C" memory --model gpt2-124m --ranks 4 --pp 2 \
    --grad-accum 2 --trace "$TMP/m.trace" --emit-schedule "$TMP/m.sched" -o "$TMP/m.txt"
check "memory --pp: empty trace and schedule" test -e "$TMP/m.trace" -a ! -s "$TMP/m.trace" -a \
    -e "$TMP/m.sched" -a ! -s "$TMP/m.sched"

echo "cli-pipeline: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
