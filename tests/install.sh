#!/bin/sh
# SPDX-License-Identifier: MIT
#
# install.sh - `meson install` into a scratch DESTDIR and use what it put
# there as a user would: a C program built against libcollsim through
# collsim.pc (shared, and static), every installed header compiled on its
# own, the man pages (one per command of `collsim --help`, their text the
# --help text), the presets and example scenarios, bash completion, and
# the Python module imported from the install and run against the
# installed collsim.
#
# Usage: sh tests/install.sh BUILD_DIR [SANITIZERS]   (from the source root;
# SANITIZERS: the build's b_sanitize, e.g. address,undefined, so programs
# linked against a sanitized libcollsim link its runtime too)
set -eu
B=$1
SAN=${2:-none}
CC_SAN=""
[ "$SAN" = none ] || CC_SAN="-fsanitize=$SAN"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collsim-install.XXXXXX")
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
meson install -C "$B" --destdir "$TMP/root" --no-rebuild --quiet >"$TMP/install.log" 2>&1 ||
    { cat "$TMP/install.log"; echo "FAIL: meson install"; exit 1; }
R=$TMP/root
pc=$(find "$R" -name collsim.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no collsim.pc installed"; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
prefix=$R$(pkg-config --variable=prefix collsim) # the configured prefix, under DESTDIR
PKG="pkg-config --define-variable=prefix=$prefix"
bin=$prefix/bin
for f in "$bin/collsim" $(find "$R" -name 'libcollsim.so*' -o -name libcollsim.a | head -n 2); do
    [ -e "$f" ] || fail "not installed: $f"
done

# a program against the library: the built-in preset, one collective
cat >"$TMP/use.c" <<'C'
#include <stdio.h>
#include "base/units.h"
#include "coll/topology.h"
#include "config/config.h"
int main(void)
{
    cs_cluster c;
    cs_diag d;
    if (cs_config_cluster("dgx-h100", &c, &d)) return 1;
    double bytes;
    if (cs_units_parse_size("80GB", &bytes, NULL, 0) || bytes != 80e9) return 2;
    printf("%s %d\n", c.name, c.gpus_per_node);
    return 0;
}
C
# shellcheck disable=SC2046
if cc -std=c11 $CC_SAN -o "$TMP/use" "$TMP/use.c" $($PKG --cflags --libs collsim) 2>"$TMP/cc.err"; then
    out=$(LD_LIBRARY_PATH=$($PKG --variable=libdir collsim) "$TMP/use") || fail "shared: program failed"
    [ "$out" = "dgx-h100 8" ] || fail "shared: got '$out'"
else
    fail "cannot build against collsim.pc: $(head -c 400 "$TMP/cc.err")"
fi
# shellcheck disable=SC2046
cc -std=c11 $CC_SAN -o "$TMP/use-static" "$TMP/use.c" $($PKG --cflags collsim) \
    "$($PKG --variable=libdir collsim)/libcollsim.a" $($PKG --libs --static collsim | sed 's/-lcollsim//') \
    $(pkg-config --libs yaml-0.1 gsl) -lm 2>"$TMP/cc-static.err" || fail "static: $(head -c 400 "$TMP/cc-static.err")"
[ -x "$TMP/use-static" ] && { "$TMP/use-static" >/dev/null || fail "static: program failed"; }
# every installed header compiles alone
for h in $(cd "$prefix/include/collsim" && find . -name '*.h' | sed 's|^\./||' | LC_ALL=C sort); do
    printf '#include "%s"\nint main(void) { return 0; }\n' "$h" >"$TMP/h.c"
    # shellcheck disable=SC2046
    cc -std=c11 -D_POSIX_C_SOURCE=200809L -fsyntax-only $($PKG --cflags collsim) "$TMP/h.c" 2>"$TMP/h.err" ||
        fail "header $h does not compile alone: $(head -c 300 "$TMP/h.err")"
done

# man pages: one per command, the --help text
man=$prefix/share/man/man1
cmds=$("$bin/collsim" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$cmds" ] || fail "no commands in collsim --help"
[ -f "$man/collsim.1" ] || fail "no collsim.1"
for c in $cmds; do
    [ -f "$man/collsim-$c.1" ] || { fail "no man page for $c"; continue; }
    want=$("$bin/collsim" "$c" --help | sed -n 2,4p | sed 's/-/\\-/g' | head -n 1)
    [ -z "$want" ] || grep -qF -- "$want" "$man/collsim-$c.1" || fail "collsim-$c.1 lacks its --help text"
done
# presets, scenarios, completion
for f in collsim/clusters/dgx-h100.yaml collsim/models/llama2-70b.yaml collsim/scenarios/gpt3-13b-fsdp-64.yaml \
    collsim/scenarios/README.md bash-completion/completions/collsim doc/collsim/json-output.md; do
    [ -f "$prefix/share/$f" ] || fail "not installed: share/$f"
done
# every docs/FILE.md a --help names is installed under share/doc/collsim/
docs=$({ "$bin/collsim" --help; for c in $cmds; do "$bin/collsim" "$c" --help; done; } |
    grep -o 'docs/[a-z0-9-]*\.md' | sort -u)
[ -n "$docs" ] || fail "no --help names a docs/ file (the check below checks nothing)"
for d in $docs; do
    [ -f "$prefix/share/doc/collsim/${d#docs/}" ] || fail "--help names $d, not installed in share/doc/collsim/"
done
# and collsim-hw's (hw/README.md), where it was built
if [ -x "$bin/collsim-hw" ]; then
    "$bin/collsim-hw" --help | grep -q 'hw/README.md' || fail "collsim-hw --help does not name hw/README.md"
    [ -f "$prefix/share/doc/collsim/hw/README.md" ] || fail "hw/README.md not installed in share/doc/collsim/hw/"
fi
"$bin/collsim" simulate "$prefix/share/collsim/scenarios/gpt3-13b-fsdp-64.yaml" --format csv >"$TMP/a.csv" &&
    "$bin/collsim" simulate gpt3-13b-fsdp-64 --format csv >"$TMP/b.csv" && cmp -s "$TMP/a.csv" "$TMP/b.csv" ||
    fail "the installed scenario file and the built-in one differ"
# the Python module, from the install
py=$(find "$R" -name collsim.py | head -n 1)
if [ -z "$py" ]; then
    fail "collsim.py not installed"
elif command -v python3 >/dev/null 2>&1; then
    PYTHONPATH=$(dirname "$py") COLLSIM="$bin/collsim" python3 -c '
import collsim
r = collsim.collective("all_reduce", bytes="1GB")
assert r["rows"][0]["size_bytes"] == 1e9, r["rows"][0]
' 2>"$TMP/py.err" || fail "installed Python module: $(tail -n 2 "$TMP/py.err")"
fi
if [ "$failures" -ne 0 ]; then
    echo "install: $failures failure(s)"
    exit 1
fi
echo "install: all checks passed"
