#!/usr/bin/env bash
# Suite live-updates: table updates while packets flow, on the GPU backend.
#   1. the unit tests of live tables (the router's device copies after incremental updates
#      against the host, firewall rule replacement, the double-buffered swap);
#   2. tests/e2e/test_control.py with its GPU cases (a route replace during a generator run on
#      the GPU backend: traffic moves, accounting exact, packets per table version; a firewall
#      rule replace); a GPU case that skips fails the suite;
#   3. bench/route_update_bench on the GPU and on the CPU: updates/s applied and the forwarding
#      rate against the run without updates (goal: 100k updates/s at 90% or more of it).
# Writes OUT_DIR/{unit.txt, e2e.txt, route_update_{gpu,cpu}.{txt,json}}.
# Usage: [BENCH_SECONDS=10] [RATES=0,10000,100000,200000] scripts/gpu-check.sh --suite live-updates BIN_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite live-updates BIN_DIR OUT_DIR}
RESULTS=${2:?usage: scripts/gpu-check.sh --suite live-updates BIN_DIR OUT_DIR}
SECONDS_PER_RATE=${BENCH_SECONDS:-10}
RATES=${RATES:-0,10000,100000,200000}
mkdir -p "$RESULTS"
log() { echo; echo "=== $*"; }

log "unit tests of live tables"
"$BIN/gpunfv_tests" --gtest_filter='GpuRouterLive.*:LiveRouteTable.*:Dir24_8Incremental.*:FirewallReplace.*:ControlCommands.*:GpuFirewall.*' \
  > "$RESULTS/unit.txt" 2>&1 || { tail -n 40 "$RESULTS/unit.txt"; exit 1; }
grep -E "PASSED|FAILED|SKIPPED" "$RESULTS/unit.txt"
if grep -qE "^\[  SKIPPED \] .* \([0-9]+ ms\)" "$RESULTS/unit.txt"; then echo "some tests skipped: no GPU?" >&2; exit 1; fi

log "control socket end to end, CPU and GPU backends"
GPUNFV_BIN=$(readlink -f "$BIN/gpunfv") python3 -m pytest -q -rs tests/e2e/test_control.py 2>&1 | tee "$RESULTS/e2e.txt"
if grep -q "^SKIPPED" "$RESULTS/e2e.txt"; then echo "GPU cases skipped" >&2; exit 1; fi

for backend in gpu cpu; do
  log "route_update_bench, $backend backend, rates $RATES"
  "$BIN/route_update_bench" --backend "$backend" --seconds "$SECONDS_PER_RATE" --rates "$RATES" \
    --json "$RESULTS/route_update_$backend.json" | tee "$RESULTS/route_update_$backend.txt"
done
