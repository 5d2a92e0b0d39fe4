"""bench/latency/sweep.py on the CPU backend, briefly: a capacity row and a row per offered
load, each with the chain's latency quantiles and bound, every run's accounting exact; the
table and JSON are written. It checks the harness, not any figure."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO, check_accounting, run_gpunfv


def run_script(gpunfv, script, out, *args):
    """Runs bench/latency/SCRIPT.py on gpunfv's folder into `out`; expects exit 0."""
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "latency" / f"{script}.py"),
                           str(gpunfv.parent), str(out), *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sweep_writes_rows_table_and_reports(gpunfv, tmp_path):
    out = tmp_path / "sweep"
    run_script(gpunfv, "sweep", out,
               "--backend", "cpu", "--chains", "router", "--policies", "unco", "--loads", "20,60",
               "--seconds", "0.5", "--queues", "1", "--batch", "256", "--bound-us", "router=2000")
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [r["load_pct"] for r in rows] == [None, 20, 60]
    capacity = rows[0]["delivered_mpps"]
    assert capacity > 0
    for r in rows[1:]:
        assert abs(r["offered_mpps"] - capacity * r["load_pct"] / 100) < 1e-6 * capacity + 1e-9
        assert r["bound_us"] == 2000 and r["deadline_us"] == 500
        assert r["p50_us"] <= r["p99_us"] <= r["p999_us"]
        assert r["bound_held"] == (r["p99_us"] <= 2000)
        assert 0 < r["mean_batch"] <= 256
    for report in (out / "reports").glob("*.json"):
        check_accounting(json.loads(report.read_text()))
    table = (out / "table.md").read_text()
    assert table.count("| router | unco |") == 3


def test_sweep_fused_policies_make_loadable_configs(gpunfv, tmp_path):
    """`fused`, `fused-graph` and `persistent` are settings of unco, not schedulers: their
    configs must load (here on the CPU backend, which parses the GPU settings too) and say what
    they compare."""
    out = tmp_path / "sweep"
    run_script(gpunfv, "sweep", out,
               "--backend", "cpu", "--chains", "router", "--policies", "fused,fused-graph,persistent",
               "--loads", "50", "--seconds", "0.3", "--queues", "1", "--batch", "256")
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [r["policy"] for r in rows if r["load_pct"] is not None] == ["fused", "fused-graph", "persistent"]
    fused = (out / "configs" / "router-fused-50.yaml").read_text()
    graph = (out / "configs" / "router-fused-graph-50.yaml").read_text()
    persistent = (out / "configs" / "router-persistent-50.yaml").read_text()
    assert "gpu_pipeline: fused" in fused and "gpu_graphs" not in fused
    assert "gpu_pipeline: fused" in graph and "gpu_graphs: true" in graph
    assert "scheduler: unco" in graph
    assert "gpu_pipeline: persistent" in persistent and "scheduler: unco" in persistent


def test_sweep_fwrouter_chain_draws_destinations_from_the_table(gpunfv, tmp_path):
    """`fwrouter` (a firewall in front of the router) is a chain the sweep knows: its generator
    sends to the router's prefixes, as the router chain's does, so packets are routed."""
    out = tmp_path / "sweep"
    run_script(gpunfv, "sweep", out,
               "--backend", "cpu", "--chains", "fwrouter", "--policies", "persistent", "--loads", "50",
               "--seconds", "0.3", "--queues", "1", "--batch", "256", "--capacity", "fwrouter=0.2")
    cfg = (out / "configs" / "fwrouter-persistent-50.yaml").read_text()
    assert "dst_from: router" in cfg and "type: firewall" in cfg
    report = json.loads(next((out / "reports").glob("fwrouter-persistent-50*.json")).read_text())
    check_accounting(report)
    assert report["totals"]["tx_packets"] > 0


