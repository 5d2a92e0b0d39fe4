#!/usr/bin/env python3
"""Soak: a chain held at twice its capacity, with backpressure on, for a long run; the gpunfv
process's memory and file descriptors must stay flat and its accounting exact.

  scripts/soak.py [--bin build/gpunfv] [--backend cpu|gpu] [--duration 600] [--out DIR]

1. Capacity: the chain (firewall -> IPsec -> NIDS -> router, as examples/chain-fw-ipsec-nids-
   router.yaml) fed by an unpaced generator that waits for it (not live) for --capacity-seconds;
   capacity = transmitted packets / elapsed.
2. Soak: the same chain with `backpressure: on`, fed by a live generator at --overload x capacity
   for --duration seconds. Every --interval seconds the process's VmRSS (/proc/PID/status), open
   file descriptors (/proc/PID/fd) and threads are written to samples.csv.
3. Verdict (verdict.json, README.md): after the warm-up (the first 15%, at most 60 s) the samples
   are cut in thirds; RSS is flat when the last third's maximum is within --rss-margin-pct
   (at least 2 MiB) of the first third's maximum; descriptors and threads are flat when the last
   third's maximum is no higher than the first third's; the report's accounting is exact
   (accounting_ok, rx = tx + dropped in total and per port, each NF's in = out + drops). Exit 0
   when all hold, 1 otherwise.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024


def chain_config(generator: dict, data: Path) -> str:
    gen = ", ".join(f"{k}: {v}" for k, v in generator.items())
    d = data.resolve()
    return f"""\
ports:
  - {{name: gen, type: generator, {gen}}}
  - {{name: p1, type: discard}}
  - {{name: p2, type: discard}}
nfs:
  - {{name: fw, type: firewall, rules: {d}/firewall/example.rules, action: drop, default: accept}}
  - name: esp
    type: ipsec
    direction: outbound
    sas:
      - {{spi: 0x00003001, enc_key: 4a0e7ef1c6b2d9a0135f7e8c2b91d4a6c0ffee01, auth_key: 7f3c9a2e5b8d1f4a6c0e2b9d8f7a1c3e5b2d4f60, local: 192.168.1.1, remote: 10.52.0.1, match: 200.57.7.0/24}}
      - {{spi: 0x00003002, enc_key: 91b3d5f7092b4d6f8193a5c7e9fb1d3fc0ffee02, auth_key: 0d1c2b3a49586776859a4b3c2d1e0f1a2b3c4d5e, local: 192.168.1.1, remote: 10.1.0.1, match: 0.0.0.0/0}}
  - {{name: ids, type: nids, rules: [{d}/nids/et_open_2024-04-21/emerging-voip.rules.gz, {d}/nids/et_open_2024-04-21/emerging-policy.rules.gz], action: alert}}
  - {{name: r1, type: router, routes: {d}/router/example.routes}}
chains:
  - {{name: sd, from: gen, path: [fw, esp, ids, r1], backpressure: on}}
