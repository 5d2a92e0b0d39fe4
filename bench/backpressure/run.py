#!/usr/bin/env python3
"""Simmer's experiments (ICPP'22, Figures 6, 7, 9, 10) with our NFs on the GPU backend.

Chains share the GPU the way vGPU time-slices it (scheduler: temporal) inside a restricted
slice of the GPU (settings.gpu_sms, as Simmer's MIG slices), so a chain's capacity is low enough
for one generator thread to overload it. For each chain:
  1. capacity: a generator at full speed (it waits when the chain is full: no loss);
  2. a live source (frames arrive on schedule, its receive ring overflows when not polled) at
     1.0x, 1.5x and 2x that capacity, backpressure off (bounded NF queues: losses inside the
     chain) and on (qt = 2.8), and a qt sweep 2.0..4.0 at 2x;
Goodput = packets transmitted per second. Prints tables and writes every report.

usage: run.py BIN_DIR OUT_DIR [--seconds 3] [--size 512] [--sms 16] [--quick]"""
import argparse
import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"

NF = {
    "router": f"""  - name: {{name}}
    type: router
    routes: {{{{file: {DATA}/router/bart_fulltable_ipv4_prefixes.txt.gz, spread: [p1, p2]}}}}
""",
    "ipsec": """  - name: {name}
    type: ipsec
    direction: outbound
    iv_epoch: 1
    sas:
      - spi: 0x00002001
        enc_key: 0b5e1c2d3a4f5061728394a5b6c7d8e9c0ffee11
        auth_key: 1f2e3d4c5b6a79880716253443526170a1b2c3d4
        local: 198.51.100.1
        remote: 1.1.1.1
        match: 0.0.0.0/0
""",
    "nids": f"""  - name: {{name}}
    type: nids
    rules:
      - {DATA}/nids/et_open_2024-04-21/emerging-web_server.rules.gz
      - {DATA}/nids/et_open_2024-04-21/emerging-user_agents.rules.gz
      - {DATA}/nids/et_open_2024-04-21/emerging-policy.rules.gz
    action: alert
""",
}

CHAINS = {
    # name: (NFs as (name, type), extra chain keys)
    "hetero": ([("router", "router"), ("ipsec", "ipsec"), ("nids", "nids")], ""),
    "homo": ([("ipsec1", "ipsec"), ("ipsec2", "ipsec"), ("ipsec3", "ipsec")], ""),
    # Dynamic chain (Simmer 4.5): about half the traffic (destinations in 128/1) skips the router.
    "dynamic": ([("router", "router"), ("ipsec", "ipsec"), ("nids", "nids")],
                ", routes: [{dst: 128.0.0.0/1, at: ingress, next: ipsec}]"),
}


def config(chain, size, sms, rate, live, bp, qt, seconds):
    nfs, extra = CHAINS[chain]
    dst = ", dst_from: router" if any(t == "router" for _, t in nfs) else ""
    gen = (f"{{name: gen, type: generator, rate: {rate}, size: {size}, flows: 4096, "
           f"duration: {seconds}{dst}" + (", live: true, ring: 8192}" if live else "}"))
    body = "".join(NF[t].format(name=n) for n, t in nfs)
    return f"""ports:
  - {gen}
  - {{name: p1, type: discard}}
  - {{name: p2, type: discard}}
nfs:
{body}chains:
  - {{name: {chain}, from: gen, to: p1, path: [{', '.join(n for n, _ in nfs)}], backpressure: {'on' if bp else 'off'}, qt: {qt}{extra}}}
settings: {{batch_size: 1024, batches: 128, queue_batches: 16, scheduler: temporal, gpu_sms: {sms}}}
"""


