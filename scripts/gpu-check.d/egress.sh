#!/usr/bin/env bash
# Suite egress: a chain's egress over several threads (chain/egress.h): S_d at 64 B with 1, 2
# and 3 egress threads per chain. Steps (about 4 minutes; at most 7.3 by the timeouts):
#   tests  the egress and chain tests on the CPU backend, and the GPU chain tests (gpunfv_tests);
#   bench  egress_bench on this host's CPU: ns/packet of S_d batches through egress, 1/2/3 threads;
#   sd     S_d at 64 B, QUEUES=8 BATCH=32768, unco and gnet, SECS s each, with
#          EGRESS_THREADS=1, 2, 3 (bench/chains/run.sh; the model file MODEL, by default
#          bench/results/chains-h200-2026-11-24/all-chains/model.json), each run's threads
#          sampled for 3 s (scripts/lib/thread_cpu.py).
# A summary table last: Mpps per policy and egress threads, the ratio to one thread, and the CPU
# share of each egress thread and of the busiest other thread.
# Usage: [STEPS="tests bench sd"] [SECS=6] [THREADS="1 2 3"] [MODEL=model.json]
#        scripts/gpu-check.sh --suite egress BIN_DIR OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "${1:?usage: scripts/gpu-check.sh --suite egress BIN_DIR OUT_DIR}")
OUT=$(realpath -m "${2:?usage: scripts/gpu-check.sh --suite egress BIN_DIR OUT_DIR}")
STEPS=${STEPS:-tests bench sd}
SECS=${SECS:-6}
THREADS=${THREADS:-1 2 3}
MODEL=$(realpath "${MODEL:-bench/results/chains-h200-2026-11-24/all-chains/model.json}")
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
source scripts/lib/gpu_check.sh
has() { [[ " $STEPS " == *" $1 "* ]]; }
status=()

print_device "$OUT/device.txt" "model: $MODEL"

if has tests; then
  log "unit tests: egress and chains (CPU), GPU chain stages and gpuring chains"
  timeout 100 "$BIN/gpunfv_tests" \
    --gtest_filter='Egress*:ChainRun*:Executor*:ExecutorQueues*:CollectWorkers*:GpuStage*:GpuRingChainOnDevice*' \
    > "$OUT/unit-tests.txt" 2>&1
  rc=$?; echo "unit tests exit $rc"; status+=("unit tests exit $rc")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$OUT/unit-tests.txt" | head -20
fi

if has bench; then
  log "egress_bench (this host's CPU)"
  timeout 60 "$BIN/egress_bench" --benchmark_min_time=0.5 --benchmark_repetitions=3 \
    --benchmark_enable_random_interleaving=true --benchmark_color=false > "$OUT/egress_bench.txt" 2>&1
  rc=$?; echo "egress_bench exit $rc"; status+=("egress_bench exit $rc")
  sed -n '/^| egress threads/,$p' "$OUT/egress_bench.txt"
fi

if has sd; then
  for policy in unco gnet; do
    for t in $THREADS; do
      dir="$OUT/chains-e$t"
      mkdir -p "$dir"
      cp "$MODEL" "$dir/model.json"  # run.sh then skips profiling
      log "S_d 64 B, $policy, batch 32768, 8 queues, $t egress threads per chain"
      sampled_run "$OUT/run-$policy-e$t.txt" "$OUT/threads-$policy-e$t.txt" $(( SECS / 2 )) 3 \
        env EGRESS_THREADS=$t QUEUES=8 BATCH=32768 timeout $((SECS + 40)) \
        bench/chains/run.sh "$BIN" "$dir" "$SECS" 64 "$policy" sd
      rc=$?
      head -2 "$OUT/threads-$policy-e$t.txt"
      grep -E "gn-egress" "$OUT/threads-$policy-e$t.txt"
      echo "run.sh exit $rc"; status+=("S_d $policy e$t run.sh exit $rc")
      grep -E "exit" "$OUT/run-$policy-e$t.txt" | tail -1
    done
  done
fi

log "summary"
for s in "${status[@]}"; do echo "$s"; done
if has bench; then sed -n '/^| egress threads/,/^$/p' "$OUT/egress_bench.txt"; fi
if has sd; then
  python3 - "$OUT" "$THREADS" <<'PY'
import json, re, sys
out, threads = sys.argv[1], sys.argv[2].split()
def report(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
def cpu(path):
    rows = []
    try:
        for line in open(path):
            m = re.match(r"\s+(\S+)\s+\d+\s+([\d.]+)%", line)
            if m:
                rows.append((m.group(1), float(m.group(2))))
    except OSError:
        pass
    return rows
print("| policy | egress threads per chain | Mpps | vs 1 thread | accounting | egress threads, % of a core |"
      " egress CPU in turns (ordered) | busiest other thread |")
print("|---|---|---|---|---|---|---|---|")
for policy in ("unco", "gnet"):
    base = None
    for t in threads:
        r = report(f"{out}/chains-e{t}/reports/sd-64-{policy}.json")
        mpps = sum(p.get("rx_packets", 0) for p in r["ports"].values()) / r["elapsed_s"] / 1e6 if r else None
        if t == threads[0]:
            base = mpps
        acct = "-" if not r else ("ok" if r.get("accounting_ok") else "ERRORS")
        e = (r or {}).get("egress", {})
        turns = f"{100 * e['in_turn_cpu_s'] / e['cpu_s']:.0f}%" if e.get("cpu_s") else "-"
        rows = cpu(f"{out}/threads-{policy}-e{t}.txt")
        eg = " + ".join(f"{v:.0f}" for k, v in rows if k.startswith("gn-egress")) or "-"
        other = next((f"{k} {v:.0f}" for k, v in rows if not k.startswith("gn-egress")), "-")
        f = lambda x: f"{x:.1f}" if x is not None else "-"
        ratio = f"{mpps / base:.2f}" if mpps and base else "-"
        print(f"| {policy} | {t} | {f(mpps)} | {ratio} | {acct} | {eg} | {turns} | {other} |")
PY
fi
