"""bench/latency/sweep.py on the CPU backend, briefly: a capacity row and a row per offered
load, each with the chain's latency quantiles and bound, every run's accounting exact; the
table and JSON are written. It checks the harness, not any figure."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO, check_accounting


def test_sweep_writes_rows_table_and_reports(gpunfv, tmp_path):
    out = tmp_path / "sweep"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "latency" / "sweep.py"), str(gpunfv.parent), str(out),
         "--backend", "cpu", "--chains", "router", "--policies", "unco", "--loads", "20,60",
         "--seconds", "0.5", "--queues", "1", "--batch", "256", "--bound-us", "router=2000"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [r["load_pct"] for r in rows] == [None, 20, 60]
    capacity = rows[0]["delivered_mpps"]
    assert capacity > 0
    for r in rows[1:]:
        assert abs(r["offered_mpps"] - capacity * r["load_pct"] / 100) < 1e-6 * capacity + 1e-9
        assert r["bound_us"] == 2000 and r["deadline_us"] == 500
        assert r["p50_us"] <= r["p99_us"] <= r["p999_us"]
        assert r["bound_held"] == (r["p99_us"] <= 2000)
    for report in (out / "reports").glob("*.json"):
        check_accounting(json.loads(report.read_text()))
    table = (out / "table.md").read_text()
    assert table.count("| router | unco |") == 3
