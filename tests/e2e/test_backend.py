"""`--backend gpu`: where no GPU can be used (a build without CUDA, or a CUDA build on a machine
without a GPU) the run fails with exit status 1 and one clear error line, not a crash. On a
machine with a GPU the run succeeds, its accounting adds up, and its output captures equal the
CPU backend's byte for byte."""
from __future__ import annotations

import json
import re

import pytest

from conftest import ROUTER_DATA, TRACES, check_accounting, read_pcap, run_chain, run_gpunfv, \
    write_config

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
CLEAR_GPU_ERROR = re.compile(
    r"^gpunfv: (GPU )?error: .*(no CUDA device|no (CUDA|GPU) backend)", re.IGNORECASE)


def chain_config(tmp_path, with_router: bool, backend: str):
    folder = tmp_path / backend
    folder.mkdir()
    if with_router:
        outs = {p: folder / f"{p}.pcap" for p in ("p1", "p2")}
        config = write_config(
            folder / "router.yaml",
            ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE}] +
                  [{"name": p, "type": "pcap", "tx": path} for p, path in outs.items()],
            nfs=[{"name": "r1", "type": "router", "routes": ROUTER_DATA / "example.routes"}],
            chains=[{"from": "in", "path": ["r1"]}])
    else:
        outs = {"out": folder / "out.pcap"}
        config = write_config(
            folder / "passthrough.yaml",
            ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE},
                   {"name": "out", "type": "pcap", "tx": outs["out"]}],
            chains=[{"from": "in", "path": [], "to": "out"}])
    return config, outs


@pytest.mark.parametrize("with_router", [False, True], ids=["no-nf", "router"])
def test_gpu_backend(gpunfv, tmp_path, request, with_router):
    config, outs = chain_config(tmp_path, with_router, "gpu")
    report_path = tmp_path / "gpu-report.json"
    proc = run_gpunfv(gpunfv, "run", config, "--backend", "gpu", "-q", "--report", report_path)
    if proc.returncode != 0:
        assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stderr}"
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert CLEAR_GPU_ERROR.search(lines[0]), lines[0]
        assert not report_path.exists()
        return

    # A GPU is here: same accounting and the same output as the CPU backend.
    assert "CUDA backend: yes" in run_gpunfv(gpunfv, "version").stdout
    report = json.loads(report_path.read_text())
    check_accounting(report)
    assert report["backend"] == "gpu"
    cpu_config, cpu_outs = chain_config(tmp_path, with_router, "cpu")
    cpu_report = run_chain(gpunfv, cpu_config)
    assert report["ports"] == cpu_report["ports"]
    assert report["nfs"] == cpu_report["nfs"]
    for name in outs:
        assert read_pcap(outs[name]) == read_pcap(cpu_outs[name]), name
