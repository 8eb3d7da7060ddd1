#!/bin/sh
# SPDX-License-Identifier: MIT
#
# traps.sh - every shell script of the suite and the tools ends on INT and
# TERM: a trap on those signals that only cleans up lets sh carry on after
# meson kills a test, so every later check fails and reports a defect that
# is not there (issue 26: "plan: exit 143", then "plan: two runs differ").
# Clean-up belongs on EXIT; INT and TERM traps must exit. Fails naming each
# script:line whose INT or TERM trap does not start with `exit`.
# Usage: sh tests/traps.sh   (from the source root)
set -eu
bad=$(grep -n -E "^[[:space:]]*trap[[:space:]]+('[^']*'|\"[^\"]*\")[[:space:]].*\b(INT|TERM)\b" \
        tests/*.sh tests/fuzz/*.sh hw/tests/*.sh tools/*.sh tools/gpu-check 2>/dev/null |
      grep -v -E "trap[[:space:]]+['\"]exit [0-9]+['\"]" || true)
if [ -n "$bad" ]; then
    echo "FAIL: INT/TERM traps that do not exit (put clean-up on EXIT, and 'exit 130' / 'exit 143' on INT / TERM):"
    echo "$bad"
    exit 1
fi
echo "traps: every INT and TERM trap exits"
