#!/bin/bash
# Run D: every row forward_bench has (zero-copy with exact bytes and
# with count_bytes off, copy, testpmd's loop built in, testpmd io as one interactive process),
# 64-1518 B, the descriptor-batch sweep; one port per core, then two ports.
export LD_LIBRARY_PATH=.carry/fwd/bin
R=$OUT/d; mkdir -p $R
B=.carry/fwd/bin
ARGS="--testpmd .carry/fwd/testpmd-wrap --cpus 14 15 --bare-loop --sizes 64,128,256,512,1024,1518 --seconds 0.5 --rounds 6"
grep -m1 "model name" /proc/cpuinfo > $R/device.txt; nproc >> $R/device.txt
t0=$(date +%s)
el() { echo "elapsed $(( $(date +%s) - t0 )) s"; }
timeout 280 $B/forward_bench $ARGS --one-port --out $R/one > $R/one.txt 2>&1
echo "one port:"; tail -34 $R/one.txt | cut -c1-60,130-250; el
timeout 280 $B/forward_bench $ARGS --out $R/two > $R/two.txt 2>&1
echo "two ports:"; tail -34 $R/two.txt | cut -c1-60,130-250; el
tar -C $OUT -czf $OUT/d.tgz d && rm -rf $R