"""


def run_report(cmd: list[str], report: Path, timeout: float) -> dict:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"soak: {' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return json.loads(report.read_text())


def proc_sample(pid: int) -> tuple[int, int, int] | None:
    """(VmRSS KiB, open fds, threads) of a live process, None once it is gone."""
    try:
        rss = threads = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds, threads
    except (FileNotFoundError, ProcessLookupError):
        return None


def accounting_problems(report: dict) -> list[str]:
    problems = []
    if report.get("accounting_ok") is not True:
        problems.append("accounting_ok is not true")
    t = report["totals"]
    if t["rx_packets"] != t["tx_packets"] + t["dropped"]:
        problems.append(f"totals: rx {t['rx_packets']} != tx {t['tx_packets']} + dropped {t['dropped']}")
    for name, p in report["ports"].items():
        if p["rx_packets"] != p["forwarded"] + p["dropped"]:
            problems.append(f"port {name}: rx != forwarded + dropped ({p})")
        if p["dropped"] != sum(p["drops"].values()):
            problems.append(f"port {name}: dropped != sum of drop reasons ({p})")
    if sum(p["forwarded"] for p in report["ports"].values()) != t["tx_packets"]:
        problems.append("sum of forwarded != tx")
    for name, n in report["nfs"].items():
        if n["in"] != n["out"] + sum(n["drops"].values()):
            problems.append(f"nf {name}: in != out + drops ({n})")
    return problems


def flat(values: list[int], margin: float) -> tuple[bool, int, int]:
    """(last third's max <= first third's max + margin, first max, last max)."""
    third = max(1, len(values) // 3)
    first, last = max(values[:third]), max(values[-third:])
    return last <= first + margin, first, last


def svg_plot(rows: list[dict], path: Path) -> None:
    """RSS (MiB) and fds over time as a small dependency-free SVG."""
    w, h, pad = 720, 300, 50
    t = [r["t_s"] for r in rows]
    series = [("RSS MiB", [r["rss_kib"] / 1024 for r in rows], "#1f77b4"),
              ("open fds", [r["fds"] for r in rows], "#d62728")]
    tmax = max(t) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h * 2}" font-family="sans-serif" font-size="12">']
    for i, (label, ys, colour) in enumerate(series):
        y0 = i * h
        lo, hi = 0, max(ys) * 1.1 or 1
        pts = " ".join(f"{pad + (x / tmax) * (w - 2 * pad):.1f},{y0 + h - pad - (y - lo) / (hi - lo) * (h - 2 * pad):.1f}"
                       for x, y in zip(t, ys))
        parts += [f'<rect x="{pad}" y="{y0 + pad}" width="{w - 2 * pad}" height="{h - 2 * pad}" fill="none" stroke="#999"/>',
                  f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>',
                  f'<text x="{pad}" y="{y0 + pad - 8}">{label} (0 .. {hi:.0f}) over {tmax:.0f} s; min {min(ys):.1f}, max {max(ys):.1f}</text>']
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(REPO / "build" / "gpunfv"), help="the gpunfv binary")
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--duration", type=float, default=600, help="soak seconds (default 600)")
    ap.add_argument("--capacity-seconds", type=float, default=5)
    ap.add_argument("--overload", type=float, default=2.0, help="offered rate / capacity")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    ap.add_argument("--size", type=int, default=512, help="frame bytes")
    ap.add_argument("--rss-margin-pct", type=float, default=2.0)
    ap.add_argument("--out", default=None, help="default out/soak-<backend>-<date>")
    args = ap.parse_args()

    binary = Path(args.bin).resolve()
    out = Path(args.out or REPO / "out" / f"soak-{args.backend}-{datetime.date.today()}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    backend = ["--backend", args.backend]

    # 1. capacity
    cap_cfg = out / "capacity.yaml"
    cap_cfg.write_text(chain_config({"rate": 0, "size": args.size, "flows": 4096,
                                     "duration": args.capacity_seconds}, REPO / "data"))
    cap_report = run_report([str(binary), "run", str(cap_cfg), "--report", str(out / "capacity.json"),
                             "-q", *backend], out / "capacity.json", timeout=args.capacity_seconds * 20 + 120)
    capacity_pps = cap_report["totals"]["tx_packets"] / cap_report["elapsed_s"]
    rate_pps = int(capacity_pps * args.overload)
    print(f"soak: capacity {capacity_pps / 1e3:.1f} kpps ({args.backend}), offering {rate_pps / 1e3:.1f} kpps "
          f"live for {args.duration:.0f} s", flush=True)

    # 2. soak
    cfg = out / "soak.yaml"
    cfg.write_text(chain_config({"rate": f"{rate_pps}pps", "size": args.size, "flows": 4096,
                                 "duration": args.duration, "live": "true"}, REPO / "data"))
    report_path = out / "report.json"
    cmd = [str(binary), "run", str(cfg), "--report", str(report_path), "-q", *backend]
    started = time.monotonic()
    with open(out / "gpunfv.log", "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        rows = []
        while proc.poll() is None:
            s = proc_sample(proc.pid)
            if s is not None and proc.poll() is None:
                rows.append({"t_s": round(time.monotonic() - started, 2), "rss_kib": s[0], "fds": s[1],
                             "threads": s[2]})
            try:
                proc.wait(timeout=args.interval)
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() - started > args.duration * 1.5 + 120:
                proc.kill()
                proc.wait()
                print("soak: gpunfv did not stop; killed", file=sys.stderr)
    with open(out / "samples.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=["t_s", "rss_kib", "fds", "threads"])
        wr.writeheader()
        wr.writerows(rows)

    # 3. verdict
    checks: dict[str, dict] = {}
    checks["exit"] = {"ok": proc.returncode == 0, "code": proc.returncode}
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    if report is not None:
        problems = accounting_problems(report)
        checks["accounting"] = {"ok": not problems, "problems": problems}
    else:
        checks["accounting"] = {"ok": False, "problems": ["no report written"]}
    warmup = min(60.0, 0.15 * args.duration)
    steady = [r for r in rows if r["t_s"] >= warmup]
    if len(steady) >= 3:
        rss = [r["rss_kib"] for r in steady]
        margin = max(max(rss[:max(1, len(rss) // 3)]) * args.rss_margin_pct / 100, 2 * 1024)
        ok, first, last = flat(rss, margin)
        checks["rss_flat"] = {"ok": ok, "first_third_max_kib": first, "last_third_max_kib": last,
                              "margin_kib": round(margin)}
        for key in ("fds", "threads"):
            ok, first, last = flat([r[key] for r in steady], 0)
            checks[f"{key}_flat"] = {"ok": ok, "first_third_max": first, "last_third_max": last}
    else:
        checks["samples"] = {"ok": False, "problems": [f"only {len(steady)} samples after {warmup:.0f} s warm-up"]}
    verdict = all(c["ok"] for c in checks.values())
    version = subprocess.run([str(binary), "version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    summary = {"verdict": "pass" if verdict else "fail", "backend": args.backend, "binary": str(binary),
               "version": version, "tree": commit, "host_cores": os.cpu_count(),
               "duration_s": args.duration, "capacity_pps": round(capacity_pps), "offered_pps": rate_pps,
               "overload": args.overload, "frame_bytes": args.size, "warmup_s": warmup,
               "samples": len(rows), "checks": checks}
    if report is not None:
        t = report["totals"]
        gen = report["ports"]["gen"]
        summary.update({"rx_packets": t["rx_packets"], "tx_packets": t["tx_packets"], "dropped": t["dropped"],
                        "delivered_pps": round(t["tx_packets"] / report["elapsed_s"]),
                        "drops": gen["drops"], "nf_drops": {n: v["drops"] for n, v in report["nfs"].items()}})
    (out / "verdict.json").write_text(json.dumps(summary, indent=2) + "\n")
    if rows:
        svg_plot(rows, out / "samples.svg")
    command = "scripts/soak.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [f"# Soak, {args.backend} backend, {datetime.date.today()}", "",
             f"Command: `{command}` ({version}; tree {commit}; {os.cpu_count()} cores)", "",
             f"Chain: firewall -> IPsec (outbound) -> NIDS -> router, `backpressure: on`, {args.size} B "
             f"frames from a live generator at {args.overload:g}x the measured capacity "
             f"({capacity_pps / 1e3:.1f} kpps measured, {rate_pps / 1e3:.1f} kpps offered) for "
             f"{args.duration:.0f} s; VmRSS, open fds and threads sampled every {args.interval:g} s "
             f"(samples.csv, samples.svg).", "",
             f"Verdict: **{summary['verdict']}**", ""]
    for name, c in checks.items():
        lines.append(f"- {name}: {'ok' if c['ok'] else 'FAILED'} "
                     + json.dumps({k: v for k, v in c.items() if k != 'ok'}))
    if report is not None:
        lines += ["", f"Delivered {summary['delivered_pps'] / 1e3:.1f} kpps; rx {summary['rx_packets']}, "
                      f"tx {summary['tx_packets']}, dropped {summary['dropped']} (at the port: {gen['drops']})."]
    lines += ["", "Files: capacity.yaml/capacity.json (the capacity run), soak.yaml, report.json (gpunfv's "
                  "report), samples.csv, samples.svg, gpunfv.log, verdict.json."]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[6:]))
    print(f"soak: results in {out}")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
