#!/usr/bin/env bash
# GPU proof, run on a machine with an NVIDIA GPU (H100/H200):
#   1. builds with CUDA (or uses prebuilt binaries in BIN_DIR),
#   2. runs the unit tests there (the GPU-vs-CPU tests run instead of skipping),
#   3. runs every example on both backends and compares output files and counters,
#   4. runs bench/router_bench: 10M generated packets through the full-table router on the CPU
#      (1 thread, all threads) and the GPU (kernel-only, end to end), GPU output compared with
#      CPU output packet by packet,
#   5. runs bench/nf_bench: router, firewall (ClassBench acl1 1k, fw1 10k), NIDS (ET Open) and
#      IPsec (ESP outbound) at 64/512/1518 B, CPU vs peer libraries vs GPU, every GPU output
#      packet compared with the CPU's, every peer answer with ours,
#   6. runs the executor end to end on both backends (examples/router-fulltable.yaml).
# Usage: scripts/gpu-check.sh [BIN_DIR] [RESULTS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-}
RESULTS=${2:-bench/results/gpu-check}
PACKETS=${PACKETS:-10000000}
mkdir -p "$RESULTS" out
if [ -z "$BIN" ]; then
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DGPUNFV_CUDA=ON
  cmake --build build-gpu -j "$(nproc)"
  BIN=build-gpu
fi
log() { echo; echo "=== $*"; }

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv | tee "$RESULTS/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$RESULTS/device.txt"
"$BIN/gpunfv" version | tee -a "$RESULTS/device.txt"

log "unit tests"
"$BIN/gpunfv_tests" > "$RESULTS/unit-tests.txt" 2>&1 || { tail -n 40 "$RESULTS/unit-tests.txt"; exit 1; }
grep -E "^\[ +OK \] Gpu|SKIPPED|PASSED|FAILED" "$RESULTS/unit-tests.txt"

log "every example on both backends: GPU output files and counters equal the CPU's"
scripts/gpu-examples-check.sh "$BIN" "$RESULTS/examples" | tee "$RESULTS/examples.txt"

log "router benchmark ($PACKETS packets, full table)"
"$BIN/router_bench" --config bench/router_bench.yaml --packets "$PACKETS" --json "$RESULTS/router_bench.json" | tee "$RESULTS/router_bench.txt"

log "per-NF benchmark (nf_bench: router, firewall, NIDS, IPsec at 64, 512, 1518 B)"
"$BIN/nf_bench" --threads "$(nproc)" --json "$RESULTS/nf_bench.json" 2> >(tee "$RESULTS/nf_bench.log" >&2) | tee "$RESULTS/nf_bench.txt"

log "executor end to end, full table, generator -> router -> null ports"
for backend in cpu gpu; do
  "$BIN/gpunfv" run examples/router-fulltable.yaml --backend "$backend" --report "$RESULTS/fulltable-$backend.json" 2>&1 | tail -n 16 | tee "$RESULTS/fulltable-$backend.txt"
done
