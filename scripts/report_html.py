#!/usr/bin/env python3
"""Renders a gpunfv JSON report (gpunfv run --report) as one self-contained HTML page.

Usage: report_html.py REPORT.json OUT.html    (gpunfv report REPORT.json --html OUT.html runs it)

The page holds a summary table, drops by reason, the latency CDF, throughput and NF queue
occupancy over time, and the GPU scheduler's SM shares and batch sizes over time. Plots are drawn
with matplotlib and inlined as SVG; the page loads nothing else. Exit status 2 on a missing or
malformed report, or without matplotlib.
"""
import html
import io
import json
import os
import sys
import tempfile

try:
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("gpunfv report: matplotlib is missing (Debian: apt-get install python3-matplotlib)")

plt.rcParams.update({"svg.fonttype": "none", "figure.dpi": 96, "font.size": 9,
                     "axes.grid": True, "grid.alpha": 0.3})

CSS = """
body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f0f0f0} td:first-child,th:first-child{text-align:left}
figure{margin:0 0 1.5em} figure svg{max-width:100%;height:auto}
.ok{color:#176b25} .bad{color:#b00020;font-weight:bold} .note{color:#666}
"""


def esc(v):
    return html.escape(str(v))


def fail(msg):
    sys.stderr.write(f"gpunfv report: {msg}\n")
    sys.exit(2)


def table(header, rows):
    out = ["<table><tr>", *[f"<th>{esc(h)}</th>" for h in header], "</tr>"]
    for r in rows:
        out += ["<tr>", *[f"<td>{esc('-' if c is None else c)}</td>" for c in r], "</tr>"]
    out.append("</table>")
    return "".join(out)


def svg(fig, plot_id, title):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # drop the XML prolog and doctype: inline SVG
    return f'<figure id="{plot_id}" class="plot" data-plot="{plot_id}"><figcaption>{esc(title)}</figcaption>{text}</figure>'


def summary(r):
    ports = r.get("ports", {})
    rows = [[name, p.get("rx_packets"), p.get("rx_bytes"), p.get("tx_packets"), p.get("tx_bytes"),
             p.get("forwarded"), p.get("dropped")] for name, p in ports.items()]
    out = "<h2>Summary</h2>" + table(
        ["port", "rx packets", "rx bytes", "tx packets", "tx bytes", "forwarded", "dropped"], rows)
    nfs = r.get("nfs", {})
    if nfs:
        rows = [[name, n.get("type"), n.get("in"), n.get("out"), sum(n.get("drops", {}).values())]
                for name, n in nfs.items()]
        out += table(["NF", "type", "in", "out", "dropped"], rows)
    t = r.get("totals", {})
    lat = r.get("latency_ns", {})
    out += table(["total", "rx packets", "tx packets", "dropped", "latency p50 us", "p99 us", "max us"],
                 [["all ports", t.get("rx_packets"), t.get("tx_packets"), t.get("dropped"),
                   round(lat.get("p50", 0) / 1e3, 1), round(lat.get("p99", 0) / 1e3, 1),
                   round(lat.get("max", 0) / 1e3, 1)]])
    ok = r.get("accounting_ok")
    out += ('<p class="ok">accounting: every packet transmitted or dropped with a reason</p>' if ok
            else '<p class="bad">ACCOUNTING MISMATCH: see the JSON report</p>')
    return out


def drops(r):
    rows, labels, values = [], [], []
    for kind, key in (("port", "ports"), ("NF", "nfs")):
        for name, x in r.get(key, {}).items():
            for reason, n in sorted(x.get("drops", {}).items()):
                rows.append([f"{kind} {name}", reason, n])
                labels.append(f"{kind} {name}: {reason}")
                values.append(n)
    out = "<h2>Drops by reason</h2>"
    if not rows:
        return out + '<p class="note">No packet was dropped.</p>'
    out += table(["where", "reason", "packets"], rows)
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(values) + 1))
    ax.barh(labels, values, color="#c0504d")
    ax.invert_yaxis()
    ax.set_xlabel("packets dropped")
    return out + svg(fig, "plot-drops", "Drops by reason (a port's drops include its NFs')")


def latency_cdf(r):
    out = "<h2>Latency</h2>"
    lat = r.get("latency_ns", {})
    buckets = lat.get("buckets", [])
    total = sum(n for _, n in buckets)
    if not total:
        return out + '<p class="note">No packet was timed.</p>'
    xs, ys, seen = [], [], 0
    for upper, n in buckets:
        seen += n
        xs.append(upper / 1e3)
        ys.append(seen / total)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.step(xs, ys, where="post", color="#1f77b4")
    ax.set_xscale("log")
    ax.set_xlabel("rx to tx latency (us)")
    ax.set_ylabel("fraction of packets")
    ax.set_ylim(0, 1.02)
    for q, key in ((0.5, "p50"), (0.99, "p99")):
        if key in lat:
            ax.axvline(lat[key] / 1e3, color="#999", linestyle="--", linewidth=0.8)
            ax.annotate(key, (lat[key] / 1e3, q), fontsize=8)
    return out + svg(fig, "plot-latency-cdf", f"Latency CDF, {total} packets timed")


