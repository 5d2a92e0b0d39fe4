#!/bin/bash
# The cost of isolation on chain S_d (firewall, IPsec, NIDS, router) at saturation, each pair
# alternating in rounds so that drift in the host spreads over both:
# - isoPointer's bounds checks: on the GPU under the unco policy, a gpunfv built with the checks
#   (the default) against one built with -DGPUNFV_UNCHECKED=ON. G-NET measured 2.8-4.5%.
# - NF processes: every NF in its own process (`process:`) against all in gpunfv run's process,
#   on the GPU under unco (the Manager performs the processes' GPU calls) and on the CPU backend.
#
# usage: bench/isolation/run.sh CHECKED_BIN_DIR UNCHECKED_BIN_DIR OUT_DIR [SECONDS] [SIZES]
# SECONDS per run (default 6), SIZES frame sizes (default 64,1518). env REPEATS: rounds
# (default 3); env QUEUES, BATCH: as bench/chains/run.sh (defaults 8 and 32768); env PARTS:
# any of gpu (the checks), gpuproc (NF processes on the GPU), cpu (NF processes on the CPU)
# (default gpu,gpuproc,cpu).
# A run's rate is its steady rate (bench/chains/summarize.py); summarize.py prints each build's
# median with min and max, the cost from the medians, and the cost round by round (median with
# min and max over the rounds, each round's two runs back to back, and every round's in order).
set -uo pipefail
CHECKED=$(realpath "$1"); UNCHECKED=$(realpath "$2"); OUT=$(realpath -m "$3")
SECS=${4:-6}; SIZES=${5:-64,1518}
REPEATS=${REPEATS:-3}; QUEUES=${QUEUES:-8}; BATCH=${BATCH:-32768}; PARTS=${PARTS:-gpu,gpuproc,cpu}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT/configs" "$OUT/reports" "$OUT/logs"
python3 "$HERE/../chains/make_configs.py" "$OUT/configs" --sizes "$SIZES" --policies unco \
  --chains sd --model "$OUT/model.json" --queues "$QUEUES" --batch "$BATCH" --egress-threads 0
echo "S_d, unco, generator queues: $QUEUES, batch_size: $BATCH, $REPEATS rounds of $SECS s runs" > "$OUT/setup.txt"
for rep in $(seq 1 "$REPEATS"); do
  for size in ${SIZES//,/ }; do
    for build in checked unchecked; do
      [[ ",$PARTS," == *,gpu,* ]] || continue
      bin=$CHECKED; [ "$build" = unchecked ] && bin=$UNCHECKED
      run="sd-$size-$build.r$rep"
      [ -s "$OUT/reports/$run.json" ] && continue
      timeout $((SECS + 60)) "$bin/gpunfv" run "$OUT/configs/sd-$size-unco.yaml" --backend gpu \
        --duration "$SECS" --report "$OUT/reports/$run.json" > "$OUT/logs/$run.txt" 2>&1
      echo "$run exit $?"
    done
    for backend in gpu cpu; do
      part=$backend; [ "$backend" = gpu ] && part=gpuproc
      [[ ",$PARTS," == *,$part,* ]] || continue
      for placement in manager processes; do
        cfg="$OUT/configs/sd-$size-$backend-$placement.yaml"
        if [ ! -s "$cfg" ]; then
          # The CPU backend has no scheduler (SM shares).
          if [ "$backend" = cpu ]; then sed -E '/^  scheduler:/d' "$OUT/configs/sd-$size-unco.yaml" > "$cfg"
          else cp "$OUT/configs/sd-$size-unco.yaml" "$cfg"; fi
          [ "$placement" = processes ] && sed -i -E 's/^  - name: (fw|ipsec|nids|router)$/&\n    process: vendor-\1/' "$cfg"
        fi
        run="sd-$size-$backend-$placement.r$rep"
        [ -s "$OUT/reports/$run.json" ] && continue
        timeout $((SECS + 60)) "$CHECKED/gpunfv" run "$cfg" --backend "$backend" --duration "$SECS" \
          --report "$OUT/reports/$run.json" > "$OUT/logs/$run.txt" 2>&1
        echo "$run exit $?"
      done
    done
  done
done
python3 "$HERE/summarize.py" "$OUT/reports" "$OUT/logs" | tee "$OUT/summary.txt"
