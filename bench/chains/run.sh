#!/bin/bash
# G-NET's evaluation shape with our NFs: profile every NF (nBench), then run chains
# S_a..S_d at each packet size under each sharing policy, and summarize throughput per policy,
# the gnet / temporal ratio and latency CDFs.
#
# usage: bench/chains/run.sh BIN_DIR OUT_DIR [SECONDS] [SIZES] [POLICIES] [CHAINS]
# SECONDS per run (default 6: gnet's trial ends before the steady second half).
# env QUEUES: the generator's rx queues, one ingress thread each (default 8, for 16 cores);
# QUEUES=1 is the single-ingress-thread setup of the earlier runs. env BATCH: settings.batch_size
# (default 8192; gnet picks its own batch up to it, the other policies run at it). env
# PROFILE_SMS: the profiling partition's SMs (gpunfv profile --sms; default the smallest).
# env EGRESS_THREADS: settings.egress_threads_per_chain (default: unset, the runtime's default).
# env REPEATS: runs of each cell (default 5), made in rounds over all cells so that drift in the
# host spreads over every cell; summarize.py reports each cell's median with min and max.
# Each run's progress lines (one a second) go to logs/; a run's rate is its steady rate, the
# median of the per-second input rates over its second half (gnet measures its plan against
# the whole GPU in the first seconds of a saturated run). A run whose report exists is not
# made again, so an interrupted evaluation resumes where it stopped.
set -uo pipefail
BIN=$(realpath "$1"); OUT=$(realpath -m "$2"); SECS=${3:-6}
SIZES=${4:-64,512,1518}; POLICIES=${5:-temporal,fair,unco,gnet}; CHAINS=${6:-sa,sb,sc,sd}
QUEUES=${QUEUES:-8}
BATCH=${BATCH:-8192}
EGRESS_THREADS=${EGRESS_THREADS:-0}
REPEATS=${REPEATS:-5}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT/configs" "$OUT/reports" "$OUT/logs"
python3 "$HERE/make_configs.py" "$OUT/configs" --sizes "$SIZES" --policies "$POLICIES" \
  --chains "$CHAINS" --model "$OUT/model.json" --queues "$QUEUES" --batch "$BATCH" \
  --egress-threads "$EGRESS_THREADS"
echo "generator queues: $QUEUES, batch_size: $BATCH, egress_threads_per_chain: $EGRESS_THREADS (0: default), $REPEATS runs of $SECS s per cell" > "$OUT/queues.txt"
if [ ! -s "$OUT/model.json" ]; then
  echo "== gpunfv profile (nBench)"
  "$BIN/gpunfv" profile "$OUT/configs/profile.yaml" --sizes "$SIZES" --out "$OUT/model.json" ${PROFILE_SMS:+--sms "$PROFILE_SMS"} \
    > "$OUT/profile.txt" 2>&1 || echo "profile failed (exit $?); gnet runs will say so"
  tail -40 "$OUT/profile.txt"
fi
for rep in $(seq 1 "$REPEATS"); do
  for chain in ${CHAINS//,/ }; do
    for size in ${SIZES//,/ }; do
      for policy in ${POLICIES//,/ }; do
        name="$chain-$size-$policy"; run="$name.r$rep"
        [ -s "$OUT/reports/$run.json" ] && continue
        timeout $((SECS + 60)) "$BIN/gpunfv" run "$OUT/configs/$name.yaml" --backend gpu \
          --duration "$SECS" --report "$OUT/reports/$run.json" > "$OUT/logs/$run.txt" 2>&1
        echo "$run exit $?"
      done
    done
  done
done
python3 "$HERE/summarize.py" "$OUT/reports" "$OUT/logs" | tee "$OUT/summary.txt"
