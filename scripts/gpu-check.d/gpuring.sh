#!/usr/bin/env bash
# Suite gpuring: the GPU ring port (host bypassing, NIC emulated) on a machine with an NVIDIA GPU (H100/H200):
#   1. the gpuring unit tests: the ring protocol on CPU threads, and on the GPU (persistent
#      kernels, NIC emulator through the copy engine) with loss, reordering and slot checks;
#   2. bench/gpuring_bench with the pass-through NF: Table II shape (rings 1,2,4,8,16 x sizes
#      64,300,1000,1500 x load 25/50/90%/unpaced), tail batching 1/8/16 + 2500 ns with tx
#      write-back on/off, and the host-staged path on the same frames;
#   3. the same benchmark, quick shape, with the router NF in the rx kernel.
# Writes DIR/{device.txt, unit-tests.txt, gpuring_bench.{txt,json}, gpuring_bench_router.{txt,json}}.
# Usage: [GPURING_BENCH_ARGS=...] scripts/gpu-check.sh --suite gpuring BIN_DIR OUT_DIR
# GPURING_BENCH_ARGS adds options to step 2 (e.g. "--packets 100000 --max-case-s 0.5").
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite gpuring BIN_DIR OUT_DIR}
RESULTS=${2:?usage: scripts/gpu-check.sh --suite gpuring BIN_DIR OUT_DIR}
mkdir -p "$RESULTS"
log() { echo; echo "=== $*"; }

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv | tee "$RESULTS/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$RESULTS/device.txt"

log "gpuring unit tests (CPU threads and GPU kernels)"
timeout 300 "$BIN/gpunfv_tests" --gtest_filter='GpuRing*:*GpuRingSession*:*GpuRingOnDevice*' > "$RESULTS/unit-tests.txt" 2>&1 \
  || { tail -n 40 "$RESULTS/unit-tests.txt"; exit 1; }
grep -E "^\[ +(OK|SKIPPED|FAILED) \]|PASSED|FAILED" "$RESULTS/unit-tests.txt"
if grep -q "SKIPPED.*GpuRingOnDevice" "$RESULTS/unit-tests.txt"; then echo "GPU tests skipped: no device?" >&2; exit 1; fi

log "gpuring_bench, pass-through NF"
# shellcheck disable=SC2086
timeout 420 "$BIN/gpuring_bench" --json "$RESULTS/gpuring_bench.json" ${GPURING_BENCH_ARGS:-} | tee "$RESULTS/gpuring_bench.txt"

log "gpuring_bench, router NF (quick shape)"
timeout 240 "$BIN/gpuring_bench" --quick --nf router --json "$RESULTS/gpuring_bench_router.json" | tee "$RESULTS/gpuring_bench_router.txt"
