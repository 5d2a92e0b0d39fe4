#!/bin/bash
# variants alternately, size by size; args: OUTDIR SIZES ROUNDS VARIANTS [extra]
out=$1; sizes=$2; rounds=$3; variants=$4; shift 4
mkdir -p $out
for s in ${sizes//,/ }; do
  for v in ${variants//,/ }; do
    case $v in
      old) bin=before/forward_bench ;;
      new) bin="build/forward_bench --no-copy --no-sweep" ;;
      new1) bin="build/forward_bench --no-copy --no-sweep --latency-sample 1" ;;
      *) bin="$v --no-copy --no-sweep" ;;
    esac
    echo "== $v $s load $(cut -d' ' -f1 /proc/loadavg)"
    $bin --sizes $s --seconds 2 --rounds $rounds --cpus 0,1 "$@" 2>&1 | grep -E "^(gpunfv zero|dpdk)" | grep -E " 32 " | tail -2
  done
done 2>&1 | tee $out/log.txt
