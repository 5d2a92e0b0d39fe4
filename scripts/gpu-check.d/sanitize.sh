#!/usr/bin/env bash
# Suite sanitize: NVIDIA compute-sanitizer over the GPU unit tests and over every
# examples/*.yaml on the GPU backend, once per tool (memcheck: out-of-bounds and misaligned
# device accesses, invalid frees, CUDA API errors; racecheck: shared-memory hazards between the
# threads of a block; synccheck: invalid __syncthreads/__syncwarp use). Any error it reports
# fails the suite (--error-exitcode), as does a test that skipped (no GPU) or a run that failed.
# Writes OUT_DIR/{device.txt, TOOL-unit.txt, TOOL-EXAMPLE.txt, TOOL-EXAMPLE.json}.
# Usage: [TOOLS="memcheck racecheck synccheck"] [GPU_TESTS='*Gpu*:...'] [EXAMPLES="router nids ..."]
#        [SHARDS=1] [RUN_TIMEOUT_S=3600] [SANITIZER=compute-sanitizer] [SANITIZER_ARGS=...]
#        scripts/gpu-check.sh --suite sanitize BIN_DIR OUT_DIR
# TOOLS: the tools, in order. GPU_TESTS: the gtest filter naming the tests that run kernels
# (default below: those named Gpu*, the on-device ring and forward tests, device counts, the
# kernel registry and launch-setup tests). EXAMPLES: only these examples/NAME.yaml (default all;
# ipsec-inbound runs after ipsec-outbound, over what it wrote). RUN_TIMEOUT_S: per process; a
# persistent kernel that waits forever under a tool's serialisation fails there instead of
# hanging the suite. SANITIZER_ARGS: more flags, e.g. "--leak-check full" for memcheck.
# SHARDS: the unit tests as that many gtest shards at once (TOOL-unit-K.txt), each under the
# tool; the tools are slow on the host side, and a GPU has room for several test processes. The
# on-device ring tests then run alone (TOOL-unit-rings.txt): beside other processes under a tool
# their rings drain too slowly for the tests' 20-30 s limits.
# racecheck, which instruments every shared-memory access, leaves out: the two re-plan-under-load
# tests (a million packets through the kernels GnetEndToEndEqualsCpu runs: over half an hour);
# the on-device ring tests (their persistent kernels then drain too slowly for the tests' 20-30 s
# limits; memcheck and synccheck run them); and BranchyChainEqualsCpuUnderEveryPolicy, whose SM
# partitions (green contexts) racecheck 2025.x fails to track ("failure to track a kernel
# launch", counted as an error) while the same kernels run under unco in the other tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite sanitize BIN_DIR OUT_DIR}
RESULTS=${2:?usage: scripts/gpu-check.sh --suite sanitize BIN_DIR OUT_DIR}
RESULTS=$(mkdir -p "$RESULTS" && cd "$RESULTS" && pwd)
TOOLS=${TOOLS:-memcheck racecheck synccheck}
# Not under the tools: runs where a persistent ring kernel must run beside other kernels (the
# chain's on a GPU ring's batches, or the SM DMA engine's own persistent kernel). The tools
# serialise kernel launches, so those kernels wait for the persistent one, which waits for
# them: the run's watchdog ends it, not an error found.
BESIDE_RING_KERNEL='*BesideARunningRingKernel*:GpuRingChainOnDevice.*:*_sm:*SmDma*'
GPU_TESTS=${GPU_TESTS:-"*Gpu*:*OnDevice*:DeviceCounts.*:DevicePreflight.*:KernelRegistry.*:PersistentKernelSetup.*:CudaDmaEngine.*:-$BESIDE_RING_KERNEL"}
RING_TESTS='*GpuRing*OnDevice*'
RACECHECK_LEAVES_OUT="GpuStage.ReplanUnderLoadKeepsOrder:GpuStage.GnetReplanUnderLoadKeepsOrder:$RING_TESTS:GpuStage.BranchyChainEqualsCpuUnderEveryPolicy"
SHARDS=${SHARDS:-1}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-3600}
SANITIZER=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
ERROR_EXIT=86  # compute-sanitizer's exit status when it found an error (distinct from a test failure)
[ -x "$SANITIZER" ] || { echo "sanitize: compute-sanitizer not found (CUDA toolkit's bin/, or set SANITIZER)" >&2; exit 1; }
log() { echo; echo "=== $*"; }

log "device"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$SANITIZER" --version | tail -n 1
  "$BIN/gpunfv" version; } | tee "$RESULTS/device.txt"

