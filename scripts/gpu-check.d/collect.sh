#!/usr/bin/env bash
# Suite collect: the NFs' collect() on the host (the CPU backend's, and NIDS's with an alert log)
# and what it costs S_d at 64 B on the GPU host. Steps (about 3 minutes; at most 7.2 by the timeouts):
#   tests     the collect unit tests, the GPU-vs-CPU NF and chain tests (gpunfv_tests);
#   examples  the examples with a firewall, IPsec or NIDS on both backends, reports and alert
#             logs compared (suite examples);
#   bench     collect_bench on this host's CPU: ns/packet per NF, reference loop vs collect();
#   sd        S_d at 64 B, QUEUES=8 BATCH=32768, unco and gnet (bench/chains/run.sh, with the
#             model MODEL, by default bench/results/chains-h200-2026-11-24/all-chains/model.json), each run's threads sampled for 3 s
#             (scripts/lib/thread_cpu.py): collect workers (gn-collect-NF[.shard]) and egress.
# A summary table last: Mpps per policy and the CPU share of the collect workers and egress.
# Usage: [STEPS="tests examples bench sd"] [SECS=10] [MODEL=model.json]
#        scripts/gpu-check.sh --suite collect BIN_DIR OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "${1:?usage: scripts/gpu-check.sh --suite collect BIN_DIR OUT_DIR}")
OUT=$(realpath -m "${2:?usage: scripts/gpu-check.sh --suite collect BIN_DIR OUT_DIR}")
STEPS=${STEPS:-tests examples bench sd}
SECS=${SECS:-10}
MODEL=$(realpath "${MODEL:-bench/results/chains-h200-2026-11-24/all-chains/model.json}")
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
source scripts/lib/gpu_check.sh
has() { [[ " $STEPS " == *" $1 "* ]]; }
status=()

print_device "$OUT/device.txt"

if has tests; then
  log "unit tests: collect (CPU) and GPU-vs-CPU NFs and chain stages"
  timeout 120 "$BIN/gpunfv_tests" \
    --gtest_filter='Collect*:CollectScan*:CollectWorkers*:NidsAlertingPackets*:GpuNids*:GpuFirewall*:IpsecGpu*:GpuStage*:GpuRingChainOnDevice*' \
    > "$OUT/unit-tests.txt" 2>&1
  rc=$?; echo "unit tests exit $rc"; status+=("unit tests exit $rc")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$OUT/unit-tests.txt" | head -20
fi

if has examples; then
  log "examples on both backends (reports and alert logs equal)"
  EXAMPLES="nids firewall chain-branches chain-fw-ipsec-nids-router ipsec-outbound" \
    timeout 100 bash scripts/gpu-check.d/examples.sh "$BIN" "$OUT/examples" > "$OUT/examples.txt" 2>&1
  rc=$?; echo "examples exit $rc"; status+=("examples exit $rc")
  cat "$OUT/examples.txt" | tail -8
fi

if has bench; then
  log "collect_bench (this host's CPU)"
  timeout 90 "$BIN/collect_bench" --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_color=false > "$OUT/collect_bench.txt" 2>&1
  rc=$?; echo "collect_bench exit $rc"; status+=("collect_bench exit $rc")
  sed -n '/^| NF /,$p' "$OUT/collect_bench.txt"
fi

if has sd; then
  mkdir -p "$OUT/chains"
  cp "$MODEL" "$OUT/chains/model.json"  # run.sh then skips profiling
  for policy in unco gnet; do
    log "S_d 64 B, $policy, batch 32768, 8 queues"
    sampled_run "$OUT/run-sd-64-$policy.txt" "$OUT/threads-sd-64-$policy.txt" $(( SECS / 2 )) 3 \
      env QUEUES=8 BATCH=32768 timeout $((SECS + 50)) bench/chains/run.sh "$BIN" "$OUT/chains" "$SECS" 64 "$policy" sd
    rc=$?
    head -2 "$OUT/threads-sd-64-$policy.txt"
    grep -E "gn-collect|gn-egress" "$OUT/threads-sd-64-$policy.txt"
    echo "run.sh exit $rc"; status+=("S_d $policy run.sh exit $rc")
    grep -E "exit" "$OUT/run-sd-64-$policy.txt" | tail -2
  done
fi

log "summary"
for s in "${status[@]}"; do echo "$s"; done
if has sd; then
  python3 - "$OUT" <<'PY'
import json, os, re, sys
out = sys.argv[1]
def mpps(path):
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        return None
    return sum(p.get("rx_packets", 0) for p in r["ports"].values()) / r["elapsed_s"] / 1e6
print("| policy | Mpps | collect workers, % of a core | egress % |")
print("|---|---|---|---|")
for policy in ("unco", "gnet"):
    now = mpps(f"{out}/chains/reports/sd-64-{policy}.json")
    threads = {}
    try:
        for line in open(f"{out}/threads-sd-64-{policy}.txt"):
            m = re.match(r"\s+(gn-\S+)\s+\d+\s+([\d.]+)%", line)
            if m:
                threads[m.group(1)] = float(m.group(2))
    except OSError:
        pass
    collect = " ".join(f"{k[3:]} {v:.0f}" for k, v in sorted(threads.items()) if k.startswith("gn-collect"))
    fmt = lambda x: f"{x:.1f}" if x is not None else "-"
    print(f"| {policy} | {fmt(now)} | {collect or '-'} | {threads.get('gn-egress', '-')} |")
print("(gn-collect-N: the NF at index N of the configuration, .S its shard)")
PY
fi
if has bench; then sed -n '/^| NF /,/^$/p' "$OUT/collect_bench.txt"; fi
