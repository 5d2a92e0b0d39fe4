#!/usr/bin/env python3
"""Two tenants on one GPU with different latency bounds: S_d (firewall, IPsec, NIDS, router) as
the heavy chain and a router alone as the light one with a tight bound, each fed by its own
live generator. The heavy chain's offered load sweeps a share of its capacity while the light
chain carries a fixed rate; per policy and load, each chain's delivered rate, loss, rx-to-tx
p50/p99/p999 and whether p99 kept its bound; with --repeats R each chain's row is its median
run (by p99) with min and max over the runs. Writes results.json and table.md into OUT.

usage: bench/latency/two_chains.py BIN_DIR OUT [--policies unco,fused,persistent,fair,temporal,gnet]
           [--heavy-capacity 77.0] [--loads 10,50,80] [--light-mpps 10] [--seconds 2]
           [--bound-us heavy=500,light=200] [--batch 8192] [--model FILE] [--repeats 1]
`fused` is unco with gpu_pipeline: fused; `persistent` unco with gpu_pipeline: persistent (the light
router chain served by a persistent kernel, S_d issued as fused); `gnet-fused` and
`gnet-persistent` gnet with that pipeline (one SM partition per chain). gnet needs a performance
model (`gpunfv profile`; --model, or OUT/model.json)."""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sweep  # noqa: E402  (the single-chain sweep: its configurations and report reading)

make_configs = sweep.make_configs


def two_chain_config(policy, args, heavy_pps, model):
    """S_d's configuration with a second generator and router as the light chain."""
    b = args.bounds
    text = make_configs.config("sd", 64, policy, model, args.batch,
                               extra=f", latency_bound_us: {b['heavy']}", queues=8)
    text = text.replace(str(sweep.FULL_TABLE), str(sweep.routes_with_bench_range(args.out)))
    text = text.replace("rate: 0, ", f"rate: {heavy_pps:.0f}pps, live: true, ")
    text = text.replace("ports:\n", "ports:\n  - {name: gen2, type: generator, "
                        f"rate: {args.light_mpps * 1e6:.0f}pps, live: true, size: 64, "
                        "flows: 4096, count: 1000000000000, queues: 1, dst_from: router2}\n", 1)
    routes = sweep.routes_with_bench_range(args.out)
    text = text.replace("chains:\n", "  - name: router2\n    type: router\n"
                        f"    routes: {{file: {routes}, spread: [p1, p2, p3, p4]}}\nchains:\n", 1)
    text = text.replace("settings:\n", "  - {name: light, from: gen2, path: [router2], "
                        f"latency_bound_us: {b['light']}}}\nsettings:\n", 1)
    return text


def model_with_light_router(model, out):
    """The light chain's router2 holds the same table as S_d's router: it takes its profile."""
    m = json.loads(Path(model).read_text())
    extra = [dict(e, nf="router2") for e in m["models"] if e.get("nf") == "router"]
    m["models"] = [e for e in m["models"] if e.get("nf") != "router2"] + extra
    path = out / "model-two-chains.json"
    path.write_text(json.dumps(m))
    return path


def chain_row(report, name, offered_pps):
    t = report["elapsed_s"] or 1e-9
    c = next(c for c in report["chains"] if c.get("name") == name)
    lat = c["latency_ns"]
    return {"offered_mpps": offered_pps / 1e6, "delivered_mpps": lat["count"] / t / 1e6,
            "p50_us": lat["p50"] / 1e3, "p99_us": lat["p99"] / 1e3, "p999_us": lat["p999"] / 1e3,
            "bound_us": c["latency_bound_us"], "bound_held": c["bound_held"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--policies", default="unco,fused,fair,temporal,gnet")
    ap.add_argument("--heavy-capacity", type=float, default=77.0, help="S_d's capacity, Mpps")
    ap.add_argument("--loads", default="10,50,80", help="S_d's offered load, %% of its capacity")
    ap.add_argument("--light-mpps", type=float, default=10.0)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--bound-us", default="heavy=500,light=200")
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--backend", default="gpu")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each row (median, min, max)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "configs").mkdir(exist_ok=True)
    (args.out / "reports").mkdir(exist_ok=True)
    args.bounds = {k: float(v) for k, v in (kv.split("=") for kv in args.bound_us.split(","))}
    model = args.model or args.out / "model.json"
    rows = []
    for policy in args.policies.split(","):
        if policy.startswith("gnet") and not model.exists():
            print(f"  gnet: no model at {model} (gpunfv profile); skipped", flush=True)
            continue
        for load in [float(x) for x in args.loads.split(",")]:
            heavy_pps = args.heavy_capacity * 1e6 * load / 100
            name = f"two-{policy}-{load:g}"
            cfg = args.out / "configs" / f"{name}.yaml"
            cfg.write_text(two_chain_config(
                policy, args, heavy_pps,
                str(model_with_light_router(model, args.out)) if policy.startswith("gnet") else ""))
            per_chain = {"sd": [], "light": []}
            for rep_no in range(1, args.repeats + 1):
                suffix = f".r{rep_no}" if args.repeats > 1 else ""
                rep = sweep.run_one(args.bin, cfg, args.out / "reports" / f"{name}{suffix}.json",
                                    args.backend, args.seconds)
                if not rep:
                    continue
                for chain, offered in (("sd", heavy_pps), ("light", args.light_mpps * 1e6)):
                    per_chain[chain].append({"accounting_ok": rep["accounting_ok"],
                                             **chain_row(rep, chain, offered)})
            for chain, runs in per_chain.items():
                if not runs:
                    continue
                r = {"policy": policy, "heavy_load_pct": load, "chain": chain,
                     **sweep.median_row(runs)}
                rows.append(r)
                print(f"  {name:<18} {chain:<6} offered {r['offered_mpps']:7.2f} delivered "
                      f"{r['delivered_mpps']:7.2f} Mpps  p50 {r['p50_us']:8.1f}  p99 {r['p99_us']:8.1f} us"
                      f"  bound {r['bound_us']:g} held {r['bound_held_runs']}/{r['repeats']}", flush=True)
            (args.out / "results.json").write_text(json.dumps({"command": sys.argv, "rows": rows}, indent=1))
    lines = ["| policy | S_d load | chain | offered Mpps | delivered Mpps | p50 us | p99 us | p999 us "
             "| bound us | p99 held |", "|---|---|---|---|---|---|---|---|---|---|"]
    if args.repeats > 1:
        lines[:0] = [f"Each row: the chain's median run of {args.repeats} (by p99), [min-max] over "
                     "the runs; held: runs whose p99 kept the bound.", ""]
    for r in rows:
        held = f"{r['bound_held_runs']}/{r['repeats']}" if args.repeats > 1 else (
            "yes" if r["bound_held"] else "no")
        lines.append(f"| {r['policy']} | {r['heavy_load_pct']:g}% | {r['chain']} | {r['offered_mpps']:.2f} "
                     f"| {sweep.spread(r, 'delivered_mpps', '.2f')} | {sweep.spread(r, 'p50_us', '.1f')} | "
                     f"{sweep.spread(r, 'p99_us', '.1f')} | {sweep.spread(r, 'p999_us', '.1f')} | "
                     f"{r['bound_us']:g} | {held} |")
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
