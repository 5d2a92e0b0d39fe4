#!/usr/bin/env bash
# The NIC emulator and the GPU ring loops (issues 6 and 7) on a machine with an NVIDIA GPU:
#   1. unit tests: the ring protocol, the NIC emulator (pipelined, coalesced copies, latency
#      breakdown), the warp teams' paths (on CPU threads, and the GPU's warps: integrity sums,
#      the copy engine's pitched copies and tickets), and every GpuRing* test on the device
#      (ring port, forward, batch mode);
#   2. gpuring_bench, ring port: the copy engine alone (as the emulator uses it now, and as it
#      once did: same run), 1 and 4 rings x 64 and 1500 B x (50% load, unpaced), each row with
#      its latency split into NIC rx DMA / GPU side / NIC tx DMA;
#   3. the same rows with the emulator's pipelining and coalescing off (one step in flight,
#      one copy per frame): how much of the change is the emulator's;
#   4. gpuring_bench --gpu-forward: wr and rd at 64 and 1518 B, unpaced and at 50% load;
#   5. a summary table (last), against the figures measured before this change on an H200
#      (bench/results/gpuring-h200/bench.json, bench/results/gpu-forward-h200/gpu_forward.json).
# Writes OUT_DIR/{device.txt, unit-tests.txt, ring.{txt,json}, ring_stepwise.{txt,json},
# forward.{txt,json}, summary.md}. Timeouts add up to under 8 minutes (150 + 100 + 100 + 120 s);
# a normal run takes about 2. Exit status: 1 when a test failed, a device test was skipped or a
# benchmark row's accounting failed; the summary is printed either way.
# Usage: scripts/emulator-gpu-check.sh BIN_DIR OUT_DIR   (BIN_DIR: a CUDA build with
# gpunfv_tests and gpuring_bench)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: scripts/emulator-gpu-check.sh BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/emulator-gpu-check.sh BIN_DIR OUT_DIR}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo; echo "=== $*"; }
status=0

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv \
  | tee "$OUT/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$OUT/device.txt"

log "unit tests"
TESTS='GpuRing*:*GpuRingSession*:*GpuRingOnDevice*:*GpuRingForward*:*GpuRingBatches*:*NicEmulator*:HostDmaEngine*:'
TESTS+='CudaDmaEngine*:TeamIntegrity*:*TeamRingLoops*:TeamForwardLoop*:SampledIntegrity*'
timeout 150 "$BIN/gpunfv_tests" --gtest_filter="$TESTS" > "$OUT/unit-tests.txt" 2>&1 \
  || { status=1; echo "unit tests FAILED (or timed out):"; tail -n 40 "$OUT/unit-tests.txt"; }
grep -E "^\[ +(FAILED|SKIPPED) \]|PASSED|tests ran" "$OUT/unit-tests.txt" | sort -u
if grep -qE "SKIPPED \].*(OnDevice|Gpu\.|CudaDmaEngine)" "$OUT/unit-tests.txt"; then
  echo "GPU tests skipped: no device?" >&2
  status=1
fi

RING_ARGS=(--quick --sections table --packets 100000 --max-case-s 0.4 --case-timeout-s 10)
log "gpuring_bench: ring port, the emulator as it is now"
timeout 100 "$BIN/gpuring_bench" "${RING_ARGS[@]}" --json "$OUT/ring.json" > "$OUT/ring.txt" 2>&1 || status=1
cat "$OUT/ring.txt"

log "gpuring_bench: ring port, emulator pipelining and coalescing off (one step in flight, one copy per frame)"
timeout 100 "$BIN/gpuring_bench" "${RING_ARGS[@]}" --nic-inflight 1 --nic-per-frame-copies \
  --json "$OUT/ring_stepwise.json" > "$OUT/ring_stepwise.txt" 2>&1 || status=1
cat "$OUT/ring_stepwise.txt"

log "gpuring_bench --gpu-forward: wr, rd at 64 and 1518 B"
timeout 120 "$BIN/gpuring_bench" --gpu-forward --variants wr,rd --fwd-sizes 64,1518 --case-timeout-s 10 \
  --json "$OUT/forward.json" > "$OUT/forward.txt" 2>&1 || status=1
cat "$OUT/forward.txt"

log "summary"
python3 scripts/emulator-gpu-summary.py "$OUT" | tee "$OUT/summary.md"
tests=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \]" "$OUT/unit-tests.txt" | tr '\n' ' ')
echo "unit tests: ${tests:-none ran}; exit status $status"
exit $status
