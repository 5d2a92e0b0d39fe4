#!/usr/bin/env bash
# Suite chains: chains sharing one GPU, on an H100/H200:
#   1. unit tests (GPU tests included: SM partitions, GPU-vs-CPU chains),
#   2. every example on both backends, GPU output equal to the CPU's (chains with branches,
#      routing tables, four NFs),
#   3. bench/chains/run.sh: profile (nBench) then S_a..S_d x sizes x policies.
# Usage: [SECS=3] [SIZES=64,512,1518] [POLICIES=temporal,fair,unco,gnet] [CHAINS=sa,sb,sc,sd]
#        scripts/gpu-check.sh --suite chains BIN_DIR OUT_DIR
# env QUEUES (default 8): generator rx queues = ingress threads per chain (bench/chains/run.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite chains BIN_DIR OUT_DIR}; RESULTS=${2:?usage: scripts/gpu-check.sh --suite chains BIN_DIR OUT_DIR}
SECS=${SECS:-3}; SIZES=${SIZES:-64,512,1518}; POLICIES=${POLICIES:-temporal,fair,unco,gnet}
CHAINS=${CHAINS:-sa,sb,sc,sd}
mkdir -p "$RESULTS" out
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; } > "$RESULTS/device.txt"
if [ -z "${SKIP_UNIT:-}" ]; then
  echo "=== unit tests"
  "$BIN/gpunfv_tests" --gtest_filter="${UNIT_FILTER:-*}" > "$RESULTS/unit-tests.txt" 2>&1
  echo "unit tests exit $?"; grep -E "PASSED|FAILED|SKIPPED \]" "$RESULTS/unit-tests.txt" | tail -15
fi
if [ -z "${SKIP_EXAMPLES:-}" ]; then
  echo "=== examples, CPU vs GPU"
  bash scripts/gpu-check.d/examples.sh "$BIN" "$RESULTS/examples" 2>&1 | tee "$RESULTS/examples.txt"
fi
echo "=== chains S_a..S_d, ${QUEUES:-8} generator queues"
QUEUES=${QUEUES:-8} bench/chains/run.sh "$BIN" "$RESULTS/chains" "$SECS" "$SIZES" "$POLICIES" "$CHAINS" 2>&1 | tail -60
