#!/usr/bin/env python3
# The router chain over the same generated 64 B frames fed by a gpuring port (placement device)
# and by the host-staged path (generator port, batched copy to the device), both on the GPU
# backend, plus the CPU backend for reference: unpaced (Mpps) and paced at 100 kpps (latency).
# Prints a table (Mpps, latency p50/p99, NIC in-to-out p50/p99, egress copies, CPU cores) and
# writes OUT/compare.json and OUT/runs/compare-*. Used by the gpuring-chains suite
# (scripts/gpu-check.d/gpuring-chains.sh); run from the repository root.
# Usage: gpuring_compare.py BIN_DIR OUT_DIR PACKETS BUDGET_S CHAIN_HANGS(0|1)
import json, os, re, resource, subprocess, sys, time
bin_dir, out, packets = sys.argv[1], sys.argv[2], int(sys.argv[3])
budget_end = time.monotonic() + int(sys.argv[4])
chain_hangs = sys.argv[5] == "1"
root = os.getcwd()
# The example table, its next hops renamed: back out of the ring (gr), or to host ports.
table = open(f"{root}/data/router/example.routes").read()
for name, ports in (("ring", ("gr", "gr")), ("host", ("p1", "p2"))):
    with open(f"{out}/runs/{name}.routes", "w") as f:
        f.write(re.sub(r"\bp1\b", ports[0], re.sub(r"\bp2\b", ports[1], table)))
def gen(count, rate):
    r = f", rate: {rate}" if rate else ""
    return f"{{type: generator, count: {count}, size: 64, flows: 4096, dst_from: r1{r}}}"
def ring_port(placement, count, rate):
    return (f"  - {{name: gr, type: gpuring, rings: 4, ring_size: 1024, placement: {placement}, "
            f"flow_control: true, source: {gen(count, rate)}, sink: {{type: discard}}}}\n")
def staged_port(count, rate):
    r = f", rate: {rate}" if rate else ""
    return f"  - {{name: gr, type: generator, count: {count}, size: 64, flows: 4096, dst_from: r1{r}}}\n"
def cases(count, rate, tag):
    return [
        (f"gpuring device -> ring (zero copy), gpu {tag}", "gpu", ring_port("device", count, rate), "ring"),
        (f"gpuring device -> host ports, gpu {tag}", "gpu", ring_port("device", count, rate), "host"),
        (f"host-staged generator, gpu {tag}", "gpu", staged_port(count, rate), "host"),
        (f"gpuring host -> ring, cpu {tag}", "cpu", ring_port("host", count, rate), "ring"),
        (f"host-staged generator, cpu {tag}", "cpu", staged_port(count, rate), "host"),
    ]
rows = []
for name, backend, port, routes in cases(packets, None, "unpaced") + cases(min(packets, 200000), "100kpps", "100kpps"):
    cfg = f"{out}/runs/compare-{len(rows)}.yaml"
    with open(cfg, "w") as f:
        f.write("ports:\n" + port + "  - {name: p1, type: discard}\n  - {name: p2, type: discard}\n"
                f"nfs:\n  - {{name: r1, type: router, routes: {out}/runs/{routes}.routes}}\n"
                "chains:\n  - {from: gr, path: [r1]}\nsettings: {batch_size: 1024}\n")
    rep = cfg.replace(".yaml", ".json")
    if time.monotonic() > budget_end - 60:
        rows.append({"case": name, "error": "not run: the script's time budget is spent"})
        continue
    if chain_hangs and "gpuring device" in name:
        rows.append({"case": name, "error": "not run: the gpuring chain hung in step 0"})
        continue
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        p = subprocess.run([f"{bin_dir}/gpunfv", "run", cfg, "--backend", backend, "-q", "--report", rep],
                           capture_output=True, text=True, timeout=50)
    except subprocess.TimeoutExpired:
        rows.append({"case": name, "error": "timed out after 50 s"})
        continue
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        rows.append({"case": name, "error": f"exit {p.returncode}: " + (p.stderr.strip().splitlines() or ["?"])[-1]})
        continue
    r = json.load(open(rep))
    rx, tx = r["totals"]["rx_packets"], r["totals"]["tx_packets"]
    m = re.search(r"NIC in-to-out latency p50 ([0-9.]+) us p99 ([0-9.]+) us", r["backend_detail"])
    c = re.search(r"egress copied ([0-9]+) frames", r["backend_detail"])
    rows.append({"case": name, "rx": rx, "tx": tx, "elapsed_s": r["elapsed_s"],
                 "mpps": rx / r["elapsed_s"] / 1e6 if r["elapsed_s"] else 0,
                 "p50_us": r["latency_ns"]["p50"] / 1e3, "p99_us": r["latency_ns"]["p99"] / 1e3,
                 "nic_p50_us": float(m[1]) if m else None, "nic_p99_us": float(m[2]) if m else None,
                 "egress_copies": int(c[1]) if c else 0, "pcie": r.get("scheduler", {}).get("pcie"),
                 "cpu_s": cpu, "cores": cpu / wall if wall else 0, "accounting_ok": r["accounting_ok"],
                 "detail": r["backend_detail"]})
json.dump(rows, open(f"{out}/compare.json", "w"), indent=1)
ok = all("error" not in r and r["accounting_ok"] for r in rows)
print(f"{'case':50} {'rx':>8} {'Mpps':>7} {'p50 us':>8} {'p99 us':>8} {'NIC p50':>8} {'NIC p99':>8} "
      f"{'copies':>8} {'cores':>6} acct")
for r in rows:
    if "error" in r:
        print(f"{r['case']:50} ERROR {r['error']}")
        continue
    nic = lambda v: f"{v:>8.1f}" if v is not None else f"{'-':>8}"
    print(f"{r['case']:50} {r['rx']:>8} {r['mpps']:>7.3f} {r['p50_us']:>8.1f} {r['p99_us']:>8.1f} "
          f"{nic(r['nic_p50_us'])} {nic(r['nic_p99_us'])} {r['egress_copies']:>8} {r['cores']:>6.2f} "
          f"{r['accounting_ok']}")
by = {r["case"]: r for r in rows if "error" not in r}
a, b = by.get("gpuring device -> ring (zero copy), gpu unpaced"), by.get("host-staged generator, gpu unpaced")
if a and b and b["mpps"]:
    print(f"ratio gpuring (device, to ring) / host-staged, gpu backend: {a['mpps'] / b['mpps']:.3f}x Mpps")
print("p50/p99: the report's rx-to-egress latency (gpuring: from the rx loop taking the packet off its "
      "descriptor; host-staged: from ingress taking the frame from the port). NIC p50/p99: the emulator's "
      "source-to-sink time of frames sent back out through the ring (DMA in and out included). copies: frames "
      "egress copied out of GPU slots (0 when every packet goes back to the ring). cores: CPU seconds of the "
      "whole gpunfv process (emulator thread, ingress, stage threads, egress) per wall second.")
print("COMPARE", "OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
