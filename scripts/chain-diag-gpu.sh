#!/usr/bin/env bash
# Where does a chain's time go on the GPU machine? (issue 4 diagnostics)
#   tests  the GPU unit tests of the chain pipeline and the NFs (GPU output equals the CPU's);
#   examples  every example on both backends, outputs compared (scripts/gpu-examples-check.sh);
#   pcie   pinned host <-> device copies, each direction alone and both at once (PyTorch);
#   lanes  nf_bench's NIDS kernel with 4, 8, 16 and 32 lanes per packet (GPUNFV_NIDS_LANES);
#   nf     the IPsec and NIDS kernels alone (nf_bench, kernel only and end to end);
#   ncu    Nsight Compute on a few launches of the NIDS and IPsec kernels at 64 B;
#   sd     S_d (FW+IPsec+NIDS+Router) at each size and policy and in each counts MODE, with each
#          thread's CPU use (threads are named gn-rx-*, gn-gpu-cXsY, gn-egress, gn-collect-*),
#          the GPU's utilisation and the stages' queues; a summary table last.
# MODES: kernel (the per-node counts reach the host by a kernel writing pinned memory, the
# default) and/or copy (GPUNFV_DEBUG_COUNTS_BY_COPY=1: the earlier 128-byte copy per step).
# Usage: [STEPS="tests examples pcie lanes nf ncu sd"] [SIZES=64,1518] [POLICIES=gnet] [MODES=kernel] [SECS=5] [BATCH=8192]
#        scripts/chain-diag-gpu.sh BIN_DIR OUT_DIR [MODEL.json]
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:?usage: scripts/chain-diag-gpu.sh BIN_DIR OUT_DIR [MODEL.json]}")
OUT=$(realpath -m "${2:?usage}")
MODEL=${3:-bench/results/chains-q8-h200/model.json}
STEPS=${STEPS:-tests examples pcie lanes nf ncu sd}
SIZES=${SIZES:-64,1518}
POLICIES=${POLICIES:-gnet}
MODES=${MODES:-kernel}
SECS=${SECS:-5}
BATCH=${BATCH:-8192}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
log() { echo; echo "=== $*"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

log "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm --format=csv | tee "$OUT/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$OUT/device.txt"

if has tests; then
  log "GPU unit tests (chain pipeline, NFs, SM partitions)"
  timeout 300 "$BIN/gpunfv_tests" --gtest_filter='GpuStage*:GpuNids*:IpsecGpu*:GpuFirewall*:GpuSmPartition*:ExecutorQueues*:Nids.*:Allocator*' \
    > "$OUT/unit-tests.txt" 2>&1; echo "unit tests exit $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$OUT/unit-tests.txt" | head -20
fi

if has examples; then
  log "examples on both backends"
  timeout 300 scripts/gpu-examples-check.sh "$BIN" "$OUT/examples" > "$OUT/examples.txt" 2>&1; echo "examples exit $?"
  tail -15 "$OUT/examples.txt"
fi

if has pcie; then
  log "PCIe: pinned copies of 256 MiB (GB/s)"
  timeout 60 python3 - <<'EOF' 2>&1 | tee "$OUT/pcie.txt"
import torch
n = 256 << 20
h = torch.empty(n, dtype=torch.uint8, pin_memory=True); h2 = torch.empty(n, dtype=torch.uint8, pin_memory=True)
d = torch.empty(n, dtype=torch.uint8, device="cuda"); d2 = torch.empty(n, dtype=torch.uint8, device="cuda")
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
def timed(fn, reps=10):
    fn(); torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps): fn()
    b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3 / reps
t = timed(lambda: d.copy_(h, non_blocking=True)); print(f"H2D alone      {n / t / 1e9:6.1f} GB/s")
t = timed(lambda: h.copy_(d, non_blocking=True)); print(f"D2H alone      {n / t / 1e9:6.1f} GB/s")
def both():
    with torch.cuda.stream(s1): d.copy_(h, non_blocking=True)
    with torch.cuda.stream(s2): h2.copy_(d2, non_blocking=True)
    torch.cuda.synchronize()
t = timed(both); print(f"H2D + D2H      {n / t / 1e9:6.1f} GB/s each way at once")
EOF
fi

