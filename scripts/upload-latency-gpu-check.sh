#!/usr/bin/env bash
# Two checks on a machine with an NVIDIA GPU (issues 4 and 6):
#   1. the GPU stage and gpuring unit tests on the device (the trimmed host-batch upload must
#      leave every GPU output equal to the CPU's; the rings' GPU-side latency histograms);
#   2. S_d (fw, ipsec, nids, router) at 64 and 1518 B, batch 8192 and 32768, unco and gnet, with
#      the trimmed host-batch upload and with the whole device prefix uploaded
#      (GPUNFV_DEBUG_UPLOAD_PREFIX=1), same run: Mpps, Gbit/s, bytes up per packet, upload busy;
#   3. gnet with a forced re-plan every 100 ms, S_d at 64 B, three runs (exit status, lane moves);
#   4. gpuring_bench, 1 ring, 64 B, at 10/25/50/75% of the emulator's rate, tail batch 1 and 8: the
#      latency end to end (the emulator's view) and the GPU side timed on the GPU.
# Usage: scripts/upload-latency-gpu-check.sh BIN_DIR OUT_DIR [MODEL_JSON]
#   (BIN_DIR: a CUDA build with gpunfv, gpunfv_tests, gpuring_bench; MODEL_JSON: a gnet model
#   from `gpunfv profile`, else one is profiled first, about a minute). About 6 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:?usage: scripts/upload-latency-gpu-check.sh BIN_DIR OUT_DIR [MODEL_JSON]}")
OUT=$(realpath -m "${2:?usage}")
MODEL=${3:-}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo; echo "=== $*"; }
status=0

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/device.txt"

log "unit tests (GPU stage, chains on the GPU, gpuring)"
TESTS='GpuStage*:*GpuChain*:GpuRingChainOnDevice*:*OnDevice*:GpuLatency*:*GpuRingSession*:HostBatchTransfer*'
timeout 200 "$BIN/gpunfv_tests" --gtest_filter="$TESTS" > "$OUT/unit-tests.txt" 2>&1 \
  || { status=1; echo "unit tests FAILED (or timed out):"; tail -n 30 "$OUT/unit-tests.txt"; }
grep -E "^\[ +(FAILED|SKIPPED) \]|PASSED|tests ran" "$OUT/unit-tests.txt" | sort -u

log "S_d: trimmed upload vs whole prefix"
for b in 8192 32768; do
  for mode in trimmed prefix; do
    d=$OUT/sd-b$b-$mode
    mkdir -p "$d"
    [ -n "$MODEL" ] && cp "$MODEL" "$d/model.json"
    [ -z "$MODEL" ] && [ -s "$OUT/sd-b8192-trimmed/model.json" ] && cp "$OUT/sd-b8192-trimmed/model.json" "$d/model.json"
    GPUNFV_DEBUG_UPLOAD_PREFIX=$([ "$mode" = prefix ] && echo 1 || echo 0) QUEUES=8 BATCH=$b \
      timeout 240 bash bench/chains/run.sh "$BIN" "$d" 3 64,1518 unco,gnet sd > "$d/run.txt" 2>&1 || status=1
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/upload.md"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print("| batch | size | policy | Mpps trimmed / prefix | Gbit/s trimmed / prefix | ratio | B up per pkt trimmed / prefix | upload busy trimmed / prefix |")
print("|---|---|---|---|---|---|---|---|")
def cell(d, size, pol):
    f = d / "reports" / f"sd-{size}-{pol}.json"
    if not f.exists():
        return None
    j = json.loads(f.read_text())
    t = j["elapsed_s"] or 1e-9
    rx = j["totals"]["rx_packets"]
    rxb = sum(p["rx_bytes"] for p in j["ports"].values())
    pcie = j.get("scheduler", {}).get("pcie", {})
    st = j["chains"][0]["stages"] if j.get("chains") else []
    busy = st[0].get("busy_s", 0) / t if st else 0
    return rx / t / 1e6, rxb * 8 / t / 1e9, pcie.get("h2d_bytes", 0) / max(rx, 1), busy
for b in (8192, 32768):
    for size in (64, 1518):
        for pol in ("unco", "gnet"):
            a = cell(out / f"sd-b{b}-trimmed", size, pol)
            p = cell(out / f"sd-b{b}-prefix", size, pol)
            if not a or not p:
                print(f"| {b} | {size} | {pol} | missing | | | | |")
                continue
            print(f"| {b} | {size} | {pol} | {a[0]:.1f} / {p[0]:.1f} | {a[1]:.1f} / {p[1]:.1f} | {a[0] / max(p[0], 1e-9):.2f} | "
                  f"{a[2]:.0f} / {p[2]:.0f} | {a[3] * 100:.0f}% / {p[3] * 100:.0f}% |")
PY

log "gnet re-plans under load: S_d at 64 B, a forced re-plan every 100 ms (GPUNFV_DEBUG_REPLAN_MS), 3 runs"
d=$OUT/replan
mkdir -p "$d"
cp "$OUT/sd-b8192-trimmed/configs/sd-64-gnet.yaml" "$d/sd.yaml" 2>/dev/null
[ -n "$MODEL" ] && cp "$MODEL" "$d/model.json"
for i in 1 2 3; do
  (cd "$OUT/sd-b8192-trimmed/configs" && GPUNFV_DEBUG_REPLAN_MS=100 timeout 60 "$BIN/gpunfv" run sd-64-gnet.yaml \
    --backend gpu --duration 3 -q --report "$d/run$i.json" > "$d/run$i.txt" 2>&1)
  rc=$?
  moves=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['scheduler'].get('lane_moves'), len(j['scheduler'].get('plans', [])), j['accounting_ok'])" "$d/run$i.json" 2>/dev/null)
  echo "re-plan run $i: exit $rc; lane moves, plans, accounting ok: $moves"
  [ $rc = 0 ] || { status=1; tail -3 "$d/run$i.txt"; }
done

log "gpuring_bench: latency at low and half load, end to end and on the GPU"
timeout 150 "$BIN/gpuring_bench" --rings 1 --sizes 64 --loads 0.1,0.25,0.5,0.75 --sections table,tail \
  --packets 100000 --max-case-s 0.5 --case-timeout-s 10 --json "$OUT/latency.json" > "$OUT/latency.txt" 2>&1 || status=1
cat "$OUT/latency.txt"
exit $status
