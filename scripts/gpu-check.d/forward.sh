#!/usr/bin/env bash
# Suite forward: `gpunfv run` driving a forward between two gpuring ports (P2PNIC) on a GPU
# host: examples/gpuring-forward.yaml (routed SIP capture, variant rd, one ring pair) with
# placement: host (CPU threads) and placement: device (the persistent forwarding kernel); the
# two output captures must hold the same frames byte for byte, in the same order, and the two
# reports the same per-port counts and drops. Then, on the device: variant wr unrouted over two
# ring pairs (the same frames as the source, any order across rings), an endless source cut off
# by --duration (exact accounting, slot audit), the forwarding unit tests, and a short
# gpuring_bench --gpu-forward sweep (wr, rd; 64 and 1518 B).
# Writes OUT_DIR/{device.txt, *.yaml, *.report.json, *.log, *.pcap, unit-tests.txt,
# gpu_forward.{txt,json}, summary.txt}; prints the summary table last. About 2-4 minutes
# (timeouts 60 x 4 + 150 + 120 s).
# Usage: [SWEEP_ARGS=...] scripts/gpu-check.sh --suite forward BIN_DIR OUT_DIR
# (SWEEP_ARGS: the gpuring_bench --gpu-forward options, default "--variants wr,rd --fwd-sizes
# 64,1518 --fwd-packets 200000"; "" runs the full sweep: every variant and size, latency at 50%
# load, tail batching, the emulator's step phases.  BIN_DIR: a CUDA build holding gpunfv,
# gpunfv_tests and gpuring_bench; LD_LIBRARY_PATH should include it)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "${1:?usage: scripts/gpu-check.sh --suite forward BIN_DIR OUT_DIR}")
OUT=${2:?usage: scripts/gpu-check.sh --suite forward BIN_DIR OUT_DIR}
mkdir -p "$OUT" && OUT=$(realpath "$OUT")
REPO=$(pwd)
declare -a SUMMARY
note() { SUMMARY+=("$(printf '%-44s %s' "$1" "$2")"); }
log() { echo; echo "=== $*"; }

log "device"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || echo "nvidia-smi failed"; } | tee "$OUT/device.txt"
echo "host cores: $(nproc)" | tee -a "$OUT/device.txt"

# The example with absolute paths, its capture in OUT; extra sed expressions change it.
config() {  # NAME [sed expression...]
  local name=$1; shift
  local exprs=(-e "s|\.\./data/|$REPO/data/|g" -e "s|\.\./out/gpuring-forward.pcap|$OUT/$name.pcap|"
               -e "s|route: gpuring-forward.routes|route: $REPO/examples/gpuring-forward.routes|")
  for e in "$@"; do exprs+=(-e "$e"); done
  sed "${exprs[@]}" examples/gpuring-forward.yaml > "$OUT/$name.yaml"
}
run() {  # NAME [gpunfv options...]
  local name=$1; shift
  timeout 60 "$BIN/gpunfv" run "$OUT/$name.yaml" --report "$OUT/$name.report.json" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc"; tail -n 12 "$OUT/$name.log"
  return $rc
}

log "example, placement: host (CPU threads)"
config host
run host -q; host_rc=$?
note "example, placement host: exit" "$host_rc"

log "example, placement: device (forwarding kernel)"
config device 's|placement: host|placement: device|'
run device; device_rc=$?
note "example, placement device: exit" "$device_rc"

log "variant wr, two ring pairs, unrouted, device"
config wr2 's|placement: host|placement: device|' 's|rings: 1|rings: 2|' \
  "s|variant: rd, route: $REPO/examples/gpuring-forward.routes, integrity: on|variant: wr, integrity: on|"
run wr2 -q; wr2_rc=$?
note "wr, 2 ring pairs, device: exit" "$wr2_rc"

log "endless source cut off by --duration 2, device"
cat > "$OUT/duration.yaml" <<EOF
ports:
  - {name: a, type: gpuring, placement: device, rings: 4, rate: 1Mpps,
     source: {type: generator, size: 64-1500, flows: 1024, duration: 60}}
  - {name: b, type: gpuring, placement: device, rings: 4, sink: {type: "discard"}}
forward:
  - {from: a, to: b, variant: rd, integrity: on}
EOF
run duration -q --duration 2; duration_rc=$?
note "--duration 2, device: exit" "$duration_rc"