def test_two_chains_report_each_chain_against_its_bound(gpunfv, tmp_path):
    """bench/latency/two_chains.py on the CPU backend: S_d and a light router chain, each with
    its own generator and bound; one row per chain, its quantiles against its own bound."""
    out = tmp_path / "two"
    run_script(gpunfv, "two_chains", out,
               "--backend", "cpu", "--policies", "unco", "--loads", "50", "--heavy-capacity", "0.05",
               "--light-mpps", "0.01", "--seconds", "0.5", "--batch", "256", "--bound-us", "heavy=3000,light=1500")
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [(r["chain"], r["bound_us"]) for r in rows] == [("sd", 3000), ("light", 1500)]
    for r in rows:
        assert r["delivered_mpps"] > 0 and r["accounting_ok"]
        assert r["p50_us"] <= r["p99_us"] <= r["p999_us"]
        assert r["bound_held"] == (r["p99_us"] <= r["bound_us"])
    for report in (out / "reports").glob("*.json"):
        check_accounting(json.loads(report.read_text()))
    assert (out / "table.md").read_text().count("| unco | 50% |") == 2


def test_two_chains_repeated_rows_give_each_chain_its_median_run(gpunfv, tmp_path):
    out = tmp_path / "two"
    run_script(gpunfv, "two_chains", out,
               "--backend", "cpu", "--policies", "unco", "--loads", "50", "--heavy-capacity", "0.05",
               "--light-mpps", "0.01", "--seconds", "0.3", "--batch", "256", "--repeats", "2",
               "--bound-us", "heavy=3000,light=1500")
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [r["chain"] for r in rows] == ["sd", "light"]
    for r in rows:
        assert r["repeats"] == 2 and 0 <= r["bound_held_runs"] <= 2 and r["accounting_ok"]
        assert r["p99_us_min"] <= r["p99_us"] <= r["p99_us_max"]
    assert sorted(p.name for p in (out / "reports").glob("*.json")) == ["two-unco-50.r1.json",
                                                                        "two-unco-50.r2.json"]
    assert "median run of 2" in (out / "table.md").read_text()


def test_repeated_rows_report_the_median_run_with_min_and_max(gpunfv, tmp_path):
    """--repeats 2: each row is run twice (reports NAME.r1.json, NAME.r2.json) and stands as its
    median run, with every figure's spread over the runs and how many kept the bound."""
    out = tmp_path / "sweep"
    run_script(gpunfv, "sweep", out,
               "--backend", "cpu", "--chains", "router", "--policies", "unco", "--loads", "50",
               "--seconds", "0.3", "--queues", "1", "--batch", "256", "--bound-us", "router=2000",
               "--repeats", "2")
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert len(rows) == 2
    for r in rows:
        assert r["repeats"] == 2 and 0 <= r["bound_held_runs"] <= 2
        for key in ("delivered_mpps", "p50_us", "p99_us", "p999_us"):
            assert r[key + "_min"] <= r[key] <= r[key + "_max"]
    names = sorted(p.name for p in (out / "reports").glob("*.json"))
    assert names == ["router-capacity.r1.json", "router-capacity.r2.json",
                     "router-unco-50.r1.json", "router-unco-50.r2.json"]
    table = (out / "table.md").read_text()
    assert "median run of 2" in table and "/2 |" in table


def test_low_latency_example_runs_and_reports_its_bound(gpunfv, tmp_path):
    """examples/router-low-latency.yaml (the persistent pipeline's settings) runs as shipped:
    on the CPU backend here, where its GPU settings are read and the chain runs on workers."""
    report_path = tmp_path / "report.json"
    proc = run_gpunfv(gpunfv, "run", REPO / "examples" / "router-low-latency.yaml", "--backend", "cpu",
                      "-q", "--report", report_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    assert report["totals"]["tx_packets"] + report["totals"]["dropped"] == 2_000_000
    chain = report["chains"][0]
    assert chain["latency_bound_us"] == 50
    assert chain["bound_held"] == (chain["latency_ns"]["p99"] <= 50_000)
