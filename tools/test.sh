#!/bin/sh
# The whole test suite, as CI runs it: installs missing Debian packages,
# builds with -Wall -Wextra -Werror and runs every test, then the
# end-to-end tests again with collsim under valgrind (memcheck; `meson test
# --setup valgrind`; not suite long, the three longest scripts, which run
# plain and sanitized, nor suite nowrapper, the scripts that call collsim
# directly: tests/meson.build), then rebuilds with AddressSanitizer +
# UndefinedBehaviorSanitizer and runs every test again, then builds the fuzz
# targets with clang and libFuzzer (+ ASan/UBSan) and runs each for
# CS_FUZZ_SECONDS (default 10: ten targets, two at a time). valgrind and the
# fuzz step are skipped (with a line saying so) when valgrind / clang are not
# installed.
# Usage: tools/test.sh   (build dirs: build/, build-asan/, build-fuzz/)
#        CS_FUZZ_SECONDS=600 tools/test.sh   (a long fuzz run)
set -eu
cd "$(dirname "$0")/.."
# each phase's wall seconds, so a log shows where the time went (CI's budget: 20 min)
t0=$(date +%s)
phase() {
    now=$(date +%s)
    echo "test.sh: $1: $((now - t0)) s"
    t0=$now
}
tools/install-deps.sh
phase "installing packages"
setup() { # dir, options...
    d=$1; shift
    if [ -f "$d/build.ninja" ]; then meson setup --reconfigure "$d" "$@" >/dev/null
    else meson setup "$d" "$@" >/dev/null; fi
}
setup build -Dwerror=true -Dtests=enabled
ninja -C build
phase "plain build"
meson test -C build --print-errorlogs
phase "plain tests"
if command -v valgrind >/dev/null 2>&1; then
    meson test -C build --setup valgrind --print-errorlogs
    phase "valgrind tests"
else
    echo "test.sh: valgrind not installed: the valgrind setup is skipped"
fi
setup build-asan -Dwerror=true -Dtests=enabled -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized
ninja -C build-asan
phase "ASan+UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --setup sanitizer --print-errorlogs
phase "ASan+UBSan tests"
# clang with libFuzzer's runtime (Debian: libclang-rt-dev, only recommended by clang)
fuzzer_ok() {
    command -v clang >/dev/null 2>&1 || return 1
    probe=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
    clang -fsanitize=fuzzer,address "$probe/p.c" -o "$probe/p" >/dev/null 2>&1
    ok=$?
    rm -rf "$probe"
    return $ok
}
if fuzzer_ok; then
    (CC=clang && export CC && setup build-fuzz -Dtests=enabled -Dmpi=disabled -Dfuzz=enabled \
        -Dfuzz_seconds="${CS_FUZZ_SECONDS:-10}" -Db_sanitize=address,undefined -Db_lundef=false)
    # only the fuzz targets (the library with coverage, not every tool and suite)
    ninja -C build-fuzz $(meson introspect build-fuzz --targets |
        python3 -c 'import json, sys; print(" ".join(t["filename"][0] for t in json.load(sys.stdin) if t["name"].startswith("fuzz-")))' |
        sed "s|$(pwd)/build-fuzz/||g")
    phase "fuzz build"
    meson test -C build-fuzz --no-rebuild --suite fuzz --print-errorlogs
    phase "fuzz runs"
else
    echo "test.sh: clang with libFuzzer not installed: the fuzz targets only replay their seeds (suite fuzz-replay)"
fi
