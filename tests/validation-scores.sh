#!/bin/sh
# SPDX-License-Identifier: MIT
#
# validation-scores.sh - CI check of the published validation scores: runs
# validation/run --check, which recomputes every dataset's median / p90 / max
# error (uncalibrated and calibrated) and every training table's (collsim
# simulate against validation/training/) and fails when one grew by more than
# 1 point over validation/scores.csv or validation/training_scores.csv. After a
# deliberate model change, rerun `validation/run --collsim PATH` and commit the
# new report and scores.
#
# Usage: sh tests/validation-scores.sh PATH/TO/collsim   (from the source root)
# Exit: 0 ok, 1 a score got worse, 77 skipped (no python3).
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 PATH/TO/collsim" >&2
    exit 2
fi
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
exec python3 validation/run --collsim "$1" --check
