#!/bin/sh
# SPDX-License-Identifier: MIT
# replay-run.sh - runs a fuzz target's replay build (its arguments), under
# memcheck in the valgrind setup (CS_VALGRIND_OPTS set: tests/meson.build).
if [ -n "${CS_VALGRIND_OPTS:-}" ]; then
    exec valgrind $CS_VALGRIND_OPTS "$@"
fi
exec "$@"
