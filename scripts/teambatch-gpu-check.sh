#!/usr/bin/env bash
# The gpuring batch-mode loops run by warp teams (ring_batch_loops.h, gpu_ring_batch_kernels.cu:
# every lane of each block's warp) on a machine with an NVIDIA GPU (H100/H200):
#   1. the device tests: the chain fed by a gpuring port on the GPU backend against the CPU
#      backend, bit for bit (GpuRingChainOnDevice*), the GPU stage on device-resident batches
#      (GpuStageDeviceResident*), the batch loops on the GPU and on CPU threads (*GpuRingBatch*),
#      and the CPU team tests of the batch loops (*TeamBatchLoops*). GPU tests that skip count as
#      a failure here (this script is for a machine with a GPU);
#   2. the router chain over the same generated 64 B frames fed by the gpuring port (device) and
#      by the host-staged path, both on the GPU backend (plus the CPU backend for reference):
#      Mpps unpaced, latency p50/p99 at 100 kpps (scripts/lib/gpuring_compare.py, the measurement
#      of scripts/gpuring-gpu-chain-check.sh step 3).
# Writes OUT_DIR/{device.txt, device-tests.txt, compare.txt, compare.json, runs/*}; prints the
# summary last. About 2-3 minutes; at most about 5 (tests 150 s, comparison what is left of 280 s).
# Usage: scripts/teambatch-gpu-check.sh BIN_DIR OUT_DIR   (PACKETS=1000000 by default)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: scripts/teambatch-gpu-check.sh BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/teambatch-gpu-check.sh BIN_DIR OUT_DIR}
BIN=$(cd "$BIN" && pwd)
mkdir -p "$OUT/runs" out
OUT=$(cd "$OUT" && pwd)
PACKETS=${PACKETS:-1000000}
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
export CUDA_MODULE_LOADING=EAGER   # the ring kernel runs beside the chain's (kernel_loading.h)
log() { echo; echo "=== $*"; }
status_tests=FAILED status_compare=FAILED

log "device"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || echo "no nvidia-smi"; nproc | sed 's/^/host cores: /'; } \
  | tee "$OUT/device.txt"

log "1. device tests (150 s at most)"
filter='GpuRingChainOnDevice*:GpuStageDeviceResident*:*GpuRingBatch*:*TeamBatchLoops*'
timeout 150 "$BIN/gpunfv_tests" --gtest_filter="$filter" > "$OUT/device-tests.txt" 2>&1
rc=$?
grep -E "^\[ +(OK|SKIPPED|FAILED) +\]|PASSED|FAILED TEST|watchdog" "$OUT/device-tests.txt"
chain_hangs=0
if [ $rc -eq 0 ] && ! grep -q "SKIPPED" "$OUT/device-tests.txt"; then
  status_tests=OK
else
  echo "device tests: exit $rc$([ $rc -ge 124 ] && echo ' (timed out: a hang?)')"
  tail -n 30 "$OUT/device-tests.txt"
  [ $rc -eq 3 ] || [ $rc -ge 124 ] && chain_hangs=1   # the comparison then skips the gpuring device runs
fi

log "2. router chain: gpuring-fed (device) vs host-staged, GPU backend"
python3 scripts/lib/gpuring_compare.py "$BIN" "$OUT" "$PACKETS" "$((280 - SECONDS))" "$chain_hangs" | tee "$OUT/compare.txt"
[ $? -eq 0 ] && status_compare=OK

log "summary"
printf "%-48s %s\n" "device tests ($filter)" "$status_tests" \
  "gpuring vs host-staged comparison ran" "$status_compare"
grep -E "^(case|gpuring|host-staged|ratio)" "$OUT/compare.txt" || true
echo "results in $OUT"
[ "$status_tests" = OK ] && [ "$status_compare" = OK ]
