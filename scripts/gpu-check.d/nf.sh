#!/usr/bin/env bash
# Suite nf: each NF's figures on the GPU host.
#   1. bench/nf_bench: router (5,000 prefixes, then the full table: router_fulltable), firewall
#      (ClassBench acl1 1k, fw1 10k), NIDS (ET Open) and IPsec (ESP outbound) at 64/512/1518 B,
#      CPU vs peer libraries vs GPU, every GPU output packet compared with the CPU's, every peer
#      answer with ours;
#   2. the executor end to end on both backends (examples/router-fulltable.yaml).
# Writes OUT_DIR/{nf_bench.{txt,json,log}, nf_bench_fulltable.{txt,json,log},
# fulltable-{cpu,gpu}.{txt,json}}.
# Usage: [NF_ARGS="--min-seconds 0.2 --repeats 3"] scripts/gpu-check.sh --suite nf BIN_DIR OUT_DIR
# (NF_ARGS: more nf_bench options; its defaults sample each row 5 x 1 s, about 20 minutes.)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: scripts/gpu-check.sh --suite nf BIN_DIR OUT_DIR}
RESULTS=${2:?usage: scripts/gpu-check.sh --suite nf BIN_DIR OUT_DIR}
mkdir -p "$RESULTS" out
log() { echo; echo "=== $*"; }

log "per-NF benchmark (nf_bench: router, firewall, NIDS, IPsec at 64, 512, 1518 B)"
# shellcheck disable=SC2086
"$BIN/nf_bench" --threads "$(nproc)" ${NF_ARGS:-} --json "$RESULTS/nf_bench.json" 2> >(tee "$RESULTS/nf_bench.log" >&2) | tee "$RESULTS/nf_bench.txt"

log "router on the full table (nf_bench router_fulltable)"
# shellcheck disable=SC2086
"$BIN/nf_bench" --threads "$(nproc)" ${NF_ARGS:-} --config bench/nf_bench/router_fulltable.yaml \
  --json "$RESULTS/nf_bench_fulltable.json" 2> >(tee "$RESULTS/nf_bench_fulltable.log" >&2) | tee "$RESULTS/nf_bench_fulltable.txt"

log "executor end to end, full table, generator -> router -> null ports"
for backend in cpu gpu; do
  "$BIN/gpunfv" run examples/router-fulltable.yaml --backend "$backend" --report "$RESULTS/fulltable-$backend.json" 2>&1 | tail -n 16 | tee "$RESULTS/fulltable-$backend.txt"
done
