"""SIGINT and SIGTERM during `gpunfv run`: the first signal ends a live run as its deadline
would (exit 0, the summary, a complete report with exact accounting, whole pcap records and
alert-log lines); a second one quits at once, even when the drain cannot finish."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT_S, check_accounting, read_pcap, run_gpunfv, tshark_count, \
    write_config

SIZE, SEED = 128, 7
HEADER_BYTES = 42  # Ethernet + IPv4 + UDP: the generator's payload follows


def live_generator() -> dict:
    # Slow enough that the capture and the alert log stay small over a few seconds.
    return {"name": "gen", "type": "generator", "live": True, "rate": "5kpps", "size": SIZE,
            "flows": 16, "seed": SEED, "duration": 1000}


def payload_rule(gpunfv, tmp_path: Path) -> Path:
    """A rule that fires on every generated frame: the generator's payload bytes (the same
    for every frame of one size and seed), read from one frame it writes."""
    one = tmp_path / "one.pcap"
    config = write_config(
        tmp_path / "one.yaml",
        ports=[{"name": "gen", "type": "generator", "count": 1, "size": SIZE, "seed": SEED},
               {"name": "out", "type": "pcap", "tx": one}],
        chains=[{"from": "gen", "to": "out"}])
    proc = run_gpunfv(gpunfv, "run", config, "-q")
    assert proc.returncode == 0, proc.stderr
    _, frames = read_pcap(one)
    content = " ".join(f"{b:02x}" for b in frames[0][1][HEADER_BYTES:HEADER_BYTES + 8])
    rules = tmp_path / "gen.rules"
    rules.write_text(f'alert udp any any -> any any (msg:"generated"; content:"|{content}|"; sid:1;)\n')
    return rules


def start_live_run(gpunfv, config: Path, report: Path) -> subprocess.Popen:
    """Starts the run and returns once it has printed a progress line (it is forwarding)."""
    proc = subprocess.Popen([str(gpunfv), "run", str(config), "--report", str(report),
                             "--duration", "3600"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("["):  # a progress line: "[    1.0s] rx ..."
            return proc
    proc.kill()
    pytest.fail("gpunfv ended before its first progress line:\n" + "".join(seen))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_ends_a_live_run_cleanly(gpunfv, tmp_path, sig):
    out_pcap, alerts, report_path = tmp_path / "out.pcap", tmp_path / "alerts.json", tmp_path / "r.json"
    config = write_config(
        tmp_path / "live.yaml",
        ports=[live_generator(), {"name": "out", "type": "pcap", "tx": out_pcap}],
        nfs=[{"name": "ids", "type": "nids", "rules": [payload_rule(gpunfv, tmp_path)],
              "alerts": alerts}],
        chains=[{"from": "gen", "path": ["ids"], "to": "out"}],
        settings={"batch_size": 64, "batches": 8})
    proc = start_live_run(gpunfv, config, report_path)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{stdout}\n{stderr}"
    assert "gpunfv summary" in stdout, stdout
    assert "stopping" in stderr, stderr

    report = json.loads(report_path.read_text())
    check_accounting(report)
    gen, out = report["ports"]["gen"], report["ports"]["out"]
    assert gen["rx_packets"] > 0 and out["tx_packets"] > 0
    # read_pcap fails on a truncated record; tshark reads every record.
    _, frames = read_pcap(out_pcap)
    assert len(frames) == out["tx_packets"] == tshark_count(out_pcap)
    text = alerts.read_text()
    lines = text.splitlines()
    assert text.endswith("\n"), text[-200:]  # no line cut short
    assert all(json.loads(line)["sid"] == 1 for line in lines)
    ids = report["nfs"]["ids"]
    assert len(lines) == ids["alerts"] == ids["in"] > 0


def test_second_signal_quits_a_drain_that_cannot_finish(gpunfv, tmp_path):
    # The capture is a FIFO nobody reads: once its buffer fills, egress blocks in its write and
    # the drain the first signal starts never ends.
    fifo = tmp_path / "stuck.pcap"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets gpunfv open it for writing
    try:
        config = write_config(
            tmp_path / "stuck.yaml",
            ports=[live_generator(), {"name": "out", "type": "pcap", "tx": fifo}],
            chains=[{"from": "gen", "to": "out"}],
            settings={"batch_size": 64, "batches": 8})
        proc = start_live_run(gpunfv, config, tmp_path / "r.json")
        proc.send_signal(signal.SIGINT)
        # Two signals sent back to back may merge into one: send the second once the first
        # has been taken (the run says it is stopping).
        for line in proc.stderr:
            if "stopping" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
        assert proc.returncode == 128 + signal.SIGINT, stderr
    finally:
        os.close(reader)
