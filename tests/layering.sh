#!/bin/sh
# SPDX-License-Identifier: MIT
#
# layering.sh - the library's wings follow the data flow and a lower wing
# never includes a higher one: base < coll < config < train < study < out
# (DESIGN.md). Checks every #include "wing/..." in sim/; also that every
# sim/ source sits in a wing and that the library never includes cli/.
# A deliberately wrong include is caught by the self-test at the end.
#
# Usage: sh tests/layering.sh   (from the source root). Exits 1 on a violation.
set -eu
ORDER="base coll config train study out"
rank() { # wing -> its position in ORDER, or 0 if not a wing
    i=1
    for w in $ORDER; do
        [ "$w" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo 0
}
# check FILE WING: prints one line per include above WING
check() {
    own=$(rank "$2")
    grep -o '^#include "[^"]*"' "$1" | sed 's/#include "//; s/"$//' | while read -r h; do
        case $h in
        */*) ;;
        *) echo "$1: includes \"$h\" without its wing"; continue ;;
        esac
        w=${h%%/*}
        r=$(rank "$w")
        if [ "$r" -eq 0 ]; then
            echo "$1: includes \"$h\", outside the library"
        elif [ "$r" -gt "$own" ]; then
            echo "$1: wing $2 includes \"$h\" of the higher wing $w"
        fi
    done
}
bad=$(
    for f in $(find sim -name '*.[ch]' | LC_ALL=C sort); do
        rel=${f#sim/}
        case $rel in
        */*) check "$f" "${rel%%/*}" ;;
        *) echo "$f: not in a wing" ;;
        esac
    done
)
# Self-test: an include of out/ from base must be reported.
tmp=$(mktemp "${TMPDIR:-/tmp}/layering.XXXXXX")
trap 'rm -f "$tmp"' EXIT
printf '#include "out/report.h"\n' >"$tmp"
[ -n "$(check "$tmp" base)" ] || { echo "layering.sh: self-test did not catch base -> out"; exit 1; }
if [ -n "$bad" ]; then
    echo "$bad"
    exit 1
fi
echo "layering: every include of sim/ points down or across"
