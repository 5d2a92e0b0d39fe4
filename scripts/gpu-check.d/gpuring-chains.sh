#!/usr/bin/env bash
# Suite gpuring-chains, on a machine with an NVIDIA GPU (H100/H200): chains fed by a gpuring port on the GPU
# backend (placement: device: the ring loops as one persistent kernel, the NIC emulator on the
# copy engine, the chain on the ring batches where they lie).
#   0. diagnosis first, so a hanging run explains itself: the device preflight (every registered
#      kernel loads), the GPU stage on device-resident batches alone and beside a running ring
#      kernel without the NIC emulator (GpuStageDeviceResident), then the single chain test
#      (GpuRingChainOnDevice.RouterEqualsCpu) with a 90 s limit. On a hang it prints what the
#      watchdog reported (phase, NIC progress, ring registers, CUDA set-up calls made beside the
#      ring kernel) and, where gdb is installed, every thread's stack; the GPU chain runs of the
#      later steps are then skipped (they would only hang again);
#   1. unit tests: what crosses PCIe (RingBatchTransfer), the configuration checks
#      (GpuRingFeedConfig), the GPU stage on device-resident batches against the CPU
#      (GpuStageDeviceResident), the executor's gpuring chains on the GPU backend against the CPU
#      backend, bit for bit (GpuRingChainOnDevice: router, fw+ipsec+nids+router, back to the ring,
#      3 rings, --duration), the batch loops on the GPU (GpuRingBatchesOnDevice);
#   2. the examples with --backend cpu (placement auto = host) and --backend gpu (auto = device):
#      output frames compared byte for byte (in order with one ring; as multisets with two, since
#      RSS interleaves rings), the reports' counters, the NIDS alert log without timestamps (a ring
#      packet's capture time is when rx took it). Also the S_d example under `scheduler: fair`
#      (green contexts beside the persistent ring kernel), recorded;
#   3. the router chain over the same generated 64 B frames fed by the gpuring port (device) and
#      by the host-staged path (generator port, batched copy to the device), both on the GPU
#      backend, plus the CPU backend for reference: unpaced (Mpps) and paced at 100 kpps
#      (latency): Mpps, latency p50/p99 (report: rx to egress; gpuring: also the NIC emulator's
#      in-to-out), CPU cores (CPU seconds of the gpunfv process per wall second).
# Writes OUT_DIR/{device.txt, diagnosis-*.txt, unit-tests.txt, examples.txt, compare.txt,
# compare.json, runs/*}; the summary table is printed last. About 2-4 minutes; at most about 7.5
# (a hang found in step 0 skips the later GPU chain runs).
# Usage: [PACKETS=1000000] scripts/gpu-check.sh --suite gpuring-chains BIN_DIR OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite gpuring-chains BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/gpu-check.sh --suite gpuring-chains BIN_DIR OUT_DIR}
BIN=$(cd "$BIN" && pwd)
mkdir -p "$OUT/runs" out
OUT=$(cd "$OUT" && pwd)
PACKETS=${PACKETS:-1000000}
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
export CUDA_MODULE_LOADING=EAGER   # the ring kernel runs beside the chain's (kernel_loading.h)
log() { echo; echo "=== $*"; }
status_diag=FAILED status_unit=FAILED status_examples=FAILED status_compare=FAILED
chain_hangs=0

log "device"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || echo "no nvidia-smi"; nproc | sed 's/^/host cores: /'
  echo "CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-} CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-unset (the binaries ask for 32)}"; } | tee "$OUT/device.txt"

