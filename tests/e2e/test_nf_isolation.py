"""isoPointer's containment, end to end: a deliberately faulty plugin NF (plugins/stray_write)
writes past its packet's slot. The write is refused, the packet dropped as nf_isolation_fault,
the NF quarantined, and the chain beside it, on the same run, loses nothing. On the CPU here,
and on the GPU where one is present."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO, TRACES, check_accounting, read_pcap, run_gpunfv, write_config
from plugin_build import build_plugin

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
TTL_BELOW = 128
NO_GPU = re.compile(r"^gpunfv: (GPU )?error: .*(no CUDA device|no (CUDA|GPU) backend)", re.I | re.M)


@pytest.fixture(scope="session")
def faulty_plugin(gpunfv, tmp_path_factory) -> Path:
    return build_plugin(gpunfv, tmp_path_factory, REPO / "tests" / "e2e" / "plugins" / "stray_write",
                        "stray_write", "GPUNFV_FAULTY_NF_PLUGIN")


def ipv4_ttl(frame: bytes) -> int | None:
    """TTL of an untagged Ethernet IPv4 frame (the capture has no VLAN tags)."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return None
    return frame[22]


def run_two_chains(gpunfv: Path, library: Path, folder: Path, backend: str):
    """Chain a: the faulty NF. Chain b, on the same run: a TTL filter that passes everything."""
    out_a, out_b = folder / "a.pcap", folder / "b.pcap"
    path = write_config(
        folder / "isolation.yaml",
        ports=[{"name": "in_a", "type": "pcap", "rx": SIP_TRACE}, {"name": "out_a", "type": "pcap", "tx": out_a},
               {"name": "in_b", "type": "pcap", "rx": SIP_TRACE}, {"name": "out_b", "type": "pcap", "tx": out_b}],
        nfs=[{"name": "stray", "type": "plugin", "library": library, "ttl_below": TTL_BELOW},
             {"name": "any_ttl", "type": "ttl_filter", "min_ttl": 1}],
        chains=[{"from": "in_a", "path": ["stray"], "to": "out_a"},
                {"from": "in_b", "path": ["any_ttl"], "to": "out_b"}])
    report_path = folder / "report.json"
    proc = run_gpunfv(gpunfv, "run", path, "--backend", backend, "-q", "--report", report_path)
    if backend == "gpu" and proc.returncode != 0 and NO_GPU.search(proc.stderr):
        pytest.skip("no GPU here")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(report_path.read_text()), proc.stderr, out_a, out_b


def check_contained(report: dict, stderr: str, out_a: Path, out_b: Path) -> None:
    check_accounting(report)
    frames = [f for _, f in read_pcap(SIP_TRACE)[1]]
    faulting = sum(1 for f in frames if (ttl := ipv4_ttl(f)) is not None and ttl < TTL_BELOW)
    assert faulting > 0

    stray = report["nfs"]["stray"]
    assert stray["quarantined"] is True
    assert "stray reached outside its memory: quarantined" in stderr
    assert set(stray["drops"]) == {"nf_isolation_fault"}
    assert stray["in"] == len(frames) and stray["out"] + stray["drops"]["nf_isolation_fault"] == len(frames)
    # No faulting packet left, and the ones that did are the input's, unchanged: the refused
    # writes landed nowhere.
    sent_a = [f for _, f in read_pcap(out_a)[1]]
    assert len(sent_a) == stray["out"] == report["ports"]["out_a"]["tx_packets"]
    remaining = iter(frames)
    for f in sent_a:
        assert ipv4_ttl(f) is None or ipv4_ttl(f) >= TTL_BELOW
        assert any(f == g for g in remaining), "a frame out of chain a is not an input frame, in order"

    # The other chain lost nothing and changed nothing.
    assert "quarantined" not in report["nfs"]["any_ttl"]
    assert report["nfs"]["any_ttl"]["drops"] == {}
    assert [f for _, f in read_pcap(out_b)[1]] == frames


def test_faulty_plugin_is_quarantined_on_the_cpu(gpunfv, faulty_plugin, tmp_path):
    report, stderr, out_a, out_b = run_two_chains(gpunfv, faulty_plugin, tmp_path, "cpu")
    check_contained(report, stderr, out_a, out_b)


def test_faulty_plugin_is_quarantined_on_the_gpu(gpunfv, faulty_plugin, tmp_path):
    report, stderr, out_a, out_b = run_two_chains(gpunfv, faulty_plugin, tmp_path, "gpu")
    assert report["backend"] == "gpu"
    check_contained(report, stderr, out_a, out_b)
