#!/usr/bin/env python3
"""Latency under partial load: for each chain, its capacity (a generator at full speed under
`unco`), then offered loads from 10% to 100% of it under each GPU sharing policy, the generator
live (frames arrive on their own schedule whether the chain keeps up or not; what it cannot
take is counted as ingress_backpressure). Per row: offered and delivered rate, loss, the
chain's rx-to-tx p50/p99/p999 (batching wait included) and whether p99 kept the chain's
latency bound. With --repeats R every row is run R times and reported as the median run (by
p99) with the repeats' min and max of each figure. Writes results.json (each row also with the
chain's mean batch, the GPU stage's batch times where there are some), table.md and
latency-vs-load.png (where matplotlib is installed) into OUT.

usage: bench/latency/sweep.py BIN_DIR OUT [--backend gpu] [--chains router,sd,fwrouter]
           [--policies unco,fused,fused-graph,persistent,fair,temporal,gnet] [--loads 10,30,50,70,90,100]
           [--seconds 2] [--repeats 1]
           [--size 64] [--queues 8] [--bound-us router=50,sd=500] [--batch 8192]
           [--capacity router=195.9] [--set 'ingress_threads: 1' ...]
`fused` is unco with gpu_pipeline: fused (each batch's whole chain issued at once).
`fused-graph` is fused with gpu_graphs: true (each batch's chain one CUDA graph launch).
`persistent` is unco with gpu_pipeline: persistent (batches of up to 1024 packets served in place
by a persistent kernel per chain, waiting for a slot when every one is taken; larger ones fused).
`gnet-fused` and `gnet-persistent` are gnet with that pipeline (one SM partition per chain).
gnet needs a performance model: OUT/model.json is made with `gpunfv profile` if missing."""
import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "chains"))
import make_configs  # noqa: E402  (the chain evaluation's NF configurations)

make_configs.CHAINS.setdefault("router", ["router"])
make_configs.CHAINS.setdefault("fwrouter", ["fw", "router"])  # a firewall in front of the router
FULL_TABLE = make_configs.DATA / "router" / "bart_fulltable_ipv4_prefixes.txt.gz"
BENCH_RANGE = "198.18.0.0/15"  # RFC 2544's benchmark range: the generator's default destinations


def routes_with_bench_range(out):
    """The full table plus the benchmark range, so chains whose IPsec SAs match that range
    (S_a..S_d) deliver what they pass instead of dropping it at the router as no_route."""
    path = out / "routes-fulltable-and-bench-range.txt"
    if not path.exists():
        with gzip.open(FULL_TABLE, "rt") as f:
            path.write_text(f.read().rstrip("\n") + "\n" + BENCH_RANGE + "\n")
    return path


def chain_config(chain, policy, args, rate, live, model):
    bound = args.bounds.get(chain)
    extra = f", latency_bound_us: {bound}" if bound else ""
    text = make_configs.config(chain, args.size, policy, model, args.batch, extra=extra,
                               queues=args.queues)
    for key_value in args.settings:
        text += f"  {key_value.strip()}\n"
    gen = f"rate: {rate:.0f}pps, live: true, " if live else "rate: 0, "
    if make_configs.CHAINS[chain][-1] == "router" and "ipsec" not in make_configs.CHAINS[chain]:
        gen += "dst_from: router, "  # destinations drawn from the table, as routers see them
    else:
        text = text.replace(str(FULL_TABLE), str(routes_with_bench_range(args.out)))
    return text.replace("rate: 0, ", gen)


