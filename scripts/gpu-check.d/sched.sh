#!/usr/bin/env bash
# Suite sched: SM partitions and the performance model, on an H100/H200 machine:
#   1. the SM partition tests: a probe kernel records %smid per block; green partitions stay on
#      their own SMs and are disjoint, the fallback caps blocks (also run with green contexts
#      switched off, GPUNFV_NO_GREEN_CONTEXTS=1, so the fallback path is what query reports);
#   2. `gpunfv profile` on the per-NF configurations of nf_bench (router, firewall, NIDS, IPsec
#      outbound) and on G-NET's four-NF chain (bench/sched/gnet_chain.yaml), with green
#      contexts, and the router once more with the block-cap fallback (--no-green);
# Writes into DIR: device.txt, sm-partition-test.txt, sm-partition-test-nogreen.txt,
# profile-NAME.txt (table of k1, b1, k2, b2, R^2, errors; allocations per policy),
# profile-NAME.log (progress), model-NAME.json (the fitted models and their samples).
# Usage: scripts/gpu-check.sh --suite sched BIN_DIR OUT_DIR   (BIN_DIR: a CUDA build, or one
# packaged by scripts/package-for-gpu-host.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite sched BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/gpu-check.sh --suite sched BIN_DIR OUT_DIR}
mkdir -p "$OUT"
if [ ! -x "$BIN/gpunfv" ] || [ ! -x "$BIN/gpunfv_tests" ]; then
  cmake -S . -B "$BIN" -DCMAKE_BUILD_TYPE=Release -DGPUNFV_CUDA=ON
  cmake --build "$BIN" -j "$(nproc)" --target gpunfv gpunfv_tests
fi
if ls "$BIN"/lib*.so* > /dev/null 2>&1; then
  export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # a packaged build's libraries
fi
log() { echo; echo "=== $*"; }
status=0

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$OUT/device.txt"
"$BIN/gpunfv" version | tee -a "$OUT/device.txt"

log "SM partition tests"
if "$BIN/gpunfv_tests" --gtest_filter='GpuSmPartition*' > "$OUT/sm-partition-test.txt" 2>&1; then
  grep -E "^SMs|^\[|partition|green" "$OUT/sm-partition-test.txt" | grep -vE "^\[ RUN" || true
else
  tail -n 40 "$OUT/sm-partition-test.txt"; status=1
fi
log "SM partition tests, green contexts switched off (fallback reported by query_sm_info)"
if GPUNFV_NO_GREEN_CONTEXTS=1 "$BIN/gpunfv_tests" --gtest_filter='GpuSmPartition*' > "$OUT/sm-partition-test-nogreen.txt" 2>&1; then
  grep -E "PASSED|SKIPPED|FAILED" "$OUT/sm-partition-test-nogreen.txt" || true
else
  tail -n 40 "$OUT/sm-partition-test-nogreen.txt"; status=1
fi

profile() {  # NAME CONFIG [ARGS...]
  local name=$1 config=$2; shift 2
  log "profile $name ($config $*)"
  if "$BIN/gpunfv" profile "$config" --out "$OUT/model-$name.json" "$@" \
       > "$OUT/profile-$name.txt" 2> "$OUT/profile-$name.log"; then
    cat "$OUT/profile-$name.txt"
  else
    cat "$OUT/profile-$name.log"; status=1
  fi
}
profile router bench/nf_bench/router.yaml
profile firewall bench/nf_bench/firewall_fw1_10k.yaml
profile nids bench/nf_bench/nids.yaml
profile ipsec bench/nf_bench/ipsec.yaml
profile gnet-chain bench/sched/gnet_chain.yaml
profile router-nogreen bench/nf_bench/router.yaml --no-green

exit $status
