#!/bin/bash
# Session 14 run K: do the GPU stage threads wait for a CPU? S_d 64 B batch 32768 with the stage
# (gn-gpu-*) and egress threads reniced to -10 after start, against plain runs, alternating.
sh .carry/pack/unpack.sh .carry/pack/bin.tar.xz
export LD_LIBRARY_PATH=/tmp/bin
. scripts/lib/gpu_check.sh
B=/tmp/bin; R=$OUT/k; mkdir -p $R
print_device $R/device.txt "hostname: $(hostname)"
C=$R/configs; mkdir -p $C; cp .carry/pack/model-s14b.json $R/model.json
python3 bench/chains/make_configs.py $C --sizes 64 --policies unco,gnet --chains sd --model $R/model.json --queues 8 --batch 32768
renice_stages() {  # pid
  for t in /proc/$1/task/*; do
    case "$(cat $t/comm 2>/dev/null)" in gn-gpu-*|gn-egress*) renice -n -10 -p "$(basename $t)" > /dev/null 2>&1 ;; esac
  done
}
for i in 1 2; do for pol in unco gnet; do for v in plain nice; do
  n=sd-64-$pol-$v-$i
  timeout 60 $B/gpunfv run $C/sd-64-$pol.yaml --backend gpu --duration 6 -q --report $R/$n.json > $R/$n.log 2>&1 &
  runner=$!
  pid=""; for _ in $(seq 1 100); do pid=$(pgrep -n -x gpunfv) && break; sleep 0.1; done
  if [ $v = nice ] && [ -n "$pid" ]; then
    for _ in $(seq 1 200); do grep -qs "gn-gpu" /proc/$pid/task/*/comm && break; sleep 0.05; done
    sleep 0.2; renice_stages $pid
  fi
  sleep 3; [ -n "$pid" ] && python3 scripts/lib/thread_cpu.py $pid 2 > $R/$n.threads.txt 2>&1
  wait $runner
  echo "$n $(grep -E '^total' $R/$n.log | cut -c1-60)"
done; done; done
python3 - $R <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/sd-*.json")):
    j = json.load(open(f)); t = j["elapsed_s"]
    st = j["chains"][0]["stages"]
    busy = " ".join(f"{x['nf'] or ('up' if i == 0 else 'down')} {x['busy_s'] / t * 100:.0f}/{x['mean_queued_packets'] / 1000:.0f}k" for i, x in enumerate(st))
    print(f"{os.path.basename(f):<24} {j['totals']['rx_packets'] / t / 1e6:6.1f} | {busy}")
PY
tar -C $OUT -czf $OUT/k.tgz k