# usage: sanitized TOOL LOG command [args...]; its status, and a line saying why it failed.
sanitized() {
  local tool=$1 out=$2 rc=0
  shift 2
  # shellcheck disable=SC2086  # SANITIZER_ARGS is a list of flags
  timeout "$RUN_TIMEOUT_S" "$SANITIZER" --tool "$tool" --error-exitcode "$ERROR_EXIT" \
    --target-processes all --print-limit 100 ${SANITIZER_ARGS:-} "$@" > "$out" 2>&1 || rc=$?
  case $rc in
    0) ;;
    "$ERROR_EXIT") echo "  $tool reported errors: $(grep -m1 -E 'ERROR SUMMARY|^========= ' "$out")" ;;
    124) echo "  timed out after ${RUN_TIMEOUT_S} s under $tool" ;;
    *) echo "  exit $rc under $tool"; tail -n 20 "$out" ;;
  esac
  return $rc
}

failed=0
for tool in $TOOLS; do
  filter=$GPU_TESTS
  leave_out=
  [ "$tool" = racecheck ] && leave_out=$RACECHECK_LEAVES_OUT
  [ "$tool" != racecheck ] && [ "$SHARDS" -gt 1 ] && leave_out=$RING_TESTS
  if [ -n "$leave_out" ]; then
    case $filter in *-*) filter="$filter:$leave_out" ;; *) filter="$filter-$leave_out" ;; esac
  fi
  log "$tool: unit tests ($filter) in $SHARDS shard(s)"
  pids=()
  for ((k = 0; k < SHARDS; ++k)); do
    unit="$RESULTS/$tool-unit.txt"
    [ "$SHARDS" -gt 1 ] && unit="$RESULTS/$tool-unit-$k.txt"
    GTEST_TOTAL_SHARDS=$SHARDS GTEST_SHARD_INDEX=$k \
      sanitized "$tool" "$unit" "$BIN/gpunfv_tests" --gtest_filter="$filter" &
    pids+=($!)
  done
  for ((k = 0; k < SHARDS; ++k)); do
    unit="$RESULTS/$tool-unit.txt"
    [ "$SHARDS" -gt 1 ] && unit="$RESULTS/$tool-unit-$k.txt"
    if wait "${pids[$k]}"; then
      if grep -qE "^\[  SKIPPED \] .* \([0-9]+ ms\)" "$unit"; then
        echo "  some tests skipped: no GPU?"; grep -E "^\[  SKIPPED \]" "$unit" | head; failed=1
      else
        echo "  $(basename "$unit"): $(grep -E '^\[  PASSED  \]' "$unit"), $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$unit")"
      fi
    else
      failed=1
    fi
  done
  if [ "$tool" != racecheck ] && [ "$SHARDS" -gt 1 ]; then
    unit="$RESULTS/$tool-unit-rings.txt"
    if sanitized "$tool" "$unit" "$BIN/gpunfv_tests" --gtest_filter="$RING_TESTS-$BESIDE_RING_KERNEL"; then
      echo "  $(basename "$unit"): $(grep -E '^\[  PASSED  \]' "$unit"), $(grep -m1 -E 'ERROR SUMMARY' "$unit")"
    else
      failed=1
    fi
  fi

  for cfg in examples/*.yaml; do
    name=$(basename "$cfg" .yaml)
    [ "$name" = ipsec-inbound ] && continue  # below, after ipsec-outbound
    case $name in  # see BESIDE_RING_KERNEL; a real NIC's example needs the NIC
      gpuring-chain-*|gpuring-router|gpuring-nic-*) echo "  skipped examples/$name.yaml: not runnable under $tool"; continue ;;
    esac
    if [ -n "${EXAMPLES:-}" ] && [[ " $EXAMPLES " != *" $name "* ]]; then continue; fi
    runs=("$name")
    [ "$name" = ipsec-outbound ] && runs+=(ipsec-inbound)
    rm -rf out && mkdir -p out
    for run in "${runs[@]}"; do
      log "$tool: examples/$run.yaml on the GPU"
      if sanitized "$tool" "$RESULTS/$tool-$run.txt" "$BIN/gpunfv" run "examples/$run.yaml" \
          --backend gpu -q --report "$RESULTS/$tool-$run.json"; then
        echo "  ok, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$RESULTS/$tool-$run.txt")"
      else
        failed=1
      fi
    done
  done
done
rm -rf out
exit $failed