# diag NAME LIMIT_S FILTER: runs gpunfv_tests --gtest_filter=FILTER within LIMIT_S seconds into
# OUT/diagnosis-NAME.txt; prints the verdicts, and on a hang what the watchdog said (and, when
# the limit struck first, every thread's stack where gdb exists). Returns 0 passed, 1 failed,
# 2 hung (watchdog exit 3, or the limit).
diag() {
  local name=$1 limit=$2 filter=$3 f="$OUT/diagnosis-$1.txt" pid rc waited=0
  "$BIN/gpunfv_tests" --gtest_filter="$filter" > "$f" 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null && [ $waited -lt "$limit" ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 $pid 2>/dev/null; then
    echo "$name: still running after ${limit} s (no watchdog fired)" | tee -a "$f"
    if command -v gdb > /dev/null; then
      timeout 60 gdb -p $pid -batch -ex "set pagination off" -ex "thread apply all bt 12" > "$OUT/diagnosis-$name-stacks.txt" 2>&1
      echo "$name: thread stacks in diagnosis-$name-stacks.txt:"
      grep -E "^Thread|^#[0-9]+ " "$OUT/diagnosis-$name-stacks.txt" | head -n 80
    fi
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    rc=137
  else
    wait $pid
    rc=$?
  fi
  grep -E "^\[ +(OK|SKIPPED|FAILED) +\]|^preflight:|gpunfv: warning|gpuring watchdog|^  state:|Failure|Expected|Which is|before the ring kernel" "$f" | head -n 40
  if [ $rc -eq 3 ] || [ $rc -ge 124 ]; then
    echo "$name: HUNG (exit $rc); the watchdog's report, if it fired:"
    grep -A3 "gpuring watchdog" "$f" || tail -n 20 "$f"
    return 2
  fi
  if [ $rc -ne 0 ] || grep -q "SKIPPED" "$f"; then echo "$name: exit $rc"; tail -n 15 "$f"; return 1; fi
  return 0
}

log "0. diagnosis: the GPU stage beside a running ring kernel, then the single chain test (90 s)"
diag stage 100 'DevicePreflight*:GpuStageDeviceResident*'
rc_stage=$?
diag chain 90 'GpuRingChainOnDevice.RouterEqualsCpu'
rc_chain=$?
[ $rc_chain -eq 2 ] && chain_hangs=1
echo "stage beside the ring kernel: $([ $rc_stage -eq 0 ] && echo OK || ([ $rc_stage -eq 2 ] && echo HUNG || echo FAILED));" \
     "single chain test: $([ $rc_chain -eq 0 ] && echo OK || ([ $rc_chain -eq 2 ] && echo HUNG || echo FAILED))"
[ $rc_stage -eq 0 ] && [ $rc_chain -eq 0 ] && status_diag=OK

log "unit tests"
# Step 0 ran the stage tests and the router chain test; a chain that hung there is left out.
unit_filter='RingBatchTransfer*:GpuRingFeedConfig*:KernelRegistry*:PersistentKernelSetup*:GpuRingChainOnDevice*:*GpuRingBatchesOnDevice*:SlotIndex*'
unit_filter="$unit_filter-GpuRingChainOnDevice.RouterEqualsCpu"
[ $chain_hangs -eq 1 ] && unit_filter="${unit_filter}:GpuRingChainOnDevice*"
timeout 200 "$BIN/gpunfv_tests" --gtest_filter="$unit_filter" > "$OUT/unit-tests.txt" 2>&1
rc=$?
grep -E "^\[ +(OK|SKIPPED|FAILED) +\]|PASSED|FAILED TEST|watchdog" "$OUT/unit-tests.txt"
if [ $rc -eq 0 ] && ! grep -q "SKIPPED" "$OUT/unit-tests.txt"; then status_unit=OK; else echo "unit tests: exit $rc"; tail -n 30 "$OUT/unit-tests.txt"; fi

log "examples: --backend gpu (placement device) against --backend cpu (placement host)"
run_example() {  # NAME YAML BACKEND OUTPUT-PREFIX
  local name=$1 yaml=$2 backend=$3 prefix=$4
  rm -f out/${prefix}-*
  timeout 90 "$BIN/gpunfv" run "$yaml" --backend "$backend" -q --report "$OUT/runs/$name.json" \
    > "$OUT/runs/$name.log" 2>&1
  echo "$name: exit $?" >> "$OUT/runs/exits.txt"
  mkdir -p "$OUT/runs/$name"
  cp out/${prefix}-* "$OUT/runs/$name/" 2>/dev/null || true
}
rm -f "$OUT/runs/exits.txt"
run_example router-cpu examples/gpuring-router.yaml cpu gpuring
run_example sd-cpu examples/gpuring-chain-fw-ipsec-nids-router.yaml cpu gpuring-sd
if [ $chain_hangs -eq 1 ]; then
  echo "GPU runs skipped: the chain hung in step 0" | tee -a "$OUT/runs/exits.txt"
else
  run_example router-gpu examples/gpuring-router.yaml gpu gpuring
  run_example sd-gpu examples/gpuring-chain-fw-ipsec-nids-router.yaml gpu gpuring-sd
fi
if grep -q "sd-gpu: exit 0" "$OUT/runs/exits.txt"; then  # a hang there would only repeat
  sed 's/^  batch_size: 256/  batch_size: 256\n  scheduler: fair/' examples/gpuring-chain-fw-ipsec-nids-router.yaml \
    > examples/.gpuring-sd-fair.yaml
  run_example sd-gpu-fair examples/.gpuring-sd-fair.yaml gpu gpuring-sd
  rm -f examples/.gpuring-sd-fair.yaml
fi
cat "$OUT/runs/exits.txt"
python3 - "$OUT" <<'PY' | tee "$OUT/examples.txt"
import json, os, re, struct, sys
out = sys.argv[1]
def frames(path):
    if not os.path.exists(path): return None
    data = open(path, "rb").read()
    off, res = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        res.append(data[off + 16:off + 16 + incl]); off += 16 + incl
    return res
def alerts(path):
    if not os.path.exists(path): return None
    return [re.sub(r'"timestamp":"[^"]*",', "", l) for l in open(path)]
def report(name):
    p = f"{out}/runs/{name}.json"
    return json.load(open(p)) if os.path.exists(p) else None
def counters(r):
    return ({p: {k: v[k] for k in ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "forwarded", "drops")}
             for p, v in r["ports"].items()},
            {n: {k: v[k] for k in ("in", "out", "drops")} for n, v in r["nfs"].items()})
