#!/usr/bin/env bash
# The GPU checks, run on a machine with an NVIDIA GPU (H100/H200). Each suite runs its tests and
# benchmarks there and writes what it measured into OUT_DIR; tests that skip without a GPU run
# instead of skipping, and a suite fails if any of them skipped.
#
#   scripts/gpu-check.sh [--suite NAME[,NAME...]] [BIN_DIR] [OUT_DIR]
#
# BIN_DIR: a CUDA build (gpunfv, gpunfv_tests and the benchmarks), or one packaged by
# scripts/package-for-gpu-host.sh (.gpu-package/bin). Left out or empty: builds build-gpu here
# with -DGPUNFV_CUDA=ON. OUT_DIR: default out/gpu-check; with several suites each writes into
# OUT_DIR/NAME. Without --suite: unit, examples, nf.
#
# Suites (scripts/gpu-check.d/NAME.sh; each header says what it runs and writes):
#   unit            every unit test on the GPU (the GPU-vs-CPU tests of every NF, stage and port)
#   examples        every examples/*.yaml on both backends: GPU output files and counters == CPU's
#   nf              nf_bench (every NF, 64/512/1518 B, the router also on the full table), the executor
#                   end to end on both backends
#   chains          G-NET's chains S_a..S_d x sizes x policies (bench/chains/run.sh), with the
#                   unit tests and examples first (SKIP_UNIT=1, SKIP_EXAMPLES=1 leave them out)
#   collect         the NFs' host-side collect(): its tests, collect_bench, S_d with threads sampled
#   egress          egress_bench and S_d at 64 B with 1, 2, 3 egress threads per chain
#   gpuring         the GPU ring port: its unit tests and gpuring_bench (NIC emulated)
#   gpuring-chains  chains fed by a gpuring port on the GPU backend, against the CPU backend and
#                   the host-staged path
#   forward         forwarding between two gpuring ports under gpunfv run, host vs device placement
#   sched           SM partitions and gpunfv profile (G-NET's performance model)
#   bench           bench/run-all: nf_bench, the chains, the latency sweep and the forward
#                   benchmark into one results folder with tables, JSON and plots (QUICK=1)
#   live-updates    route and rule updates while packets flow: their GPU unit tests, the control
#                   socket's e2e tests on the GPU backend, route_update_bench on GPU and CPU
#   sanitize        compute-sanitizer (memcheck, racecheck, synccheck) over the GPU unit tests and
#                   every example on the GPU backend; any error it reports fails the suite
# Suite arguments beyond BIN_DIR and OUT_DIR are given by environment variables (see each suite).
set -euo pipefail
SELF=$(readlink -f "$0")
cd "$(dirname "$0")/.."
SUITES=unit,examples,nf
if [ "${1:-}" = --suite ]; then SUITES=${2:?usage: scripts/gpu-check.sh [--suite NAME[,NAME...]] [BIN_DIR] [OUT_DIR]}; shift 2; fi
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
BIN=${1:-}
OUT=${2:-out/gpu-check}
IFS=, read -r -a names <<< "$SUITES"
for name in "${names[@]}"; do
  [ -f "scripts/gpu-check.d/$name.sh" ] || { echo "gpu-check: no suite '$name' (see scripts/gpu-check.sh --help)" >&2; exit 2; }
done
if [ -z "$BIN" ]; then
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DGPUNFV_CUDA=ON
  cmake --build build-gpu -j "$(nproc)"
  BIN=build-gpu
fi
BIN=$(cd "$BIN" && pwd)
if ls "$BIN"/lib*.so* > /dev/null 2>&1; then  # a packaged build holds its shared libraries
  export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
status=0
for name in "${names[@]}"; do
  dir=$OUT
  [ "${#names[@]}" -gt 1 ] && dir=$OUT/$name
  mkdir -p "$dir"
  echo; echo "##### suite $name -> $dir"
  if bash "scripts/gpu-check.d/$name.sh" "$BIN" "$dir"; then
    echo "##### suite $name: ok"
  else
    echo "##### suite $name: FAILED"; status=1
  fi
done
exit $status
