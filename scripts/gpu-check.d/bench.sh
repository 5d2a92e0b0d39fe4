#!/usr/bin/env bash
# Suite bench: every benchmark in one run (bench/run-all): nf_bench (each NF against its peers,
# CPU and GPU rows, repeated samples), the chain evaluation S_a..S_d per policy, the latency
# sweep and the forward benchmark; tables, JSON and PNG plots into OUT_DIR (README.md first).
# Usage: [QUICK=1] [MACHINE=h200] [RUN_ALL_ARGS=...] scripts/gpu-check.sh --suite bench BIN_DIR OUT_DIR
# QUICK=1: run-all --quick (a few minutes); without it the full settings (about an hour).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite bench BIN_DIR OUT_DIR}
OUT=${2:?usage: scripts/gpu-check.sh --suite bench BIN_DIR OUT_DIR}
args=(--bin "$BIN" --out "$OUT" --machine "${MACHINE:-$(hostname -s)}")
[ -n "${QUICK:-}" ] && args+=(--quick)
# shellcheck disable=SC2086
/usr/bin/python3 bench/run-all "${args[@]}" ${RUN_ALL_ARGS:-}
