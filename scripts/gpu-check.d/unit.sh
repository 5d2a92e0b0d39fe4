#!/usr/bin/env bash
# Suite unit: every unit test on the GPU (the GPU-vs-CPU tests run instead of skipping).
# Writes OUT_DIR/{device.txt, unit-tests.txt}.
# Usage: scripts/gpu-check.sh --suite unit BIN_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite unit BIN_DIR OUT_DIR}
RESULTS=${2:?usage: scripts/gpu-check.sh --suite unit BIN_DIR OUT_DIR}
mkdir -p "$RESULTS"
log() { echo; echo "=== $*"; }

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv | tee "$RESULTS/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$RESULTS/device.txt"
"$BIN/gpunfv" version | tee -a "$RESULTS/device.txt"

log "unit tests"
"$BIN/gpunfv_tests" > "$RESULTS/unit-tests.txt" 2>&1 || { tail -n 40 "$RESULTS/unit-tests.txt"; exit 1; }
grep -E "^\[ +OK \] Gpu|SKIPPED|PASSED|FAILED" "$RESULTS/unit-tests.txt"
if grep -qE "^\[  SKIPPED \] .* \([0-9]+ ms\)" "$RESULTS/unit-tests.txt"; then echo "some tests skipped: no GPU?" >&2; exit 1; fi
