"""bench/run-all's results folder: its README (machine, command, each part's status, tables and
plots) and the redrawing of every plot from a finished run's JSON (--replot)."""
import datetime
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench" / "chains"))  # summarize.py
sys.path.insert(0, str(REPO / "bench" / "latency"))  # sweep.py
import plots  # noqa: E402  (bench/plots.py)

TITLES = {"nf": "Each NF against its peers (nf_bench)",
          "chains": "Chains sharing one GPU (bench/chains/run.sh)",
          "latency": "Latency under load (bench/latency/sweep.py)",
          "forward": "Port-to-port forwarding (forward_bench)"}


def log(msg):
    print(f"run-all: {msg}", flush=True)


def write_readme(out, results):
    started = datetime.datetime.fromisoformat(results["started"])
    lines = [f"# gpunfv benchmarks: {results['machine']}, {started:%Y-%m-%d}", "",
             f"Command: `{' '.join(results['command'])}` ({results['mode']} settings), git "
             f"{results['git']}, started {started:%Y-%m-%dT%H:%M:%SZ}, "
             f"{results['elapsed_s']:.0f} s in all." +
             (" Quick settings: a check of the harness and the machine, not figures of record."
              if results["mode"] == "quick" else ""), "",
             "```", (out / "machine.txt").read_text().strip(), "```", ""]
    for part, r in results["parts"].items():
        lines += [f"## {TITLES[part]}", "", f"Status: {r['status']}" +
                  (f" ({r['why']})" if r.get("why") else "") + f"; folder [{part}/]({part}/).", ""]
        for f in r.get("files", []):
            if f.endswith(".png"):
                lines += [f"![{f}]({part}/{f})", ""]
        if r.get("table"):
            fence = part != "nf" and part != "latency"  # those two are markdown already
            lines += (["```"] if fence else []) + [r["table"].rstrip()] + (["```"] if fence else []) + [""]
    (out / "README.md").write_text("\n".join(lines) + "\n")


def replot(out):
    """Redraws every plot of a finished run from its JSON and rewrites its README."""
    results = json.loads((out / "results.json").read_text())
    parts = results["parts"]
    if "nf" in parts and (out / "nf" / "nf_bench.json").exists():
        if plots.nf_throughput(json.loads((out / "nf" / "nf_bench.json").read_text()),
                               out / "nf" / "nf-throughput.png"):
            parts["nf"].setdefault("files", []).append("nf-throughput.png")
    if "chains" in parts and (out / "chains" / "reports").exists():
        import summarize  # noqa: E402
        runs = summarize.load(out / "chains" / "reports", out / "chains" / "logs")
        reports = plots.first_runs(out / "chains" / "reports")
        for ok, f in ((plots.chains_throughput(runs, out / "chains" / "chains-throughput.png"),
                       "chains-throughput.png"),
                      (plots.latency_cdfs(reports, out / "chains" / "chains-latency-cdf.png",
                                          "chains: rx-to-tx latency CDF per run"),
                       "chains-latency-cdf.png")):
            if ok:
                parts["chains"].setdefault("files", []).append(f)
    if "latency" in parts and (out / "latency" / "results.json").exists():
        import sweep  # noqa: E402  (bench/latency/sweep.py draws its own load plot)
        rows = json.loads((out / "latency" / "results.json").read_text())["rows"]
        if rows:
            sweep.plot(rows, out / "latency" / "latency-vs-load.png")
    if "latency" in parts and (out / "latency" / "reports").exists():
        reports = plots.first_runs(out / "latency" / "reports")
        if plots.latency_cdfs(reports, out / "latency" / "latency-cdf.png",
                              "latency sweep: rx-to-tx latency CDF per run"):
            parts["latency"].setdefault("files", []).append("latency-cdf.png")
    if "forward" in parts and (out / "forward" / "results.json").exists():
        data = json.loads((out / "forward" / "results.json").read_text())
        for ok, f in ((plots.forward_throughput(data, out / "forward" / "forward-throughput.png"),
                       "forward-throughput.png"),
                      (plots.forward_latency_cdf(data, out / "forward" / "forward-latency-cdf.png"),
                       "forward-latency-cdf.png")):
            if ok:
                parts["forward"].setdefault("files", []).append(f)
    for r in parts.values():
        if "files" in r:
            r["files"] = list(dict.fromkeys(r["files"]))
    (out / "results.json").write_text(json.dumps(results, indent=1))
    write_readme(out, results)
    log(f"redrawn: {out}/README.md")
    return 0
