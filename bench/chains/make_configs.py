#!/usr/bin/env python3
"""Writes the chain configurations of the G-NET evaluation shape (section 7) with our NFs:
S_a IPsec+NIDS, S_b FW+IPsec+NIDS, S_c IPsec+NIDS+Router, S_d FW+IPsec+NIDS+Router, for each
packet size and GPU sharing policy, fed by a generator at full speed for a fixed time.

usage: make_configs.py OUT_DIR [--sizes 64,512,1518] [--policies temporal,fair,unco,gnet]
                       [--model MODEL.json] [--batch 8192] [--queues 8]
--queues: the generator's rx queues, each filled by its own ingress thread (one per core to
spare: ingress is what limited the single-thread runs at 512 and 1518 bytes).
Paths inside the configurations are absolute (the repository's data/)."""
import argparse
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"

NF_YAML = {
    "fw": f"""  - name: fw
    type: firewall
    rules: {DATA}/firewall/classbench_neurocuts/acl1_1k
    action: accept
    default: accept
""",
    "ipsec": """  - name: ipsec
    type: ipsec
    direction: outbound
    iv_epoch: 1
    sas:
      - spi: 0x00002001
        enc_key: 0b5e1c2d3a4f5061728394a5b6c7d8e9c0ffee11
        auth_key: 1f2e3d4c5b6a79880716253443526170a1b2c3d4
        local: 198.51.100.1
        remote: 1.1.1.1
        match: 198.18.0.0/16
      - spi: 0x00002002
        enc_key: 7d6c5b4a392817f6e5d4c3b2a1908f7ec0ffee12
        auth_key: 2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d
        local: 198.51.100.1
        remote: 1.0.0.1
        match: 198.19.0.0/16
""",
    "nids": f"""  - name: nids
    type: nids
    rules:
      - {DATA}/nids/et_open_2024-04-21/emerging-web_server.rules.gz
      - {DATA}/nids/et_open_2024-04-21/emerging-user_agents.rules.gz
      - {DATA}/nids/et_open_2024-04-21/emerging-policy.rules.gz
    action: alert
""",
    "router": f"""  - name: router
    type: router
    routes: {{file: {DATA}/router/bart_fulltable_ipv4_prefixes.txt.gz, spread: [p1, p2, p3, p4]}}
""",
}

CHAINS = {
    "sa": ["ipsec", "nids"],
    "sb": ["fw", "ipsec", "nids"],
    "sc": ["ipsec", "nids", "router"],
    "sd": ["fw", "ipsec", "nids", "router"],
}


def config(chain, size, policy, model, batch, extra="", queues=1, egress_threads=0):
    nfs = CHAINS[chain]
    to = "" if "router" in nfs else ", to: p1"
    s = f"""# {chain.upper()}: {' + '.join(nfs)}, {size}-byte frames, scheduler {policy}
ports:
  - {{name: gen, type: generator, rate: 0, size: {size}, flows: 65536, count: 1000000000000, queues: {queues}}}
  - {{name: p1, type: discard}}
  - {{name: p2, type: discard}}
  - {{name: p3, type: discard}}
  - {{name: p4, type: discard}}
nfs:
""" + "".join(NF_YAML[n] for n in nfs) + f"""chains:
  - {{name: {chain}, from: gen, path: [{', '.join(nfs)}]{to}{extra}}}
settings:
  batch_size: {batch}
  batches: 64
  scheduler: {policy}
"""
    if policy == "gnetsteps":  # gnet on G-NET's partition steps only (no remainder fold)
        s = s.replace("scheduler: gnetsteps", "scheduler: gnet\n  sched_fold_remainder: false")
    if policy == "fused":  # unco with each batch's whole chain issued at once (gpu_pipeline)
        s = s.replace("scheduler: fused", "scheduler: unco\n  gpu_pipeline: fused")
    if policy == "fused-graph":  # fused, each batch's chain one CUDA graph launch (gpu_graphs)
        s = s.replace("scheduler: fused-graph", "scheduler: unco\n  gpu_pipeline: fused\n  gpu_graphs: true")
    if policy == "persistent":  # unco, small batches served by a persistent kernel per chain
        s = s.replace("scheduler: persistent", "scheduler: unco\n  gpu_pipeline: persistent")
    for pipeline in ("fused", "persistent"):  # gnet with one SM partition per chain
        if policy == f"gnet-{pipeline}":
            s = s.replace(f"scheduler: {policy}", f"scheduler: gnet\n  gpu_pipeline: {pipeline}")
    if policy.startswith("gnet") and model:
        s += f"  model: {Path(model).resolve()}\n"
    if egress_threads:
        s += f"  egress_threads_per_chain: {egress_threads}\n"
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sizes", default="64,128,256,512,1024,1518")
    ap.add_argument("--policies", default="temporal,fair,unco,gnet")
    ap.add_argument("--chains", default="sa,sb,sc,sd")
    ap.add_argument("--model", default="")
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--queues", type=int, default=1)
    ap.add_argument("--egress-threads", type=int, default=0,
                    help="settings.egress_threads_per_chain (0: the runtime's default)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for chain in a.chains.split(","):
        for size in a.sizes.split(","):
            for policy in a.policies.split(","):
                (out / f"{chain}-{size}-{policy}.yaml").write_text(
                    config(chain, int(size), policy, a.model, a.batch, queues=a.queues,
                           egress_threads=a.egress_threads))
    # One configuration holding every NF, for `gpunfv profile`.
    (out / "profile.yaml").write_text(config("sd", 64, "unco", "", a.batch))


if __name__ == "__main__":
    main()
