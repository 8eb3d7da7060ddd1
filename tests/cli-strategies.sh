#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cli-strategies.sh - every row of the strategy table, and every alias,
# through every training command: `memory`, `simulate` (table, csv, json),
# `plan` (table, json) and `crossover` (table, csv, json, each with --plot
# when gnuplot is on PATH). The strategies and aliases are read from
# `collsim memory --help` (the same table prints them), so a new row or
# alias is covered without editing this file; the plot files expected are
# the ones `collsim crossover --help` names, so the help cannot list fewer
# (or other) files than are drawn.
#
# Each run must exit 0 with nothing on stderr; the output must name the
# strategy the name resolves to (an alias: the row it stands for; csv: the
# first column of every row; json: valid, with that "strategy"). Small
# models and two sweep points keep it to a few seconds, and a few minutes
# under `meson test --setup valgrind`.
#
# Usage: sh tests/cli-strategies.sh PATH/TO/collsim   (from the source root)
# Prints one line per failure; exits 1 if any failed.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
COLLSIM=${CS_COLLSIM:-$1} # CS_COLLSIM: the valgrind setup's wrapper (tests/meson.build)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-strategies.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# a signal ends the script (the EXIT trap cleans up), as in every test script
trap 'exit 130' INT
trap 'exit 143' TERM

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# The --strategy help, joined: "ddp, zero1, ... (default ddp); ... aside:
# zero0=ddp, zero2=fsdp_shard_grad_op, ..."
"$COLLSIM" memory --help >"$TMP/help.txt"
spec=$(tr '\n' ' ' <"$TMP/help.txt" | tr -s ' ' |
    sed -n 's/.*--strategy S\[,S\.\.\.\] \(.*\) --zero N .*/\1/p')
strategies=$(printf '%s\n' "$spec" | sed 's/ (default.*//' | tr -d ',')
pairs=$(printf '%s\n' "$spec" | sed -n 's/.*aside: //p' | tr -d ' ' | tr ',' ' ')
case " $strategies " in
*" ddp "*" fsdp_full_shard "*) ;;
*)
    echo "FAIL: cannot read the strategies from 'collsim memory --help' (got '$strategies')"
    exit 1
    ;;
esac
[ -n "$pairs" ] || {
    echo "FAIL: cannot read the aliases from 'collsim memory --help'"
    exit 1
}

# The plot files crossover's help names (BASE-throughput, ...).
kinds=$("$COLLSIM" crossover --help | tr '\n' ' ' | grep -o 'BASE-[a-z]*' | sed 's/^BASE-//' |
    sort -u)
[ -n "$kinds" ] || fail "crossover --help names no plot files"
plot=0
if command -v gnuplot >/dev/null 2>&1; then
    plot=1
else
    echo "note: gnuplot not on PATH: crossover runs without --plot"
fi

# check NAME WANT CMD FORMAT [ARGS...]: collsim CMD --format FORMAT ARGS
# exits 0 (rc), quiet on stderr, and its output is about strategy WANT.
check() {
    name=$1 want=$2 cmd=$3 fmt=$4
    shift 4
    tag="$cmd ($name) --format $fmt"
    out="$TMP/out" err="$TMP/err"
    rc=0
    "$COLLSIM" "$cmd" --format "$fmt" "$@" >"$out" 2>"$err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$tag: exit $rc: $(head -c 300 "$err")"
        return 0
    fi
    [ -s "$err" ] && fail "$tag: unexpected stderr: $(head -c 300 "$err")"
    [ -s "$out" ] || {
        fail "$tag: no output"
        return 0
    }
    case $fmt in
    csv)
        bad=$(tail -n +2 "$out" | grep -v "^$want," | head -n 1 || true)
        [ -z "$bad" ] || fail "$tag: a row not of $want: $bad"
        [ "$(wc -l <"$out")" -ge 2 ] || fail "$tag: no rows"
        ;;
    json)
        if command -v python3 >/dev/null 2>&1; then
            python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out" 2>"$TMP/py.err" ||
                fail "$tag: invalid JSON: $(tail -n 1 "$TMP/py.err")"
        fi
        grep -q "\"strategy\": *\"$want\"" "$out" || fail "$tag: no \"strategy\": \"$want\""
        ;;
    *)
        grep -q "$want" "$out" || fail "$tag: $want not in the output"
        ;;
    esac
}

# crossover NAME WANT FORMAT: a two-point sweep, with every plot (a batch of
# 2 sequences per rank: the search, and the rule check it runs, stay short).
crossover() {
    name=$1 want=$2 fmt=$3
    if [ "$plot" -eq 0 ]; then
        check "$name" "$want" crossover "$fmt" --ranks 8 --params 1e8:1e9:2 --global-batch 16 --strategies "$name"
        return 0
    fi
    rm -f "$TMP"/p-*
    check "$name" "$want" crossover "$fmt" --ranks 8 --params 1e8:1e9:2 --global-batch 16 --strategies "$name" \
        --plot "$TMP/p.svg"
    [ "$rc" -eq 0 ] || return 0 # reported; no plots expected
    for k in $kinds; do
        [ -s "$TMP/p-$k.svg" ] || fail "crossover --strategies $name --format $fmt --plot: no p-$k.svg"
    done
    for f in "$TMP"/p-*; do
        [ -e "$f" ] || continue
        k=${f##*/p-}
        k=${k%.svg}
        case " $(echo $kinds) " in
        *" $k "*) ;;
        *) fail "crossover --plot draws p-$k.svg, which its --help does not name" ;;
        esac
    done
}

# every command, every format, for NAME standing for strategy WANT
all() {
    name=$1 want=$2
    for fmt in table csv json; do
        check "$name" "$want" memory "$fmt" --model gpt2-124m --ranks 8 --strategy "$name"
        check "$name" "$want" simulate "$fmt" --model gpt2-124m --ranks 8 --strategy "$name"
        crossover "$name" "$want" "$fmt"
    done
    for fmt in table json; do
        check "$name" "$want" plan "$fmt" --model gpt2-124m --ranks 8 --strategy "$name"
    done
}

n=0
for s in $strategies; do
    all "$s" "$s"
    n=$((n + 1))
done
for p in $pairs; do
    alias=${p%%=*} want=${p#*=}
    case " $strategies " in
    *" $want "*) ;;
    *) fail "alias $alias stands for '$want', not a strategy" ;;
    esac
    all "$alias" "$want"
    n=$((n + 1))
done

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s) over $n strategies and aliases"
    exit 1
fi
echo "ok: $n strategies and aliases through memory, simulate, plan and crossover"
