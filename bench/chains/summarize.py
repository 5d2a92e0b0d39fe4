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


RUN_NAME = re.compile(r"^(?P<chain>[^-]+)-(?P<size>\d+)-(?P<policy>.+?)(?:\.r(?P<rep>\d+))?$")


def load_one(f: Path, logs):
    j = json.loads(f.read_text())
    t = j["elapsed_s"] or 1e-9
    rx = j["totals"]["rx_packets"]
    rxb = sum(p["rx_bytes"] for p in j["ports"].values())
    run = {"mpps": rx / t / 1e6, "gbps": rxb * 8 / t / 1e9,
           "tx_mpps": j["totals"]["tx_packets"] / t / 1e6,
           "dropped": j["totals"]["dropped"], "ok": j["accounting_ok"],
           "lat": j["latency_ns"], "sched": j.get("scheduler", {}).get("line", ""),
           "stages": j["chains"][0]["stages"] if j.get("chains") else [], "secs": t,
           "steady": steady_mpps(Path(logs) / f"{f.stem}.txt") if logs else None,
           "kept": [t["kept"] for t in j.get("scheduler", {}).get("trials", [])]}
    # The row's rate: the steady rate where the progress lines give one, else the whole run's.
    run["rate"] = run["steady"] or run["mpps"]
    run["rate_gbps"] = run["rate"] * (rxb * 8 / rx / 1e3 if rx else 0)
    return run


def aggregate(repeats):
    """One cell from its repeated runs: the run with the median rate stands for the cell (its
    latency, scheduler line and stages); rates are the median with the repeats' min and max."""
    ordered = sorted(repeats, key=lambda r: r["rate"])
    cell = dict(ordered[(len(ordered) - 1) // 2])
    rates = [r["rate"] for r in ordered]
    gbps = sorted(r["rate_gbps"] for r in ordered)
    cell.update(mpps=statistics.median(rates), mpps_min=rates[0], mpps_max=rates[-1],
                gbps=statistics.median(gbps), gbps_min=gbps[0], gbps_max=gbps[-1],
                repeats=len(ordered), ok=all(r["ok"] for r in ordered),
                # gnet: what each run's last trial kept, the model's plan or the whole GPU
                last_kept=[r["kept"][-1] for r in ordered if r["kept"]])
    return cell


def load(d, logs=None):
    """{(chain, size, policy): cell} from the reports in d; files named CHAIN-SIZE-POLICY.rN.json
    are repeats of one cell (a policy may hold a dash: fused-graph)."""
    repeats = {}
    for f in sorted(Path(d).glob("*.json")):
        m = RUN_NAME.match(f.stem)
        if not m:
            continue
        key = (m["chain"], int(m["size"]), m["policy"])
        repeats.setdefault(key, []).append(load_one(f, logs))
    return {k: aggregate(v) for k, v in repeats.items()}


def cell_rate(r, size):
    """Mpps at small frames, Gbit/s at large ones: median [min-max] over the repeats."""
    if not r:
        return "-"
    unit = "gbps" if size >= 512 else "mpps"
    text = f"{r[unit]:.1f}"
    if r["repeats"] > 1:
        text += f" [{r[unit + '_min']:.1f}-{r[unit + '_max']:.1f}]"
    return text + ("" if r["ok"] else " (acct!)")


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
    repeats = sorted({r["repeats"] for r in runs.values()})
    print("Input rate taken by the chain, per policy: Mpps at 64-511 B, Gbit/s from 512 B; each "
          "run's steady rate (the median per-second rate over its second half), median [min-max] "
          f"over {'/'.join(map(str, repeats))} runs; gnet's ratio to the others' medians")
    head = f"{'chain':<6}{'size':>6}" + "".join(f"{p:>22}" for p in policies)
    head += "".join(f"{'gnet/' + p:>14}" for p in policies if p != "gnet")
    print(head)
    for c in chains:
        for s in sizes:
            row = f"{c:<6}{s:>6}"
            for p in policies:
                row += f"{cell_rate(runs.get((c, s, p)), s):>22}"
            g = runs.get((c, s, "gnet"))
            for p in policies:
                if p == "gnet":
                    continue
                r = runs.get((c, s, p))
                row += f"{(g['mpps'] / r['mpps']) if g and r and r['mpps'] else float('nan'):>14.2f}"
            print(row)
    print("\nLatency rx->tx (us): p50 / p99 per policy")
    for c in chains:
        for s in sizes:
            row = f"{c:<6}{s:>6}"
            for p in policies:
                r = runs.get((c, s, p))
                row += f"{cell_latency(r):>20}"
            print(row)
    print("\nScheduler allocation at the end of the median gnet run (a re-plan as the run stops "
          "may show there)")
    for c in chains:
        for s in sizes:
            for p in ("gnetsteps", "gnet"):
                r = runs.get((c, s, p))
                if r:
                    kept = r["last_kept"]
                    trials = (f"; last trial kept the whole GPU in {kept.count('whole_gpu')} of "
                              f"{len(kept)} runs") if kept else ""
                    print(f"{c} {s}{' (' + p + ')' if p != 'gnet' else ''}: {r['sched']}{trials}")
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
