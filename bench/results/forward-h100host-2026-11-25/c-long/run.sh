#!/bin/bash
# Run C: long runs of the final build, testpmd as one interactive process: one port per
# core (40 rounds) and two ports (15 rounds); and what the latency sample costs (ours / bare loop
# at latency_sample 64 and about none).
export LD_LIBRARY_PATH=.carry/fwd/bin
R=$OUT/c; mkdir -p $R
B=.carry/fwd/bin
ARGS="--testpmd .carry/fwd/testpmd-wrap --cpus 14 15 --no-copy --no-sweep --count-bytes off --bare-loop"
grep -m1 "model name" /proc/cpuinfo > $R/device.txt; nproc >> $R/device.txt
row() { grep -E "^(gpunfv|bare|dpdk)" $1 | tail -${2:-6} | cut -c1-60,130-250; }
t0=$(date +%s)
el() { echo "elapsed $(( $(date +%s) - t0 )) s"; }
for i in 1 2; do
  for ls in 64 1048576; do
    timeout 60 $B/forward_bench --testpmd '' --cpus 14 15 --no-copy --no-sweep --count-bytes off --bare-loop --one-port --sizes 64 --seconds 0.5 --rounds 10 --latency-sample $ls --out $R/ls-$ls-$i > $R/ls-$ls-$i.txt 2>&1
    echo "0. latency sample $ls #$i:"; row $R/ls-$ls-$i.txt 2
  done
done
el
timeout 330 $B/forward_bench $ARGS --one-port --sizes 64,1518 --seconds 0.5 --rounds 40 --out $R/one > $R/one.txt 2>&1
echo "1. one port, 40 rounds:"; row $R/one.txt; el
timeout 150 $B/forward_bench $ARGS --sizes 64,1518 --seconds 0.5 --rounds 15 --out $R/two > $R/two.txt 2>&1
echo "2. two ports, 15 rounds:"; row $R/two.txt; el
tar -C $OUT -czf $OUT/c.tgz c && rm -rf $R
