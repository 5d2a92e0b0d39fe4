"""The TTL filter example (examples/ttl-filter.yaml): a per-packet NF that declares its own drop
reason, in front of the router, over a real capture; what it drops is checked against tshark's
reading of each packet's first IP header."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, TRACES, check_accounting, run_gpunfv, tshark_fields

EXAMPLE = REPO / "examples" / "ttl-filter.yaml"
MIN_TTL = 128


def expected_drops() -> tuple[int, int]:
    """(IP packets, those below MIN_TTL) in the example's capture, by tshark."""
    rows = tshark_fields(TRACES / "SIP_CALL_RTP_G711.pcap", ["ip.ttl", "ipv6.hlim"])
    ip = below = 0
    for ttl, hlim in rows:
        value = ttl or hlim
        if value:
            ip += 1
            below += int(value) < MIN_TTL
    return ip, below


def example_in(tmp_path) -> Path:
    """The example with its inputs named from the repository and its captures under tmp_path."""
    config = tmp_path / "ttl-filter.yaml"
    config.write_text(EXAMPLE.read_text().replace("../out/", f"{tmp_path}/")
                      .replace("../", f"{REPO}/"))
    return config


def test_ttl_filter_example_drops_what_tshark_reads_below_the_minimum(gpunfv, tmp_path):
    report_path = tmp_path / "report.json"
    proc = run_gpunfv(gpunfv, "run", example_in(tmp_path), "--backend", "cpu", "-q",
                      "--report", report_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    ip, below = expected_drops()
    assert below > 0
    gtsm, router = report["nfs"]["gtsm"], report["nfs"]["r1"]
    assert gtsm["type"] == "ttl_filter"
    assert gtsm["drops"] == {"ttl_below_minimum": below}
    assert gtsm["out"] == router["in"]
    # Frames that are not IP pass the filter: it saw every packet the capture holds.
    assert gtsm["in"] == report["ports"]["in"]["rx_packets"]
    assert gtsm["in"] >= ip


def test_ttl_filter_config_errors(gpunfv, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(example_in(tmp_path).read_text().replace("min_ttl: 128", "min_ttl: 0"))
    proc = run_gpunfv(gpunfv, "run", config, "--backend", "cpu", "-q")
    assert proc.returncode != 0
    line = next(n for n, text in enumerate(config.read_text().splitlines(), 1) if "min_ttl: 0" in text)
    assert f"bad.yaml:{line}: value 0 out of range [1, 255]" in proc.stderr
