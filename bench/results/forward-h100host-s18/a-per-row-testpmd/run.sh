#!/bin/bash
# Session 18 run A: the event-turn loop (run_whole_bursts<kOnePost>) against session 17's build,
# one port per core and two ports, with testpmd io and its loop built into forward_bench.
export LD_LIBRARY_PATH=.carry/fwd/bin
R=$OUT/a; mkdir -p $R
B=.carry/fwd/bin
ARGS="--testpmd .carry/fwd/testpmd-wrap --cpus 14 15 --no-copy --no-sweep --count-bytes off --bare-loop"
grep -m1 "model name" /proc/cpuinfo > $R/device.txt; nproc >> $R/device.txt
row() { grep -E "^(gpunfv zc|bare|dpdk)" $1 | tail -${2:-6} | cut -c1-60,130-230; }
t0=$(date +%s)
# 1. old and new builds alternating, one port, 64 B, 2 rounds each
for i in 1 2 3; do
  for b in forward_bench_s17 forward_bench; do
    timeout 120 $B/$b $ARGS --one-port --sizes 64 --seconds 1 --rounds 2 > $R/alt-$b-$i.txt 2>&1
    echo "alt $i $b:"; row $R/alt-$b-$i.txt 3
  done
done
echo "elapsed $(( $(date +%s) - t0 )) s"
# 2. the new build, one port, 10 rounds, 64 and 1518 B
timeout 300 $B/forward_bench $ARGS --one-port --sizes 64,1518 --seconds 1 --rounds 10 --out $R/one > $R/one.txt 2>&1
echo "one port, 10 rounds:"; row $R/one.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
# 3. two ports, 3 rounds
timeout 150 $B/forward_bench $ARGS --sizes 64,1518 --seconds 1 --rounds 3 --out $R/two > $R/two.txt 2>&1
echo "two ports, 3 rounds:"; row $R/two.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
tar -C $OUT -czf $OUT/a.tgz a && rm -rf $R
