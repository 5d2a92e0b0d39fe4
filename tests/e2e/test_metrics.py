"""The metrics endpoint (settings.metrics) against a real Prometheus server.

A Prometheus server (Debian's `prometheus` package) scrapes a running gpunfv every second; the
test waits until it has stored a live reading, stops the run with SIGTERM, waits until it has
scraped the final figures (gpunfv_run_finished 1) while gpunfv lingers, and compares what
Prometheus's HTTP query API returns with the JSON report: per port packets, bytes and drops by
reason, per NF in, out and drops by reason, the latency histogram's count, sum and buckets.
`promtool check metrics` checks the exposition itself. Every wait has a deadline (a hang is a
failure); nothing is timed.
"""
from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import ROUTER_DATA, TRACES, check_accounting, run_gpunfv, write_config

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
DEADLINE_S = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, proc: subprocess.Popen | None = None):
    """Polls check() until it returns something truthy; fails after DEADLINE_S or if proc ends."""
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"gpunfv ended (status {proc.returncode}) while waiting for {what}")
        time.sleep(0.2)
    pytest.fail(f"no {what} within {DEADLINE_S} s")


def http_get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()
    except OSError:
        return None


def router_config(tmp_path: Path, metrics: dict) -> Path:
    """A live generator (ends only when stopped) through a firewall that drops some flows and
    the router; some drops by reason at NFs and ports."""
    rules = tmp_path / "fw.rules"
    rules.write_text("@0.0.0.0/0 0.0.0.0/0 0 : 65535 1024 : 20000 0x11/0xFF 0x0000/0x0000 drop\n")
    return write_config(
        tmp_path / "m.yaml",
        ports=[{"name": "in", "type": "generator", "rate": "20kpps", "size": "64-512", "flows": 256,
                "duration": 3600, "dst_from": "r1"},
               {"name": "p1", "type": "discard"}, {"name": "p2", "type": "discard"}],
        nfs=[{"name": "fw", "type": "firewall", "rules": rules, "action": "drop", "default": "accept"},
             {"name": "r1", "type": "router", "routes": ROUTER_DATA / "example.routes"}],
        chains=[{"from": "in", "path": ["fw", "r1"]}],
        settings={"batch_deadline_us": 2000, "metrics": metrics})