def run_one(bin_dir, config_path, report_path, backend, seconds):
    cmd = [str(bin_dir / "gpunfv"), "run", str(config_path), "--backend", backend, "--duration",
           str(seconds), "-q", "--report", str(report_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    if proc.returncode != 0:
        print(f"  {config_path.name}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}", flush=True)
        return None
    return json.loads(report_path.read_text())


def row_of(report, offered_pps):
    t = report["elapsed_s"] or 1e-9
    chain = report["chains"][0]
    lat = chain["latency_ns"]
    rx = report["totals"]["rx_packets"]
    dropped = report["totals"]["dropped"]
    return {"offered_mpps": offered_pps / 1e6 if offered_pps else rx / t / 1e6,
            "delivered_mpps": report["totals"]["tx_packets"] / t / 1e6,
            "loss_pct": 100.0 * dropped / rx if rx else 0.0,
            "p50_us": lat["p50"] / 1e3, "p99_us": lat["p99"] / 1e3, "p999_us": lat["p999"] / 1e3,
            "bound_us": chain["latency_bound_us"], "bound_held": chain["bound_held"],
            "deadline_us": chain["batch_deadline_us"],
            "mean_batch": mean_batch(chain),
            "scheduler": report.get("scheduler", {}).get("line", ""),
            "accounting_ok": report["accounting_ok"], **gpu_issue_of(report)}


def mean_batch(chain):
    """Packets per batch entering the chain (its first stage's batches), 0 if none came."""
    stages = chain.get("stages") or [{}]
    batches = stages[0].get("batches", 0)
    return stages[0].get("packets", 0) / batches if batches else 0.0


SPREAD = ("delivered_mpps", "loss_pct", "p50_us", "p99_us", "p999_us")


def median_row(rows):
    """One row from a cell's repeats: the run with the median p99 stands for the cell; each
    figure in SPREAD also gets its min and max over the repeats, and bound_held_runs counts the
    repeats whose p99 kept the bound."""
    ordered = sorted(rows, key=lambda r: r["p99_us"])
    row = dict(ordered[(len(ordered) - 1) // 2])
    row["repeats"] = len(rows)
    row["bound_held_runs"] = sum(bool(r["bound_held"]) for r in rows)
    row["accounting_ok"] = all(r["accounting_ok"] for r in rows)
    for key in (k for k in SPREAD if k in row):
        values = [r[key] for r in rows]
        row[key + "_min"], row[key + "_max"] = min(values), max(values)
    return row


def run_repeated(args, config_path, name, offered_pps):
    """The cell's repeats, reports NAME.rN.json (NAME.json when it runs once); None if none ran."""
    rows = []
    for rep in range(1, args.repeats + 1):
        report_name = f"{name}.r{rep}.json" if args.repeats > 1 else f"{name}.json"
        rep_json = run_one(args.bin, config_path, args.out / "reports" / report_name, args.backend,
                           args.seconds)
        if rep_json:
            rows.append(row_of(rep_json, offered_pps))
    return median_row(rows) if rows else None


def gpu_issue_of(report):
    """GPU backend: the chain's mean batch time waiting for the stage and on the GPU, and how
    the fused pipeline's CUDA graphs carried its batches (fused-graph): what to compare fused
    and fused-graph by, beside the latency."""
    sched = report.get("scheduler", {})
    out = {}
    times = sched.get("batch_time_us") or []
    if times:
        out["batch_waiting_us"], out["batch_on_gpu_us"] = times[0]["waiting"], times[0]["on_gpu"]
    if "gpu_graphs" in sched:
        out["gpu_graphs"] = sched["gpu_graphs"]
    pcie = sched.get("pcie") or {}
    if pcie:  # in place (zero copy: fused or the persistent kernel) against copied both ways
        out["zero_copy_batches"] = pcie.get("zero_copy_batches", 0)
        out["persistent_batches"] = pcie.get("persistent_batches", 0)
        out["copied_batches"] = pcie.get("host_batches", 0)
    return out


def ensure_model(args, out):
    model = out / "model.json"
    if model.exists() or not any(p.startswith("gnet") for p in args.policies):
        return model
    profile_yaml = out / "configs" / "profile.yaml"
    profile_yaml.write_text(make_configs.config("sd", args.size, "unco", "", args.batch))
    print("== gpunfv profile (the NFs' performance model, for gnet)", flush=True)
    with open(out / "profile.txt", "w") as log:
        subprocess.run([str(args.bin / "gpunfv"), "profile", str(profile_yaml), "--sizes",
                        str(args.size), "--out", str(model)], stdout=log, stderr=subprocess.STDOUT,
                       timeout=600)
    return model


def save(out, rows):
    """Every row so far: a run cut short still leaves what it measured."""
    (out / "results.json").write_text(json.dumps({"command": sys.argv, "rows": rows}, indent=1))


def sweep(args, out):
    rows = []
    model = ensure_model(args, out)
    for chain in args.chains:
        if chain in args.capacity:
            capacity = float(args.capacity[chain]) * 1e6
            print(f"== {chain}: capacity {capacity / 1e6:.2f} Mpps as given", flush=True)
        else:
            cap_yaml = out / "configs" / f"{chain}-capacity.yaml"
            cap_yaml.write_text(chain_config(chain, "unco", args, 0, False, ""))
            cap = run_repeated(args, cap_yaml, f"{chain}-capacity", 0)
            if not cap:
                continue
            capacity = cap["delivered_mpps"] * 1e6  # the median run's
            print(f"== {chain}: capacity {capacity / 1e6:.2f} Mpps under unco", flush=True)
            rows.append({"chain": chain, "policy": "unco", "load_pct": None, **cap})
        for policy in args.policies:
            for load in args.loads:
                rate = capacity * load / 100
                name = f"{chain}-{policy}-{load}"
                yaml_path = out / "configs" / f"{name}.yaml"
                yaml_path.write_text(chain_config(chain, policy, args, rate, True,
                                                  model if policy.startswith("gnet") else ""))
                cell = run_repeated(args, yaml_path, name, rate)
                if not cell:
                    continue
                r = {"chain": chain, "policy": policy, "load_pct": load, **cell}
                rows.append(r)
                save(out, rows)
                print(f"  {name:<20} offered {r['offered_mpps']:8.2f} delivered {r['delivered_mpps']:8.2f} Mpps "
                      f"loss {r['loss_pct']:5.1f}%  p50 {r['p50_us']:9.1f}  p99 {r['p99_us']:9.1f}  "
                      f"p999 {r['p999_us']:9.1f} us  bound {r['bound_us']:g} "
                      f"{'held' if r['bound_held'] else 'MISSED'}", flush=True)
    return rows


def spread(r, key, fmt):
    """`median` or, for repeated rows, `median [min-max]`."""
    text = format(r[key], fmt)
    if r.get("repeats", 1) > 1:
        text += f" [{format(r[key + '_min'], fmt)}-{format(r[key + '_max'], fmt)}]"
    return text


def table(rows):
    repeats = max((r.get("repeats", 1) for r in rows), default=1)
    lines = []
    if repeats > 1:
        lines += [f"Each row: the median run of {repeats} (by p99), [min-max] over the runs; "
                  "held: runs whose p99 kept the bound.", ""]
    lines += ["| chain | policy | load | offered Mpps | delivered Mpps | loss % | p50 us | p99 us | "
              "p999 us | bound us | p99 held |", "|" + "---|" * 11]
    for r in rows:
        load = "capacity" if r["load_pct"] is None else f"{r['load_pct']}%"
        held = "yes" if r["bound_held"] else "no"
        if r.get("repeats", 1) > 1:
            held = f"{r['bound_held_runs']}/{r['repeats']}"
        lines.append(f"| {r['chain']} | {r['policy']} | {load} | {r['offered_mpps']:.2f} | "
                     f"{spread(r, 'delivered_mpps', '.2f')} | {spread(r, 'loss_pct', '.2f')} | "
                     f"{spread(r, 'p50_us', '.1f')} | {spread(r, 'p99_us', '.1f')} | "
                     f"{spread(r, 'p999_us', '.1f')} | {r['bound_us']:g} | {held} |")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (results.json holds every row)")
        return
    chains = sorted({r["chain"] for r in rows})
    fig, axes = plt.subplots(1, len(chains), figsize=(6 * len(chains), 4.5), squeeze=False)
    for ax, chain in zip(axes[0], chains):
        for policy in sorted({r["policy"] for r in rows if r["chain"] == chain}):
            pts = sorted((r["load_pct"], r["p99_us"], r["p50_us"], r.get("p99_us_min", r["p99_us"]),
                          r.get("p99_us_max", r["p99_us"])) for r in rows
                         if r["chain"] == chain and r["policy"] == policy and r["load_pct"] is not None)
            if pts:
                # whiskers: the repeats' min and max p99 around the median run's
                line = ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                                   yerr=[[p[1] - p[3] for p in pts], [p[4] - p[1] for p in pts]],
                                   marker="o", capsize=3, label=f"{policy} p99").lines[0]
                ax.plot([p[0] for p in pts], [p[2] for p in pts], marker=".", linestyle=":",
                        color=line.get_color(), label=f"{policy} p50")
        bounds = {r["bound_us"] for r in rows if r["chain"] == chain}
        for b in bounds:
            ax.axhline(b, color="grey", linestyle="--", linewidth=1)
        ax.set_yscale("log")
        ax.set_xlabel("offered load, % of capacity under unco")
        ax.set_ylabel("rx-to-tx latency, us (solid p99, dotted p50)")
        ax.set_title(f"{chain}: latency vs load (dashed: bound)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin", type=Path, help="folder holding the gpunfv binary")
    ap.add_argument("out", type=Path)
    ap.add_argument("--backend", default="gpu", choices=["gpu", "cpu"])
    ap.add_argument("--chains", default="router,sd")
    ap.add_argument("--policies", default="unco,fair,temporal,gnet")
    ap.add_argument("--loads", default="10,30,50,70,90,100")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--repeats", type=int, default=1, help="runs of each row (median, min, max)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--queues", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--bound-us", default="", help="per chain latency bound, e.g. router=50,sd=500")
    ap.add_argument("--capacity", default="", help="per chain capacity in Mpps, measured earlier "
                    "(skips the capacity run), e.g. router=195.9")
    ap.add_argument("--set", dest="settings", action="append", default=[],
                    help="a settings line for every run, e.g. --set 'ingress_threads: 1'")
    args = ap.parse_args()
    args.bin = args.bin.resolve()
    args.chains = args.chains.split(",")
    args.policies = args.policies.split(",")
    args.loads = [float(x) if "." in x else int(x) for x in args.loads.split(",")]
    args.bounds = dict(kv.split("=") for kv in args.bound_us.split(",") if kv)
    args.capacity = dict(kv.split("=") for kv in args.capacity.split(",") if kv)
    out = args.out = args.out.resolve()
    (out / "configs").mkdir(parents=True, exist_ok=True)
    (out / "reports").mkdir(parents=True, exist_ok=True)
    started = time.time()
    rows = sweep(args, out)
    save(out, rows)
    text = table(rows)
    (out / "table.md").write_text(text)
    print(text)
    plot(rows, out / "latency-vs-load.png")
    print(f"{len(rows)} rows in {time.time() - started:.0f} s; {out}")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
