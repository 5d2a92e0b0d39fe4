#!/usr/bin/env bash
# Forwarding between two GPU ring ports (issue 7, P2PNIC) on a machine with an NVIDIA GPU:
#   1. unit tests: the forwarding loops on CPU threads (variants wr, rd, bn; integrity; routing;
#      bad shapes) and the forwarding kernel on the GPU (wr, rd; 1 and 4 ring pairs; routed);
#   2. gpuring_bench --gpu-forward: variants wr, rd, bn x sizes 64..1518 unpaced (Mpps, Gbit/s,
#      latency p50/p90/p99, CPU cores, host bytes/packet, the copy engine alone as the peer),
#      latency at 50% load (CDF points in the JSON), tail batching 1/8/32, and the emulator's
#      time per step phase;
#   3. wr and rd at 64 and 1518 B with the emulator taking 128 frames per step, then with its
#      pipelining and coalescing off (one step in flight, one copy per frame: the emulator's
#      old pattern), to show what the emulator's rework is worth.
# Writes OUT_DIR/{device.txt, unit-tests.txt, gpu_forward.{txt,json}, gpu_forward_burst128.{txt,json},
# gpu_forward_stepwise.{txt,json}}.
# All steps together stay under 10 minutes (timeouts 150 + 200 + 90 + 90 s).
# Usage: scripts/gpu-forward-check.sh BIN_DIR OUT_DIR   (BIN_DIR: a CUDA build with gpunfv_tests
# and gpuring_bench, e.g. cmake -B build-gpu -DGPUNFV_CUDA=ON && cmake --build build-gpu
# --target gpunfv_tests gpuring_bench)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: scripts/gpu-forward-check.sh BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/gpu-forward-check.sh BIN_DIR OUT_DIR}
mkdir -p "$OUT"
log() { echo; echo "=== $*"; }

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv | tee "$OUT/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$OUT/device.txt"

log "unit tests (forwarding loops on CPU threads and the forwarding kernel on the GPU)"
timeout 150 "$BIN/gpunfv_tests" --gtest_filter='*GpuRingForward*' > "$OUT/unit-tests.txt" 2>&1 \
  || { tail -n 40 "$OUT/unit-tests.txt"; exit 1; }
grep -E "^\[ +(OK|SKIPPED|FAILED) \]|PASSED|FAILED" "$OUT/unit-tests.txt"
if grep -q "SKIPPED.*OnDevice" "$OUT/unit-tests.txt"; then echo "GPU tests skipped: no device?" >&2; exit 1; fi

log "gpuring_bench --gpu-forward"
timeout 200 "$BIN/gpuring_bench" --gpu-forward --json "$OUT/gpu_forward.json" | tee "$OUT/gpu_forward.txt"

log "gpuring_bench --gpu-forward, emulator burst 128 (wr, rd; 64 and 1518 B)"
timeout 90 "$BIN/gpuring_bench" --gpu-forward --variants wr,rd --fwd-sizes 64,1518 --nic-burst 128 --nic-tx-burst 128 \
  --json "$OUT/gpu_forward_burst128.json" | tee "$OUT/gpu_forward_burst128.txt"

log "gpuring_bench --gpu-forward, emulator pipelining and coalescing off (wr, rd; 64 and 1518 B)"
timeout 90 "$BIN/gpuring_bench" --gpu-forward --variants wr,rd --fwd-sizes 64,1518 --nic-inflight 1 --nic-per-frame-copies \
  --json "$OUT/gpu_forward_stepwise.json" | tee "$OUT/gpu_forward_stepwise.txt"