log "compare the captures and the reports"
python3 - "$OUT" "$REPO/data/traces/SIP_CALL_RTP_G711.pcap" <<'PY' | tee "$OUT/compare.txt"
import json, struct, sys
from collections import Counter
out, trace = sys.argv[1], sys.argv[2]

def frames(path):
    data = open(path, "rb").read()
    endian = "<" if struct.unpack("<I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off, res = 24, []
    while off < len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        res.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return res

def report(name):
    try:
        return json.load(open(f"{out}/{name}.report.json"))
    except Exception as e:  # the run failed: no report
        return None

def line(what, ok):
    print(f"{what:<44} {'ok' if ok else 'FAILED'}")
    return ok

good = True
h, d = report("host"), report("device")
if h and d:
    fh, fd = frames(f"{out}/host.pcap"), frames(f"{out}/device.pcap")
    good &= line(f"device capture == host capture ({len(fd)} frames)", fh == fd and len(fh) > 4000)
    keys = ("rx_packets", "tx_packets", "forwarded", "dropped", "drops", "rx_bytes", "tx_bytes")
    same = all(h["ports"][p][k] == d["ports"][p][k] for p in ("a", "b") for k in keys)
    good &= line("device report counts == host report counts", same)
    good &= line("device forward ran on the GPU", d["forwards"][0]["loops"] == "gpu")
    for name, r in (("host", h), ("device", d)):
        f = r["forwards"][0]
        print(f"  {name}: a rx {r['ports']['a']['rx_packets']} drops {r['ports']['a']['drops']} "
              f"b tx {r['ports']['b']['tx_packets']}; latency p50 {f['latency_ns']['p50']} ns "
              f"p99 {f['latency_ns']['p99']} ns; posts {f['posts']}; audit {f['slot_audit']}")
else:
    good &= line("host and device reports present", False)
w = report("wr2")
if w:
    good &= line("wr, 2 rings: capture == source frames (multiset)",
                 Counter(frames(f"{out}/wr2.pcap")) == Counter(frames(trace)))
    good &= line("wr, 2 rings: reordered within a ring == 0", w["forwards"][0]["nic"]["reordered_in_ring"] == 0)
else:
    good &= line("wr, 2 rings: report present", False)
u = report("duration")
if u:
    a = u["ports"]["a"]
    good &= line(f"--duration: a rx {a['rx_packets']} = b tx + drops, audit ok",
                 u["accounting_ok"] and u["forwards"][0]["slot_audit"] == "ok" and a["rx_packets"] > 100000)
else:
    good &= line("--duration: report present", False)
sys.exit(0 if good else 1)
PY
compare_rc=${PIPESTATUS[0]}
note "captures and reports compared" "$([ "$compare_rc" = 0 ] && echo ok || echo FAILED)"

log "unit tests: forwarding loops (CPU threads) and kernel (GPU)"
timeout 150 "$BIN/gpunfv_tests" --gtest_filter='*GpuRingForward*:*ForwardVariant*' > "$OUT/unit-tests.txt" 2>&1
tests_rc=$?
grep -E "^\[ +(OK|SKIPPED|FAILED) \]|PASSED|FAILED" "$OUT/unit-tests.txt" | tail -n 30
skipped=$(grep -cE "^\[  SKIPPED \] .*OnDevice.* \([0-9]+ ms\)" "$OUT/unit-tests.txt" || true)
note "unit tests (exit, device tests skipped)" "$tests_rc, $skipped skipped"

SWEEP_ARGS=${SWEEP_ARGS---variants wr,rd --fwd-sizes 64,1518 --fwd-packets 200000}
log "gpuring_bench --gpu-forward ${SWEEP_ARGS:-(full sweep)}"
# shellcheck disable=SC2086
timeout 300 "$BIN/gpuring_bench" --gpu-forward $SWEEP_ARGS \
  --json "$OUT/gpu_forward.json" > "$OUT/gpu_forward.txt" 2>&1
bench_rc=$?
tail -n 25 "$OUT/gpu_forward.txt"
note "gpuring_bench --gpu-forward: exit" "$bench_rc"

log "summary"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/summary.txt"
[ "$host_rc$device_rc$wr2_rc$duration_rc$compare_rc$tests_rc$bench_rc" = "0000000" ] && [ "$skipped" = 0 ]
