#!/bin/sh
# The whole test suite, as CI runs it: installs missing Debian packages,
# builds with -Wall -Wextra -Werror and runs every test, then rebuilds with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs them again.
# Usage: tools/test.sh            (build dirs: build/, build-asan/)
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
setup() { # dir, options...
    d=$1; shift
    if [ -f "$d/build.ninja" ]; then meson setup --reconfigure "$d" "$@" >/dev/null
    else meson setup "$d" "$@" >/dev/null; fi
}
setup build -Dwerror=true -Dtests=enabled
ninja -C build
meson test -C build --print-errorlogs
setup build-asan -Dwerror=true -Dtests=enabled -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs
