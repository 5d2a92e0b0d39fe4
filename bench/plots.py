"""The PNG plots of bench/run-all, from each benchmark's JSON. Every function returns whether it
wrote its file (False when there is nothing to plot, or matplotlib is missing: the JSON and the
tables still hold every number)."""
import json
import re
import statistics
from pathlib import Path


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("plots: matplotlib not installed (python3-matplotlib): no plots")
        return None


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return True


def nf_throughput(data, path):
    """Per nf_bench case, Mpps (median, min-max bars) against frame size: every row on all
    threads, the GPU rows, and 1-thread rows dotted."""
    plt = _pyplot()
    cases = data.get("cases") or []
    if plt is None or not cases:
        return False
    cols = min(3, len(cases))
    rows = (len(cases) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.6 * rows), squeeze=False)
    for ax in axes.flat[len(cases):]:
        ax.set_visible(False)
    for ax, case in zip(axes.flat, cases):
        series = {}
        for s in case.get("sizes", []):
            for r in s.get("rows", []):
                series.setdefault(r["path"], []).append((s["size"], r))
        for name, pts in series.items():
            pts.sort(key=lambda p: p[0])
            x = [p[0] for p in pts]
            y = [p[1]["mpps"] for p in pts]
            lo = [p[1]["mpps"] - p[1].get("mpps_min", p[1]["mpps"]) for p in pts]
            hi = [p[1].get("mpps_max", p[1]["mpps"]) - p[1]["mpps"] for p in pts]
            one = pts[0][1].get("threads") == 1
            style = ":" if one else ("-" if "gpunfv" in name else "--")
            ax.errorbar(x, y, yerr=[lo, hi], marker="o", linestyle=style, capsize=3,
                        label=name + (" (LOW scaling)" if any(p[1].get("poor_scaling") for p in pts) else ""))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sorted({s["size"] for s in case.get("sizes", [])}))
        ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("frame size, B")
        ax.set_ylabel("Mpps (lookup rows: M lookups/s), median [min-max]")
        ax.set_title(f"{case['name']}: {case.get('nf', '')}")
        ax.legend(fontsize=6.5)
    return _save(fig, path)


def chains_throughput(runs, path):
    """Per chain, grouped by frame size, one bar per policy: the input rate taken, Mpps (median
    of the repeats, whiskers at their min and max)."""
    plt = _pyplot()
    if plt is None or not runs:
        return False
    chains = sorted({k[0] for k in runs})
    sizes = sorted({k[1] for k in runs})
    order = ("temporal", "fair", "unco", "gnetsteps", "gnet")
    policies = [p for p in order if any(k[2] == p for k in runs)]
    fig, axes = plt.subplots(1, len(chains), figsize=(5 * len(chains), 4.2), squeeze=False)
    width = 0.8 / max(1, len(policies))
    for ax, chain in zip(axes[0], chains):
        for k, policy in enumerate(policies):
            cells = [runs.get((chain, s, policy), {}) for s in sizes]
            ys = [c.get("mpps", 0) for c in cells]
            # whiskers: the repeats' min and max around the median bar
            err = [[y - c.get("mpps_min", y) for y, c in zip(ys, cells)],
                   [c.get("mpps_max", y) - y for y, c in zip(ys, cells)]]
            ax.bar([i + k * width for i in range(len(sizes))], ys, width, yerr=err, capsize=2,
                   label=policy)
        ax.set_xticks([i + width * (len(policies) - 1) / 2 for i in range(len(sizes))])
        ax.set_xticklabels([f"{s} B" for s in sizes])
        ax.set_ylabel("input rate taken, Mpps")
        ax.set_title(f"chain {chain}")
        ax.legend(fontsize=7)
    return _save(fig, path)


def first_runs(folder):
    """The reports in folder, one per cell: NAME.json, or NAME.r1.json of repeated cells (one
    CDF per cell keeps the plot readable)."""
    folder = Path(folder)
    if not folder.exists():
        return []
    return sorted(p for p in folder.glob("*.json") if not re.search(r"\.r(?!1$)\d+$", p.stem))


def latency_cdfs(report_paths, path, title):
    """One CDF line per gpunfv run report (its chain latency_ns.cdf), log time axis."""
    plt = _pyplot()
    curves = []
    for p in report_paths:
        try:
            cdf = json.loads(Path(p).read_text())["latency_ns"].get("cdf") or []
        except (OSError, ValueError, KeyError):
            continue
        if cdf:
            curves.append((Path(p).stem, cdf))
    if plt is None or not curves:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, cdf in curves:
        ax.plot([max(v, 1) / 1e3 for _, v in cdf], [q for q, _ in cdf], marker=".", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("latency, us")
    ax.set_ylabel("fraction of packets")
    ax.set_title(title)
    ax.legend(fontsize=6, ncol=2 if len(curves) > 12 else 1)
    return _save(fig, path)


def forward_throughput(data, path):
    """forward_bench: Mpps against frame size per forwarder, the median round with min-max."""
    plt = _pyplot()
    rows = data.get("rows") or []
    if plt is None or not rows:
        return False
    series = {}
    for r in rows:
        if r.get("descriptor_batch") not in (None, 32):
            continue  # the descriptor-batch sweep is a latency study, not a throughput row
        rounds = r.get("round_mpps") or [r["mpps"]]
        series.setdefault(r["forwarder"], []).append(
            (r["bytes"], statistics.median(rounds), min(rounds), max(rounds)))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        pts.sort()
        # the median round, whiskers at the rounds' min and max
        ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                    yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                    marker="o", capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("frame size, B")
    ax.set_ylabel("Mpps (both directions)")
    ax.set_title(f"port-to-port forwarding, {data.get('host', '')}")
    ax.legend(fontsize=7)
    return _save(fig, path)


def forward_latency_cdf(data, path):
    """forward_bench: rx-to-tx latency CDF of each row that measured one."""
    plt = _pyplot()
    rows = [r for r in data.get("rows") or [] if r.get("latency_cdf_ns")]
    if plt is None or not rows:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in rows:
        cdf = r["latency_cdf_ns"]
        ax.plot([max(v, 1) for _, v in cdf], [q for q, _ in cdf], marker=".",
                label=f"{r['forwarder']}, {r['bytes']} B, batch {r.get('descriptor_batch', '?')}")
    ax.set_xscale("log")
    ax.set_xlabel("latency, ns")
    ax.set_ylabel("fraction of packets")
    ax.set_title("forwarding latency CDF (gpunfv rows; testpmd io measures none)")
    ax.legend(fontsize=6)
    return _save(fig, path)
