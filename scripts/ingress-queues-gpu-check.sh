#!/usr/bin/env bash
# Multi-queue ingress on the GPU machine (issue 4): does feeding a chain from several rx queues
# (one ingress thread each) lift S_d at 512/1518 B, where one ingress thread limited every policy?
#   1. unit tests of queues and the executor (GPU build),
#   2. generator_bench: generator queues drained by their own threads, 1..16 queues,
#   3. S_d (and any CHAINS) x SIZES x POLICIES with QUEUES_LIST generator queues, in the same run
#      (QUEUES=1 is the earlier single-thread ingress, the peer for the ratio).
# Usage: scripts/ingress-queues-gpu-check.sh BIN_DIR RESULTS_DIR [SECONDS] [SIZES] [POLICIES] [CHAINS]
# env QUEUES_LIST (default "1 8"). Writes RESULTS_DIR/{device.txt, unit-tests.txt,
# generator_bench.txt, q<N>/ (bench/chains/run.sh output: reports/, logs/, summary.txt)}.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$1; RESULTS=$2; SECS=${3:-3}; SIZES=${4:-64,512,1518}; POLICIES=${5:-temporal,gnet}
CHAINS=${6:-sd}; QUEUES_LIST=${QUEUES_LIST:-"1 8"}
mkdir -p "$RESULTS"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; } > "$RESULTS/device.txt"
echo "=== unit tests (queues, executor, chains)"
"$BIN/gpunfv_tests" --gtest_filter='Generator*:ExecutorQueues*:Executor.*:ChainRun.*:GpuStage*:*Ipsec*' \
  > "$RESULTS/unit-tests.txt" 2>&1
echo "unit tests exit $?"; grep -E "PASSED|FAILED" "$RESULTS/unit-tests.txt" | tail -8
echo "=== generator_bench"
"$BIN/generator_bench" --sizes 64,512,1518 --queues 1,2,4,8,12 --seconds 1 \
  | tee "$RESULTS/generator_bench.txt"
model=""
for q in $QUEUES_LIST; do
  echo "=== chains $CHAINS, $q generator queues"
  mkdir -p "$RESULTS/q$q"
  # Profile once: later queue counts reuse the first model.
  if [ -n "$model" ] && [ -s "$model" ]; then cp "$model" "$RESULTS/q$q/model.json"; fi
  QUEUES=$q bench/chains/run.sh "$BIN" "$RESULTS/q$q" "$SECS" "$SIZES" "$POLICIES" "$CHAINS" 2>&1 | tail -25
  model="$RESULTS/q$q/model.json"
done
