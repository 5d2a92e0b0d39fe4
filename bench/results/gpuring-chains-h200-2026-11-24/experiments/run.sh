#!/bin/bash
# gpuring-fed router on the GPU backend: what limits it (batch timeout, rings, flow control, pool).
cd "$(dirname "$0")"; mkdir -p "$OUT/r7"
for x in a b c d e f; do
  timeout 40 ${BIN:-/tmp/bin}/gpunfv run $x.yaml --backend gpu -q --report $OUT/r7/$x.json > $OUT/r7/$x.txt 2>&1
  echo "== $x exit $? $(grep -o 'rings: [0-9]*\|flow_control: [a-z]*\|settings:.*' $x.yaml | tr '\n' ' ')"
  python3 -c "
import json,sys; j=json.load(open(sys.argv[1])); t=j['elapsed_s']; rx=j['totals']['rx_packets']
d=j['backend_detail']; import re
m=re.search(r'(\d+) batches \((\d+) closed by timeout\)', d); lat=re.search(r'rx-to-tx-tail p50 ([\d.]+) us p99 ([\d.]+)', d); nic=re.search(r'NIC offered (\d+) delivered (\d+) ring_full (\d+)', d)
st=[ (s['nf'] or '-', round(s['busy_s']/t*100)) for s in j['chains'][0]['stages']]
print(f'  {rx/t/1e6:.3f} Mpps over {t:.2f} s; batches {m.group(1)} ({m.group(2)} by timeout, {rx/max(1,int(m.group(1))):.0f} pkts/batch); rx-to-tx-tail p50/p99 {lat.group(1) if lat else \"-\"}/{lat.group(2) if lat else \"-\"} us; NIC {nic.groups() if nic else \"\"}; busy% {st}')
" $OUT/r7/$x.json 2>&1 | tail -2
done
