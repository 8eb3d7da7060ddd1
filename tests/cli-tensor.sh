#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-tensor.sh - tensor parallelism through the commands' data outputs
# (issue 22): simulate and memory flag a tp group that spans nodes in CSV
# and JSON (tp, tp_nodes, tp_spans_nodes), not only in the table.
#
# Usage: sh tests/cli-tensor.sh PATH/TO/collsim   (from the source root)
# Prints one line per failure; exits 1 if any failed.
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
C=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-tensor.XXXXXX")
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

# The CSV cell of column NAME (header row 1, data row 2) of FILE.
cell() {
    awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
        NR == 2 { print $c }' "$2"
}

# --- the tp group in CSV and JSON: inside a node, across two --------------
M="--model llama3-8b --cluster dgx-h100"
"$C" simulate $M --ranks 16 --tp 4 --format csv >"$TMP/in.csv"
"$C" simulate $M --ranks 16 --tp 16 --format csv >"$TMP/span.csv"
"$C" memory $M --ranks 16 --tp 16 --format csv >"$TMP/span-mem.csv"
"$C" simulate $M --ranks 16 --format csv >"$TMP/none.csv"
"$C" simulate $M --ranks 16 --tp 16 --format json >"$TMP/span.json"
check "simulate csv: tp,tp_nodes,tp_spans_nodes, then the allocator's two, then the bubble, last" \
    grep -q ',cpu_wait_s,tp,tp_nodes,tp_spans_nodes,peak_allocated_bytes,peak_reserved_bytes,pipeline_bubble_s$' \
    "$TMP/in.csv"
check "memory csv: tp,tp_nodes,tp_spans_nodes, then the allocator's two, last" \
    grep -q ',max_micro_batch,tp,tp_nodes,tp_spans_nodes,peak_allocated_bytes,peak_reserved_bytes$' "$TMP/span-mem.csv"
check "tp 4 on 8-GPU nodes: one node, not flagged" \
    [ "$(cell tp "$TMP/in.csv"),$(cell tp_nodes "$TMP/in.csv"),$(cell tp_spans_nodes "$TMP/in.csv")" = "4,1,0" ]
check "tp 16 on 8-GPU nodes: two nodes, flagged" \
    [ "$(cell tp "$TMP/span.csv"),$(cell tp_nodes "$TMP/span.csv"),$(cell tp_spans_nodes "$TMP/span.csv")" = "16,2,1" ]
check "memory: the same flag" [ "$(cell tp_spans_nodes "$TMP/span-mem.csv")" = 1 ]
check "no --tp: tp 1, not flagged" \
    [ "$(cell tp "$TMP/none.csv"),$(cell tp_spans_nodes "$TMP/none.csv")" = "1,0" ]
check "json: tp_spans_nodes true for tp 16" \
    python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["rows"][0]; sys.exit(not (r["tp"] == 16 and r["tp_nodes"] == 2 and r["tp_spans_nodes"] == 1))' "$TMP/span.json"

if [ "$failures" -gt 0 ]; then
    echo "$failures of $checks check(s) failed"
    exit 1
fi
echo "ok: $checks checks"