ok_all = True
def compare(label, cpu, gpu, files, ordered, alert_file=None, required=True):
    global ok_all
    rc, rg = report(cpu), report(gpu)
    if rc is None or rg is None:
        print(f"{label}: no report ({'cpu' if rc is None else 'gpu'} run failed; see runs/*.log)")
        ok_all &= not required
        return
    ok = rc["accounting_ok"] and rg["accounting_ok"]
    same_counts = counters(rc) == counters(rg)
    ok &= same_counts
    lines = []
    for f in files:
        a, b = frames(f"{out}/runs/{cpu}/{f}"), frames(f"{out}/runs/{gpu}/{f}")
        same = a is not None and b is not None and (a == b if ordered else sorted(a) == sorted(b))
        ok &= same and len(a) > 0
        lines.append(f"  {f}: cpu {len(a or [])} frames, gpu {len(b or [])} frames, "
                     f"{'equal in order' if ordered else 'equal as multisets'}: {same}")
    if alert_file:
        a, b = alerts(f"{out}/runs/{cpu}/{alert_file}"), alerts(f"{out}/runs/{gpu}/{alert_file}")
        same = a is not None and a == b
        ok &= same
        lines.append(f"  {alert_file}: {len(a or [])} alerts, equal without timestamps: {same}")
    audited = "slots audited ok" in rg["backend_detail"] and "placement device" in rg["backend_detail"]
    ok &= audited
    pcie = rg.get("scheduler", {}).get("pcie", {})
    print(f"{label}: {'OK' if ok else 'FAILED'} (counters equal: {same_counts}, accounting cpu/gpu: "
          f"{rc['accounting_ok']}/{rg['accounting_ok']}, device slots audited: {audited})")
    print("\n".join(lines))
    print(f"  gpu stage PCIe: {pcie}")
    print(f"  gpu: {rg['backend_detail']}")
    ok_all &= ok or not required
compare("router (2 rings)", "router-cpu", "router-gpu", ["gpuring-p1.pcap", "gpuring-p2.pcap"], ordered=False)
compare("S_d fw+ipsec+nids+router (1 ring)", "sd-cpu", "sd-gpu", ["gpuring-sd-p1.pcap", "gpuring-sd-p2.pcap"],
        ordered=True, alert_file="gpuring-sd-alerts.json")
compare("S_d, scheduler fair (recorded, not required)", "sd-cpu", "sd-gpu-fair",
        ["gpuring-sd-p1.pcap", "gpuring-sd-p2.pcap"], ordered=True, alert_file="gpuring-sd-alerts.json",
        required=False)
print("EXAMPLES", "OK" if ok_all else "FAILED")
sys.exit(0 if ok_all else 1)
PY
[ $? -eq 0 ] && status_examples=OK

log "comparison: gpuring-fed vs host-staged, router over the same generated 64 B frames"
# What is left of the script's 7.5 minutes: runs stop being started when less than a minute is.
# A chain that hung in step 0: the gpuring device cases are not run.
python3 scripts/lib/gpuring_compare.py "$BIN" "$OUT" "$PACKETS" "$((450 - SECONDS))" "$chain_hangs" | tee "$OUT/compare.txt"
[ $? -eq 0 ] && status_compare=OK

log "summary"
printf "%-44s %s\n" "0. stage beside ring kernel, single chain test" "$status_diag" \
  "unit tests (GPU ones not skipped)" "$status_unit" \
  "examples gpu(device) == cpu(host)" "$status_examples" \
  "gpuring vs host-staged comparison ran" "$status_compare"
grep -E "^(case|gpuring|host-staged|ratio)" "$OUT/compare.txt" || true
echo "results in $OUT"
[ "$status_diag" = OK ] && [ "$status_unit" = OK ] && [ "$status_examples" = OK ] && [ "$status_compare" = OK ]
