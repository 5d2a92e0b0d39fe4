"""bench/chains/summarize.py on made-up reports: the repeats of a cell become its median with min
and max, gnet's ratios use the medians, and the table says how many runs each cell had. It
checks the arithmetic of the chain evaluation's tables, not any figure."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "bench" / "chains"))
import summarize  # noqa: E402


def write_run(reports, logs, name, rates_mpps, size, seconds=4):
    """A run's report and progress lines: one per-second rx rate per second."""
    packets = int(sum(rates_mpps) * 1e6)
    report = {"elapsed_s": seconds, "accounting_ok": True,
              "totals": {"rx_packets": packets, "tx_packets": packets, "dropped": 0},
              "ports": {"gen": {"rx_bytes": packets * size}},
              "latency_ns": {"p50": 1000, "p99": 2000, "p999": 3000},
              "scheduler": {"line": name}, "chains": [{"stages": []}]}
    (reports / f"{name}.json").write_text(json.dumps(report))
    (logs / f"{name}.txt").write_text("".join(
        f"[{t + 1:7.1f}s] rx {r:.2f} Mpps 1.0 Gbit/s | tx\n" for t, r in enumerate(rates_mpps)))


def test_repeats_become_median_min_and_max(tmp_path):
    reports, logs = tmp_path / "reports", tmp_path / "logs"
    reports.mkdir()
    logs.mkdir()
    # steady rate: the median of the second half (seconds 3 and 4) of each run
    for rep, steady in enumerate((100, 120, 110), start=1):
        write_run(reports, logs, f"sd-64-unco.r{rep}", [5, 5, steady, steady], 64)
    for rep, steady in enumerate((99, 132, 121), start=1):
        write_run(reports, logs, f"sd-64-gnet.r{rep}", [5, 5, steady, steady], 64)
    write_run(reports, logs, "sd-64-fused-graph", [5, 5, 50, 50], 64)  # a cell run once
    runs = summarize.load(reports, logs)
    unco, gnet = runs[("sd", 64, "unco")], runs[("sd", 64, "gnet")]
    assert (unco["mpps"], unco["mpps_min"], unco["mpps_max"], unco["repeats"]) == (110, 100, 120, 3)
    assert unco["sched"] == "sd-64-unco.r3"  # the median run stands for the cell
    assert abs(unco["gbps"] - 110e6 * 64 * 8 / 1e9) < 1e-9
    assert (gnet["mpps"], gnet["mpps_min"], gnet["mpps_max"]) == (121, 99, 132)
    assert runs[("sd", 64, "fused-graph")]["repeats"] == 1
    out = subprocess.run([sys.executable, str(REPO / "bench" / "chains" / "summarize.py"),
                          str(reports), str(logs)], capture_output=True, text=True, check=True).stdout
    row = next(line for line in out.splitlines() if line.startswith("sd") and "[" in line)
    assert "110.0 [100.0-120.0]" in row and "121.0 [99.0-132.0]" in row
    assert f"{121 / 110:.2f}" in row  # gnet / unco from the medians
    assert "over 1/3 runs" in out
