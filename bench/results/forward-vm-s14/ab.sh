#!/bin/bash
# A/B of two forward_bench builds on the same ports, alternating size by size in one session
# (the VM is shared: alternating spreads a disturbance over both). Each invocation measures its
# own dpdk-testpmd io row, so every ratio compares rows taken seconds apart.
#   ab.sh OUTDIR SIZES ROUNDS OLD_BIN NEW_BIN [extra forward_bench options, e.g. --one-port]
# OLD_BIN: a build without --count-bytes (before this work); NEW_BIN runs both zero-copy rows
# (bytes exact, bytes off). Lines: "== old|new SIZE load L" then the rows, in OUTDIR/log.txt.
out=$1; sizes=$2; rounds=$3; old=$4; new=$5; shift 5
mkdir -p "$out"
for s in ${sizes//,/ }; do
  for v in old new; do
    if [ $v = old ]; then bin="$old"; extra=""; else bin="$new"; extra="--count-bytes exact,off"; fi
    echo "== $v $s load $(cut -d' ' -f1 /proc/loadavg)"
    $bin --no-copy --no-sweep --sizes $s --seconds 2 --rounds $rounds --cpus 0,1 $extra "$@" 2>&1 |
      grep -E "^(gpunfv z|dpdk)" | tail -3
  done
done 2>&1 | tee "$out/log.txt"