if has lanes; then
  log "NIDS kernel by lanes per packet (kernel-only and end-to-end rows)"
  for lanes in 4 8 16 32; do
    GPUNFV_NIDS_LANES=$lanes timeout 120 "$BIN/nf_bench" --nf nids --sizes 64,512,1518 --packets 500000 \
      --threads 16 --no-peer > "$OUT/nids_lanes_$lanes.txt" 2>&1
    grep -E "GPU, kernel only" "$OUT/nids_lanes_$lanes.txt" | sed "s/^/lanes $lanes /"
  done
fi

if has nf; then
  log "nf_bench: NIDS and IPsec alone"
  for nf in nids ipsec; do
    timeout 150 "$BIN/nf_bench" --nf $nf --sizes 64,1518 --packets 1000000 --threads 16 --no-peer \
      > "$OUT/nf_bench_$nf.txt" 2>&1
    grep -E "^\|" "$OUT/nf_bench_$nf.txt" | grep -E "GPU|size" | head -8
  done
fi

if has ncu; then
  log "Nsight Compute: NIDS and IPsec kernels at 64 B"
  if command -v ncu >/dev/null; then
    sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
    timeout 120 ncu --clock-control none -k regex:nids_kernel -s 3 -c 1 $sections \
      "$BIN/nf_bench" --nf nids --sizes 64 --packets 65536 --threads 2 --no-peer > "$OUT/ncu_nids.txt" 2>&1
    timeout 120 ncu --clock-control none -k regex:"number_kernel|select_sa|per_packet" -s 6 -c 3 $sections \
      "$BIN/nf_bench" --nf ipsec --sizes 64 --packets 65536 --threads 2 --no-peer > "$OUT/ncu_ipsec.txt" 2>&1
    grep -hE "^  [a-zA-Z_<].*\(|Duration|Achieved Occupancy|Registers Per" "$OUT/ncu_nids.txt" "$OUT/ncu_ipsec.txt" | head -40
  else
    echo "ncu not found"
  fi
fi

if has sd; then
  CFG="$OUT/configs"
  python3 bench/chains/make_configs.py "$CFG" --sizes "$SIZES" --policies "$POLICIES" --chains sd \
    --model "$(realpath "$MODEL")" --queues 8 --batch "$BATCH" >/dev/null
  summary="$OUT/sd-summary.txt"
  echo "| size | policy | counts | Mpps | Gbit/s | allocation |" > "$summary"
  echo "|---|---|---|---|---|---|" >> "$summary"
  for size in ${SIZES//,/ }; do
    for policy in ${POLICIES//,/ }; do
      for mode in $MODES; do
        name=sd-$size-$policy-$mode
        log "S_d $size B, $policy, counts by $mode"
        copy=0; [ "$mode" = copy ] && copy=1
        nvidia-smi dmon -s u -d 1 -c $((SECS + 1)) > "$OUT/dmon-$name.txt" 2>&1 &
        GPUNFV_DEBUG_COUNTS_BY_COPY=$copy "$BIN/gpunfv" run "$CFG/sd-$size-$policy.yaml" --backend gpu \
          --duration "$SECS" -q --report "$OUT/$name.json" > "$OUT/$name.log" 2>&1 &
        pid=$!
        ( sleep $((SECS + 50)); kill -9 $pid 2>/dev/null ) &
        killer=$!
        sleep $(( SECS / 2 ))
        python3 scripts/lib/thread_cpu.py "$pid" 2 > "$OUT/threads-$name.txt" 2>&1
        wait $pid; rc=$?
        kill $killer 2>/dev/null
        wait
        head -2 "$OUT/threads-$name.txt"
        echo "run exit $rc; GPU util: $(awk '!/^#/ {printf "%s ", $2}' "$OUT/dmon-$name.txt")"
        [ $rc -ne 0 ] && tail -5 "$OUT/$name.log"
        python3 scripts/lib/report_stages.py "$OUT/$name.json" "$size" | tee "$OUT/stages-$name.txt"
        python3 - "$OUT/$name.json" "$size" "$policy" "$mode" >> "$summary" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); size = int(sys.argv[2])
rx = sum(p.get("rx_packets", 0) for p in r["ports"].values()) / r["elapsed_s"]
print(f"| {size} | {sys.argv[3]} | {sys.argv[4]} | {rx / 1e6:.1f} | {rx * size * 8 / 1e9:.1f} | {r.get('scheduler', {}).get('line', '')} |")
EOF
      done
    done
  done
  log "S_d summary"
  cat "$summary"
fi
