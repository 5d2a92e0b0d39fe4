#!/usr/bin/env python3
"""Tables from bench/chains/run.sh's reports: throughput per chain, size and policy (Mpps and
Gbit/s of input taken), gnet's ratio to each baseline, where packets went, and latency CDFs."""
import json
import re
import statistics
import sys
from pathlib import Path

PROGRESS = re.compile(r"^\[\s*([\d.]+)s\] rx\s+([\d.]+) ([kMG]?)pps")
SCALE = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}


def steady_mpps(log: Path):
    """The median per-second input rate over the run's second half, from its progress lines."""
    if not log.exists():
        return None
    points = []
    for line in log.read_text(errors="replace").splitlines():
        m = PROGRESS.match(line)
        if m:
            points.append((float(m.group(1)), float(m.group(2)) * SCALE[m.group(3)] / 1e6))
    if not points:
        return None
    half = points[-1][0] / 2
    late = [r for t, r in points if t > half]
    return statistics.median(late) if late else None


def load(d, logs=None):
    runs = {}
    for f in sorted(Path(d).glob("*.json")):
        chain, size, policy = f.stem.split("-", 2)  # policies may hold a dash (fused-graph)
        j = json.loads(f.read_text())
        t = j["elapsed_s"] or 1e-9
        rx = j["totals"]["rx_packets"]
        rxb = sum(p["rx_bytes"] for p in j["ports"].values())
        tx = j["totals"]["tx_packets"]
        runs[(chain, int(size), policy)] = {
            "mpps": rx / t / 1e6, "gbps": rxb * 8 / t / 1e9, "tx_mpps": tx / t / 1e6,
            "dropped": j["totals"]["dropped"], "ok": j["accounting_ok"],
            "lat": j["latency_ns"], "sched": j.get("scheduler", {}).get("line", ""),
            "stages": j["chains"][0]["stages"] if j.get("chains") else [], "secs": t,
            "steady": steady_mpps(Path(logs) / f"{f.stem}.txt") if logs else None}
    return runs


def cell_rate(r):
    if not r:
        return "-"
    return f"{r['mpps']:.1f} / {r['gbps']:.1f}" + ("" if r["ok"] else " (acct!)")


def cell_latency(r):
    if not r:
        return "-"
    return f"{r['lat']['p50'] / 1e3:.0f} / {r['lat']['p99'] / 1e3:.0f}"


def main():
    runs = load(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    # gnetsteps: gnet without the remainder fold (partitions on the device's steps only)
    policies = [p for p in ("temporal", "fair", "unco", "fused", "fused-graph", "gnetsteps", "gnet") if any(k[2] == p for k in runs)]
    chains = sorted({k[0] for k in runs})
    sizes = sorted({k[1] for k in runs})
    print("Input rate taken by the chain (Mpps / Gbit/s), per policy; gnet's ratio to the others")
    head = f"{'chain':<6}{'size':>6}" + "".join(f"{p:>20}" for p in policies)
    head += "".join(f"{'gnet/' + p:>14}" for p in policies if p != "gnet")
    print(head)
    for c in chains:
        for s in sizes:
            row = f"{c:<6}{s:>6}"
            for p in policies:
                r = runs.get((c, s, p))
                row += f"{cell_rate(r):>20}"
            g = runs.get((c, s, "gnet"))
            for p in policies:
                if p == "gnet":
                    continue
                r = runs.get((c, s, p))
                row += f"{(g['mpps'] / r['mpps']) if g and r and r['mpps'] else float('nan'):>14.2f}"
            print(row)
    if any(r["steady"] for r in runs.values()):
        print("\nSteady input rate (Mpps, median per second over the second half); gnet / unco")
        print(f"{'chain':<6}{'size':>6}" + "".join(f"{p:>12}" for p in policies) + f"{'gnet/unco':>12}")
        for c in chains:
            for s in sizes:
                cells = {p: runs.get((c, s, p), {}).get("steady") for p in policies}
                row = f"{c:<6}{s:>6}" + "".join(f"{cells[p]:>12.1f}" if cells[p] else f"{'-':>12}" for p in policies)
                g, u = cells.get("gnet"), cells.get("unco")
                row += f"{g / u:>12.3f}" if g and u else f"{'-':>12}"
                print(row)
    print("\nLatency rx->tx (us): p50 / p99 per policy")
    for c in chains:
        for s in sizes:
            row = f"{c:<6}{s:>6}"
            for p in policies:
                r = runs.get((c, s, p))
                row += f"{cell_latency(r):>20}"
            print(row)
    print("\nScheduler allocation at the end of each gnet run")
    for c in chains:
        for s in sizes:
            for p in ("gnetsteps", "gnet"):
                r = runs.get((c, s, p))
                if r:
                    print(f"{c} {s}{' (' + p + ')' if p != 'gnet' else ''}: {r['sched']}")
    print("\nGPU busy per stage (% of the run: upload, each NF, download) and the stage whose queue")
    print("held the most packets: where the chain waits")
    for (c, s, p), r in sorted(runs.items()):
        st = r["stages"]
        if not st:
            continue
        busy = " ".join(f"{x['nf'] or ('up' if i == 0 else 'down')} {x.get('busy_s', 0) / r['secs'] * 100:.0f}"
                        for i, x in enumerate(st))
        fullest = max(st, key=lambda x: x["mean_queued_packets"])
        print(f"{c} {s:>5} {p:<9} {busy}; fullest queue: {fullest['nf'] or 'ingress'}")
    print("\nLatency CDF (quantile: us), 1518-byte runs under gnet (Figure 16 shape)")
    for c in chains:
        r = runs.get((c, max(sizes), "gnet"))
        if r and "cdf" in r["lat"]:
            print(f"{c}: " + ", ".join(f"{q:g}:{ns / 1e3:.0f}" for q, ns in r["lat"]["cdf"]))


if __name__ == "__main__":
    main()