def run(bin_dir, out, name, text, seconds):
    cfg = out / "configs" / f"{name}.yaml"
    cfg.write_text(text)
    rep = out / "reports" / f"{name}.json"
    p = subprocess.run([str(bin_dir / "gpunfv"), "run", str(cfg), "--backend", "gpu", "-q",
                        "--report", str(rep)], capture_output=True, text=True,
                       timeout=seconds + 120)
    (out / "logs" / f"{name}.txt").write_text(p.stdout + p.stderr)
    if not rep.exists():
        print(f"{name}: no report (exit {p.returncode}): {p.stderr[-300:]}")
        return None
    j = json.loads(rep.read_text())
    t = j["elapsed_s"]
    inside = sum(n["drops"].get("nf_queue_full", 0) for n in j["nfs"].values())
    door = sum(p.get("drops", {}).get("ingress_backpressure", 0) for p in j["ports"].values())
    stages = j["chains"][0]["stages"]
    return {"name": name, "rx_mpps": j["totals"]["rx_packets"] / t / 1e6,
            "goodput_mpps": j["totals"]["tx_packets"] / t / 1e6, "inside": inside, "door": door,
            "ok": j["accounting_ok"], "launches": {s["nf"]: s["launches"] for s in stages if s["nf"]},
            "slowed": {s["nf"]: round(s["slowed_s"], 2) for s in stages if s["nf"]},
            "p99_us": j["latency_ns"]["p99"] / 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--sms", type=int, default=16)
    ap.add_argument("--chains", default="hetero,homo,dynamic")
    ap.add_argument("--quick", action="store_true", help="hetero chain only, no qt sweep")
    a = ap.parse_args()
    bin_dir, out = Path(a.bin).resolve(), Path(a.out).resolve()
    for d in ("configs", "reports", "logs"):
        (out / d).mkdir(parents=True, exist_ok=True)
    rows = []
    chains = ["hetero"] if a.quick else a.chains.split(",")
    for chain in chains:
        cap = run(bin_dir, out, f"{chain}-capacity",
                  config(chain, a.size, a.sms, 0, False, True, 2.8, a.seconds), a.seconds)
        if not cap:
            continue
        c = cap["goodput_mpps"]
        if c <= 0:
            print(f"{chain}: no capacity measured (nothing transmitted): see {out}/logs/{chain}-capacity.txt")
            continue
        print(f"\n{chain}: capacity {c:.2f} Mpps at {a.size} B on {a.sms} SMs (temporal sharing)")
        cases = [(load, bp, 2.8) for load in (1.0, 1.5, 2.0) for bp in (False, True)]
        if not a.quick and chain == "hetero":
            cases += [(2.0, True, qt) for qt in (2.0, 2.4, 3.2, 3.6, 4.0)]
        for load, bp, qt in cases:
            rate = f"{c * load * 1e6:.0f}pps"
            name = f"{chain}-x{load}-bp{'on' if bp else 'off'}-qt{qt}"
            r = run(bin_dir, out, name, config(chain, a.size, a.sms, rate, True, bp, qt, a.seconds),
                    a.seconds)
            if r:
                r.update(chain=chain, load=load, bp=bp, qt=qt, capacity=c)
                rows.append(r)
    print(f"\n{'chain':<8}{'load':>5}{'bp':>4}{'qt':>5}{'offered':>9}{'goodput':>9}{'vs off':>8}"
          f"{'inside':>10}{'at door':>10}{'p99 us':>9}  launches / slowed s")
    for r in rows:
        off = next((x for x in rows if x["chain"] == r["chain"] and x["load"] == r["load"]
                    and not x["bp"]), None)
        ratio = r["goodput_mpps"] / off["goodput_mpps"] if off and off["goodput_mpps"] else float("nan")
        print(f"{r['chain']:<8}{r['load']:>5}{'on' if r['bp'] else 'off':>4}{r['qt']:>5}"
              f"{r['rx_mpps']:>9.2f}{r['goodput_mpps']:>9.2f}{ratio:>8.2f}{r['inside']:>10}"
              f"{r['door']:>10}{r['p99_us']:>9.0f}  {r['launches']} {r['slowed']}"
              + ("" if r["ok"] else "  ACCOUNTING!"))
    (out / "summary.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
