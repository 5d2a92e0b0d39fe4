#!/bin/bash
# Session 18 run B: the event-turn loop with testpmd as one interactive process (rows by
# start/stop, about a second apart), one port per core and two ports; the per-row testpmd for
# comparison; the default shape; session 17's build against this one (ours / bare loop).
export LD_LIBRARY_PATH=.carry/fwd/bin
R=$OUT/b; mkdir -p $R
B=.carry/fwd/bin
ARGS="--testpmd .carry/fwd/testpmd-wrap --cpus 14 15 --no-copy --no-sweep --count-bytes off --bare-loop"
grep -m1 "model name" /proc/cpuinfo > $R/device.txt; nproc >> $R/device.txt
row() { grep -E "^(gpunfv|bare|dpdk)" $1 | tail -${2:-6} | cut -c1-60,130-250; }
t0=$(date +%s)
el() { echo "elapsed $(( $(date +%s) - t0 )) s"; }
timeout 200 $B/forward_bench $ARGS --one-port --sizes 64,1518 --seconds 0.5 --rounds 20 --out $R/one > $R/one.txt 2>&1
echo "1. one port, 20 rounds:"; row $R/one.txt; el
timeout 100 $B/forward_bench $ARGS --sizes 64,1518 --seconds 0.5 --rounds 6 --out $R/two > $R/two.txt 2>&1
echo "2. two ports, 6 rounds:"; row $R/two.txt; el
timeout 60 $B/forward_bench $ARGS --one-port --sizes 64 --seconds 1 --rounds 3 --testpmd-per-row --out $R/per-row > $R/per-row.txt 2>&1
echo "3. one port, testpmd per row:"; row $R/per-row.txt 3; el
timeout 60 $B/forward_bench --testpmd .carry/fwd/testpmd-wrap --cpus 14 15 --no-copy --one-port --sizes 64 --seconds 0.5 --rounds 3 --out $R/one-full > $R/one-full.txt 2>&1
echo "4. one port, default shape and sweep:"; row $R/one-full.txt 6; el
for i in 1 2; do
  for b in forward_bench_s17 forward_bench; do
    timeout 60 $B/$b --testpmd '' --cpus 14 15 --no-copy --no-sweep --count-bytes off --bare-loop --one-port --sizes 64 --seconds 0.5 --rounds 10 --out $R/alt-$b-$i > $R/alt-$b-$i.txt 2>&1
    echo "5. alt $i $b:"; row $R/alt-$b-$i.txt 2
  done
done
el
tar -C $OUT -czf $OUT/b.tgz b && rm -rf $R
