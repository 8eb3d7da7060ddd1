#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-check.sh - tools/gpu-check without a GPU: the script parses (bash -n)
# and, on a machine where nvidia-smi lists no GPU, exits 77 (skipped)
# before building anything. On a GPU machine only the parse is checked
# (the real run builds with CUDA and takes minutes: run tools/gpu-check).
#
# Usage: sh tests/gpu-check.sh   (from the source root)
# Exit: 0 ok, 1 a check failed, 77 skipped (no bash).
set -eu
command -v bash >/dev/null 2>&1 || { echo "skip: no bash"; exit 77; }
bash -n tools/gpu-check || { echo "FAIL: tools/gpu-check does not parse"; exit 1; }
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "gpu-check parses; a GPU is present: run tools/gpu-check itself"
    exit 0
fi
rc=0
env -u GPUS BUILD="${TMPDIR:-/tmp}/collsim-gpu-check-none" bash tools/gpu-check >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 77 ] || { echo "FAIL: tools/gpu-check without a GPU exited $rc, want 77"; exit 1; }
[ ! -e "${TMPDIR:-/tmp}/collsim-gpu-check-none" ] || { echo "FAIL: it built without a GPU"; exit 1; }
echo "gpu-check parses and skips (77) without a GPU"