class Prometheus:
    def __init__(self, tmp_path: Path, target_port: int):
        self.port = free_port()
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text("global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                       "scrape_configs:\n"
                       f"  - {{job_name: gpunfv, static_configs: [{{targets: ['127.0.0.1:{target_port}']}}]}}\n")
        self.log = open(tmp_path / "prometheus.log", "w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)
        wait_for("ready Prometheus server", lambda: http_get(f"http://127.0.0.1:{self.port}/-/ready"))

    def query(self, expr: str) -> dict[tuple, float]:
        """Instant query: {sorted label items except __name__, job, instance: value}."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        body = json.loads(http_get(url) or "{}")
        assert body.get("status") == "success", (expr, body)
        out = {}
        for r in body["data"]["result"]:
            labels = tuple(sorted((k, v) for k, v in r["metric"].items()
                                  if k not in ("__name__", "job", "instance")))
            out[labels] = float(r["value"][1])
        return out

    def one(self, expr: str) -> float | None:
        got = self.query(expr)
        return next(iter(got.values())) if len(got) == 1 else None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def lbl(**kw) -> tuple:
    return tuple(sorted(kw.items()))


def compare_with_report(prom: Prometheus, report: dict):
    ports, nfs = report["ports"], report["nfs"]
    for metric, key in (("rx_packets", "rx_packets"), ("tx_packets", "tx_packets"), ("rx_bytes", "rx_bytes"),
                        ("tx_bytes", "tx_bytes"), ("forwarded_packets", "forwarded"),
                        ("dropped_packets", "dropped")):
        got = prom.query(f"gpunfv_port_{metric}_total")
        assert got == {lbl(port=p): float(v[key]) for p, v in ports.items()}, metric
    got = prom.query("gpunfv_port_drops_total")
    want = {lbl(port=p, reason=r): float(n) for p, v in ports.items() for r, n in v["drops"].items()}
    assert want and got == want
    got = prom.query("gpunfv_nf_drops_total")
    want = {lbl(nf=n, reason=r): float(c) for n, v in nfs.items() for r, c in v["drops"].items()}
    assert "firewall_rule" in {r for (_, (_, r)) in want} and got == want
    for metric in ("in", "out"):
        got = prom.query(f"gpunfv_nf_{metric}_packets_total")
        assert got == {lbl(nf=n, type=v["type"]): float(v[metric]) for n, v in nfs.items()}, metric
        got = prom.query(f"gpunfv_nf_{metric}_bytes_total")
        want = {lbl(nf=n, type=v["type"]): float(v[f"{metric}_bytes"]) for n, v in nfs.items()}
        assert got == want and all(x > 0 for x in want.values()), metric
    # No NF here changes a frame's length: bytes follow packets, frame by frame.
    for n, v in nfs.items():
        assert v["in_bytes"] >= v["out_bytes"] >= v["out"] * 42, n
    assert nfs["fw"]["in_bytes"] == ports["in"]["rx_bytes"]  # the chain's first NF
    assert nfs["r1"]["in_bytes"] == nfs["fw"]["out_bytes"]
    lat = report["latency_ns"]
    assert prom.one("gpunfv_latency_seconds_count") == lat["count"] > 0
    assert prom.one("gpunfv_latency_seconds_sum") == pytest.approx(lat["sum"] / 1e9, rel=1e-9)
    # Every exposed bucket equals the report's histogram summed up to that bound.
    buckets = prom.query("gpunfv_latency_seconds_bucket")
    assert len(buckets) > 10
    for labels, value in buckets.items():
        le = dict(labels)["le"]
        bound = float("inf") if le == "+Inf" else round(float(le) * 1e9)
        assert value == sum(n for upper, n in lat["buckets"] if upper <= bound), le
    chain = report["chains"][0]
    assert prom.one(f'gpunfv_chain_latency_seconds_count{{chain="{chain["name"]}"}}') == chain["latency_ns"]["count"]
    stage = chain["stages"][1]
    assert prom.one(f'gpunfv_nf_launches_total{{nf="{stage["nf"]}"}}') == stage["launches"]
    assert prom.one(f'gpunfv_nf_queue_max_packets{{nf="{stage["nf"]}"}}') == stage["max_queued_packets"]


@pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus package is not installed "
                                               "(scripts/install-deps.sh installs it)")
def test_prometheus_scrapes_live_and_final_figures_that_match_the_report(gpunfv, tmp_path):
    port = free_port()
    cfg = router_config(tmp_path, {"listen": f"127.0.0.1:{port}", "linger_s": 600})
    prom = Prometheus(tmp_path, port)
    report_path = tmp_path / "r.json"
    err = open(tmp_path / "gpunfv.err", "w")
    proc = subprocess.Popen([str(gpunfv), "run", str(cfg), "--report", str(report_path), "--backend", "cpu"],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        # A live reading with traffic in it, stored by Prometheus.
        wait_for("live scrape", lambda: (prom.one("gpunfv_run_finished") == 0 and
                                         (prom.one('gpunfv_port_rx_packets_total{port="in"}') or 0) > 0), proc)
        live_rx = prom.one('gpunfv_port_rx_packets_total{port="in"}')
        proc.send_signal(signal.SIGTERM)  # ends the run; gpunfv then lingers with the final figures
        wait_for("report", lambda: report_path.exists() and report_path.stat().st_size > 0, proc)
        wait_for("final scrape", lambda: prom.one("gpunfv_run_finished") == 1, proc)
        report = json.loads(report_path.read_text())
        check_accounting(report)
        assert report["ports"]["in"]["rx_packets"] >= live_rx
        compare_with_report(prom, report)
        proc.send_signal(signal.SIGTERM)  # ends the linger
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, (tmp_path / "gpunfv.err").read_text()
        assert "accounting: every packet" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()
        prom.stop()
    log = (tmp_path / "gpunfv.err").read_text()
    assert "serving the final metrics" in log and "no longer serving the final metrics" in log


def test_live_exposition_passes_promtool(gpunfv, tmp_path):
    if PROMTOOL is None:
        pytest.skip("promtool is not installed (Debian's prometheus package, scripts/install-deps.sh)")
    port = free_port()
    cfg = router_config(tmp_path, {"listen": f"127.0.0.1:{port}"})
    proc = subprocess.Popen([str(gpunfv), "run", str(cfg), "-q", "--backend", "cpu"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        text = wait_for("traffic on /metrics", lambda: (lambda t: t if t and 'nf="r1"' in t and
                                                         "gpunfv_nf_drops_total{" in t else None)(http_get(url)), proc)
        check = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "# TYPE gpunfv_chain_latency_seconds histogram" in text
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("metrics, message", [
    ("{listen: 9464}", "metrics listen must be ADDR:PORT"),
    ("{listen: '127.0.0.1:99999'}", "port in 0..65535"),
    ("{listen: '127.0.0.1:9464', linger_s: -2}", "linger_s must be in"),
    ("{linger_s: 3}", "metrics needs listen"),
    ("{listen: '127.0.0.1:9464', port: 3}", "port"),
    ("'127.0.0.1:9464'", "metrics must be a map"),
])
def test_bad_metrics_settings_are_refused(gpunfv, tmp_path, metrics, message):
    cfg = tmp_path / "m.yaml"
    cfg.write_text(f"ports:\n  - {{name: in, type: pcap, rx: {TRACES / 'dns.cap'}}}\n"
                   "  - {name: out, type: discard}\n"
                   "chains:\n  - {from: in, path: [], to: out}\n"
                   f"settings:\n  metrics: {metrics}\n")
    r = run_gpunfv(gpunfv, "run", cfg)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "m.yaml:" in r.stderr, r.stderr


def test_an_address_in_use_is_refused_before_the_run(gpunfv, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cfg = router_config(tmp_path, {"listen": f"127.0.0.1:{port}"})
        r = run_gpunfv(gpunfv, "run", cfg, "--report", tmp_path / "r.json")
    assert r.returncode == 2, r.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in r.stderr, r.stderr
    assert not (tmp_path / "r.json").exists()  # no traffic ran
