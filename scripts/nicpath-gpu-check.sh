#!/usr/bin/env bash
# The gpuring port's real-NIC path (nic:, src/io/gpuring/dpdk_nic.h) on a machine with an NVIDIA
# GPU and no 82599 (what we have):
#   1. unit tests: the 82599 register plan, the sysfs precheck, the nic: config, RingSet's
#      bind_nic on device rings (RingSetNicBindOnDevice: must run, not skip), and the GPU ring
#      tests on the device again, since the GPU side's register map now covers 128 queues;
#   2. gpunfv run examples/gpuring-nic-router.yaml --backend gpu --duration 5: must stop with exit status 2
#      and one error at the nic: line naming what is missing (no such PCI device here), no crash;
#   3. gpunfv run examples/gpuring-router.yaml --backend gpu: the emulated path still runs.
# Writes OUT_DIR/{device.txt, unit-tests.txt, nic-run.txt, emulated-run.txt}. Timeouts add up to
# under 5 minutes (180 + 30 + 60 s); a normal run takes about 1. Exit status 1 when anything
# failed or a device test was skipped; the summary table is printed last either way.
# Usage: scripts/nicpath-gpu-check.sh BIN_DIR OUT_DIR   (BIN_DIR: a CUDA build with gpunfv and
# gpunfv_tests)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: scripts/nicpath-gpu-check.sh BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/nicpath-gpu-check.sh BIN_DIR OUT_DIR}
mkdir -p "$OUT" out
export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo; echo "=== $*"; }
declare -A result

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/device.txt"

log "unit tests"
TESTS='Nic82599*:Rings/Nic82599Plan*:NicPrecheck*:GpuRingNicConfig*:GpuRingConfig*:RingSetNicBindOnDevice*:'
TESTS+='GpuRing*:*GpuRingOnDevice*:*GpuRingBatches*:RingProtocol*'
if timeout 180 "$BIN/gpunfv_tests" --gtest_filter="$TESTS" > "$OUT/unit-tests.txt" 2>&1; then
  result[unit]=ok
else
  result[unit]=FAILED
  tail -n 40 "$OUT/unit-tests.txt"
fi
grep -E "^\[ +(FAILED|SKIPPED) \]|PASSED|tests ran" "$OUT/unit-tests.txt" | sort -u
if grep -qE "SKIPPED \].*(OnDevice)" "$OUT/unit-tests.txt"; then
  echo "device tests skipped: no GPU?" >&2
  result[unit]="FAILED (device tests skipped)"
fi

log "gpunfv run examples/gpuring-nic-router.yaml --backend gpu --duration 5 (no NIC: must stop with the reason)"
timeout 30 "$BIN/gpunfv" run examples/gpuring-nic-router.yaml --backend gpu --duration 5 > "$OUT/nic-run.txt" 2>&1
rc=$?
cat "$OUT/nic-run.txt"
if [[ $rc -eq 2 ]] && grep -q "gpuring-nic-router.yaml:13: nic: " "$OUT/nic-run.txt"; then
  result[nic_run]="ok (exit 2: $(grep -o 'nic: [^(:]*' "$OUT/nic-run.txt" | head -1))"
else
  result[nic_run]="FAILED (exit $rc)"
fi

log "gpunfv run examples/gpuring-router.yaml --backend gpu (emulated NIC, regression)"
timeout 60 "$BIN/gpunfv" run examples/gpuring-router.yaml --backend gpu > "$OUT/emulated-run.txt" 2>&1
rc=$?
tail -n 15 "$OUT/emulated-run.txt"
if [[ $rc -eq 0 ]] && grep -q "slots audited ok" "$OUT/emulated-run.txt"; then
  result[emulated_run]=ok
else
  result[emulated_run]="FAILED (exit $rc)"
fi

log "summary"
status=0
printf '| check | result |\n|---|---|\n'
for k in unit nic_run emulated_run; do
  printf '| %s | %s |\n' "$k" "${result[$k]}"
  [[ ${result[$k]} == ok* ]] || status=1
done
exit $status