def per_second(ts, values):
    return [v / dt if dt > 0 and v is not None else 0 for v, dt in zip(values, ts["dt_s"])]


def throughput(ts):
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    for name, p in ts.get("ports", {}).items():
        for side, style in (("rx", "-"), ("tx", "--")):
            pk = p.get(f"{side}_packets", [])
            if any(pk):
                a1.plot(ts["t_s"], per_second(ts, pk), style, label=f"{name} {side}")
                by = p.get(f"{side}_bytes") or []
                if any(b is not None for b in by):
                    a2.plot(ts["t_s"], [8 * v / 1e9 for v in per_second(ts, by)], style, label=f"{name} {side}")
    a1.set_ylabel("packets/s")
    a2.set_ylabel("Gbit/s")
    a2.set_xlabel("time since start (s)")
    for a in (a1, a2):
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=7)
    return svg(fig, "plot-throughput", "Throughput per port over time")


def queues(ts):
    fig, ax = plt.subplots(figsize=(8, 3))
    for name, s in ts.get("stages", {}).items():
        ax.plot(ts["t_s"], s.get("mean_queued_packets", []), label=name)
    ax.set_ylabel("mean packets queued")
    ax.set_xlabel("time since start (s)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    return svg(fig, "plot-queues", "NF input queue occupancy over time (chain/NF)")


def scheduler(ts, r):
    stages = {n: s for n, s in ts.get("stages", {}).items() if "sm_share" in s}
    out = "<h2>GPU scheduler</h2>"
    sched = r.get("scheduler") or {}
    if sched.get("line"):
        out += f"<p>{esc(sched.get('policy', ''))}: {esc(sched['line'])}</p>"
    if not stages:
        out += ('<p class="note">No GPU sharing policy ran (CPU backend): no SM shares. '
                "The batch sizes the chains took are below.</p>")
    else:
        fig, ax = plt.subplots(figsize=(8, 3))
        for name, s in stages.items():
            ax.step(ts["t_s"], s["sm_share"], where="post", label=name)
        ax.set_ylabel("share of the GPU's SMs")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("time since start (s)")
        ax.legend(fontsize=7)
        out += svg(fig, "plot-sm-shares", "SM share per NF over time (chain/NF)")
    fig, ax = plt.subplots(figsize=(8, 3))
    for name, c in ts.get("chains", {}).items():
        ax.plot(ts["t_s"], c.get("mean_batch_packets", []), label=f"{name} mean batch")
        if "planned_batch" in c:
            ax.step(ts["t_s"], c["planned_batch"], "--", where="post", label=f"{name} planned")
    ax.set_ylabel("packets per batch")
    ax.set_xlabel("time since start (s)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    return out + svg(fig, "plot-batches", "Batch size per chain over time")


def over_time(r):
    ts = r.get("timeseries")
    out = "<h2>Over time</h2>"
    if not isinstance(ts, dict) or not ts.get("t_s"):
        return out + '<p class="note">This report has no time series.</p>', ""
    out += f'<p class="note">One sample per {esc(ts.get("interval_s", 1))} s.</p>'
    return out + throughput(ts) + queues(ts), scheduler(ts, r)


def render(r):
    title = f"gpunfv report: {r.get('config', '')}"
    time_part, sched_part = over_time(r)
    body = (f"<h1>{esc(title)}</h1><p>{esc(r.get('backend', ''))} backend "
            f"({esc(r.get('backend_detail', ''))}), {esc(round(r.get('elapsed_s', 0), 3))} s</p>"
            + summary(r) + drops(r) + latency_cdf(r) + time_part + sched_part)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")


def main():
    if len(sys.argv) != 3:
        fail("usage: report_html.py REPORT.json OUT.html")
    src, dst = sys.argv[1], sys.argv[2]
    try:
        with open(src, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        fail(f"{src}: cannot read: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        fail(f"{src}: not JSON: {e}")
    if not isinstance(report, dict) or not isinstance(report.get("ports"), dict):
        fail(f"{src}: not a gpunfv report (no ports)")
    try:
        page = render(report)
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        fail(f"{src}: malformed report: {type(e).__name__}: {e}")
    out_dir = os.path.dirname(os.path.abspath(dst))
    try:
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".gpunfv-report-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temporary name only
        os.replace(tmp, dst)
    except OSError as e:
        fail(f"{dst}: cannot write: {e.strerror}")


if __name__ == "__main__":
    main()
