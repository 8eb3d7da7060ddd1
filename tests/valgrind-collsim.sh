#!/bin/sh
# SPDX-License-Identifier: MIT
# valgrind-collsim.sh - collsim under memcheck, for `meson test --setup
# valgrind` (tests/meson.build sets CS_COLLSIM to this script, and
# CS_VALGRIND_EXE / CS_VALGRIND_OPTS): the end-to-end scripts run it in
# place of collsim. Any memcheck error or definite leak exits 99.
exec valgrind $CS_VALGRIND_OPTS "$CS_VALGRIND_EXE" "$@"
