"""NF processes: NFs with `process: NAME` run in an OS process of their own, started by `gpunfv
run` (the Manager), on the Manager's batches in shared memory; on the GPU backend the Manager
performs their GPU calls. Their output equals the same NFs run in the Manager, and on the GPU
every example with its NFs in processes equals the CPU backend; a process killed mid-run loses
only its own NFs' packets (nf_process_lost), is started again and counted, and the chain beside
it loses nothing; one that hangs is killed and started again; bad `process:` entries are
refused. The GPU tests skip where no GPU can be used."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (REPO, TRACES, check_accounting, read_pcap, run_chain, run_gpunfv,
                      tshark_count, write_config)

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
NO_GPU = re.compile(r"^gpunfv: (GPU )?error: .*(no CUDA device|no (CUDA|GPU) backend)", re.I | re.M)


def gtsm_config(folder: Path, process: str | None, name: str) -> tuple[Path, Path]:
    out = folder / f"{name}.pcap"
    nf = {"name": "gtsm", "type": "ttl_filter", "min_ttl": 128}
    if process:
        nf["process"] = process
    path = write_config(folder / f"{name}.yaml",
                        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE},
                               {"name": "out", "type": "pcap", "tx": out}],
                        nfs=[nf], chains=[{"from": "in", "path": ["gtsm"], "to": "out"}])
    return path, out


def test_nf_in_a_process_equals_the_nf_in_the_manager(gpunfv, tmp_path):
    in_process, out_process = gtsm_config(tmp_path, "vendor-a", "process")
    in_manager, out_manager = gtsm_config(tmp_path, None, "manager")
    a = run_chain(gpunfv, in_process)
    b = run_chain(gpunfv, in_manager)
    assert a["processes"]["vendor-a"]["restarts"] == 0
    assert a["processes"]["vendor-a"]["pid"] > 0
    assert a["nfs"]["gtsm"]["process"] == "vendor-a"
    assert "processes" not in b
    for key in ("in", "out", "drops"):
        assert a["nfs"]["gtsm"][key] == b["nfs"]["gtsm"][key]
    assert a["nfs"]["gtsm"]["drops"] == {"ttl_below_minimum": tshark_count(SIP_TRACE, "ip.ttl < 128")}
    assert [f for _, f in read_pcap(out_process)[1]] == [f for _, f in read_pcap(out_manager)[1]]


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "nf-process"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def signal_mid_run(gpunfv: Path, path: Path, report_path: Path, backend: str = "cpu",
                   sig: int = signal.SIGKILL) -> tuple[int, str, str]:
    """Runs `path` and sends its NF process `sig` 1 s into the run; the pid signalled, stdout
    (the summary) and stderr. The process goes as lost. Skips on the GPU backend where no GPU
    can be used."""
    run = subprocess.Popen([str(gpunfv), "run", str(path), "--backend", backend, "--report",
                            str(report_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not (first := children(run.pid)) and time.monotonic() < deadline:
            if run.poll() is not None:
                stdout, stderr = run.communicate()
                if backend == "gpu" and NO_GPU.search(stderr):
                    pytest.skip("no GPU can be used here")
                pytest.fail(f"the run ended before its NF process started: {stderr}")
            time.sleep(0.05)
        assert first, "no NF process started"
        time.sleep(1.0)  # packets flow through it
        os.kill(first[0], sig)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 0, stdout + stderr
    assert "was lost" in stderr
    return first[0], stdout, stderr


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_killed_nf_process_is_restarted_and_the_other_chain_loses_nothing(gpunfv, tmp_path, backend):
    count, rate = 300_000, "100kpps"  # 3 s a chain
    path = write_config(
        tmp_path / "kill.yaml",
        ports=[{"name": "gen_a", "type": "generator", "count": count, "rate": rate, "seed": 1},
               {"name": "gen_b", "type": "generator", "count": count, "rate": rate, "seed": 2},
               {"name": "out", "type": "discard"}],
        nfs=[{"name": "in_process", "type": "ttl_filter", "min_ttl": 1, "process": "vendor-a"},
             {"name": "in_manager", "type": "ttl_filter", "min_ttl": 1}],
        chains=[{"from": "gen_a", "path": ["in_process"], "to": "out"},
                {"from": "gen_b", "path": ["in_manager"], "to": "out"}],
        settings={"batch_size": 256})
    report_path = tmp_path / "kill.json"
    killed, _, stderr = signal_mid_run(gpunfv, path, report_path, backend)
    assert "NF process vendor-a was lost" in stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    process = report["processes"]["vendor-a"]
    assert process["restarts"] == 1 and process["pid"] not in (killed, 0)
    lost = report["nfs"]["in_process"]["drops"]
    assert set(lost) == {"nf_process_lost"} and lost["nf_process_lost"] > 0
    assert report["nfs"]["in_process"]["in"] == count
    assert report["nfs"]["in_process"]["out"] == count - lost["nf_process_lost"]
    # The other chain: every packet through, none dropped.
    assert report["nfs"]["in_manager"] == {**report["nfs"]["in_manager"], "in": count, "out": count, "drops": {}}
    assert report["ports"]["gen_b"]["dropped"] == 0


def test_hung_nf_process_is_killed_and_started_again(gpunfv, tmp_path):
    """A process that answers nothing (stopped here with SIGSTOP) for nf_process_timeout_ms is
    killed and started again, as a lost one is; the run goes on to its end."""
    count = 300_000
    path = write_config(
        tmp_path / "hang.yaml",
        ports=[{"name": "gen", "type": "generator", "count": count, "rate": "100kpps", "seed": 4},
               {"name": "out", "type": "discard"}],
        nfs=[{"name": "gtsm", "type": "ttl_filter", "min_ttl": 1, "process": "vendor-a"}],
        chains=[{"from": "gen", "path": ["gtsm"], "to": "out"}],
        settings={"batch_size": 256, "nf_process_timeout_ms": 500})
    report_path = tmp_path / "hang.json"
    stopped, stdout, stderr = signal_mid_run(gpunfv, path, report_path, sig=signal.SIGSTOP)
    assert "NF process vendor-a answered nothing for 500 ms: killing it" in stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    process = report["processes"]["vendor-a"]
    assert process["restarts"] == 1 and process["hung"] == 1 and process["pid"] != stopped
    assert "restarts 1 (1 after it hung)" in stdout  # the summary
    gtsm = report["nfs"]["gtsm"]
    assert set(gtsm["drops"]) == {"nf_process_lost"} and gtsm["in"] == count
    assert gtsm["out"] == count - gtsm["drops"]["nf_process_lost"]


def test_restarted_ipsec_process_does_not_wait_for_batches_it_never_sees(gpunfv, tmp_path):
    """IPsec orders its batches by ingress number; a process started again mid-run begins at the
    first batch it sees instead of waiting for the ones that went by while it was lost."""
    count = 300_000
    sas = [{"spi": 0x2001, "enc_key": "0b5e1c2d3a4f5061728394a5b6c7d8e9c0ffee11",
            "auth_key": "1f2e3d4c5b6a79880716253443526170a1b2c3d4", "local": "198.51.100.1",
            "remote": "1.1.1.1", "match": "198.18.0.0/15"}]
    path = write_config(
        tmp_path / "ipsec.yaml",
        ports=[{"name": "gen", "type": "generator", "count": count, "rate": "100kpps", "seed": 3},
               {"name": "out", "type": "discard"}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "outbound", "iv_epoch": 1, "sas": sas,
              "process": "vendor-b"}],
        chains=[{"from": "gen", "path": ["esp"], "to": "out"}],
        settings={"batch_size": 256})
    report_path = tmp_path / "ipsec.json"
    _, _, stderr = signal_mid_run(gpunfv, path, report_path)
    assert "out of ingress order" not in stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    assert report["processes"]["vendor-b"]["restarts"] == 1
    esp = report["nfs"]["esp"]
    assert set(esp["drops"]) == {"nf_process_lost"} and esp["in"] == count


def test_process_entries_refused(gpunfv, tmp_path):
    path, _ = gtsm_config(tmp_path, "bad name!", "bad")
    proc = run_gpunfv(gpunfv, "run", path, "--backend", "cpu", "-q")
    assert proc.returncode == 2 and f"{path}:5:" in proc.stderr and "NF process name" in proc.stderr



def with_nf_processes(config: str) -> str:
    """The configuration with every NF in an NF process of its own (`process: nf-NAME`)."""
    out, in_nfs = [], False
    for line in config.splitlines():
        out.append(line)
        if re.match(r"^[a-z]", line):
            in_nfs = line.startswith("nfs:")
        elif in_nfs and (m := re.match(r"^  - name: ([A-Za-z0-9_-]+)", line)):
            out.append(f"    process: nf-{m.group(1)}")
    return "\n".join(out) + "\n"


def run_example(gpunfv: Path, folder: Path, name: str, backend: str, processes: bool) -> dict:
    """Runs examples/NAME.yaml from a copy in `folder` (data/ linked, out/ its own); the report,
    with the files the run wrote under "files"."""
    (folder / "examples").mkdir(parents=True)
    (folder / "data").symlink_to(REPO / "data")
    (folder / "out").mkdir()
    text = (REPO / "examples" / f"{name}.yaml").read_text()
    config = folder / "examples" / f"{name}.yaml"
    config.write_text(with_nf_processes(text) if processes else text)
    if processes:
        assert "process: nf-" in config.read_text()
    report_path = folder / "report.json"
    proc = run_gpunfv(gpunfv, "run", config, "--backend", backend, "-q", "--report", report_path)
    if backend == "gpu" and proc.returncode != 0 and NO_GPU.search(proc.stderr):
        pytest.skip("no GPU can be used here")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    report["files"] = {p.name: p.read_bytes() for p in sorted((folder / "out").iterdir())}
    return report


# Every example with NFs, but those whose output depends on timing (a live source at a fixed
# rate, GPU ring ports) or on another example's output.
EXAMPLES_WITH_NFS = ["chain-branches", "chain-fw-ipsec-nids-router", "firewall", "ipsec-outbound",
                     "nids", "router", "router-fulltable", "router-low-latency", "ttl-filter"]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("name", EXAMPLES_WITH_NFS)
def test_example_with_nfs_in_processes_equals_the_cpu_backend(gpunfv, tmp_path, name, backend):
    """Every NF of the example in a process of its own, on `backend`, against the CPU backend
    with every NF in the Manager."""
    apart = run_example(gpunfv, tmp_path / "processes", name, backend, processes=True)
    cpu = run_example(gpunfv, tmp_path / "manager", name, "cpu", processes=False)
    assert set(apart["processes"]) == {f"nf-{nf}" for nf in cpu["nfs"]}
    assert all(p["restarts"] == 0 for p in apart["processes"].values())
    for nf in apart["nfs"].values():
        assert nf.pop("process").startswith("nf-")
    for report in (apart, cpu):  # each run wrote into its own folder
        for nf in report["nfs"].values():
            if "alert_log" in nf:
                nf["alert_log"] = Path(nf["alert_log"]).name
    assert apart["ports"] == cpu["ports"]
    assert apart["nfs"] == cpu["nfs"]
    assert apart["files"].keys() == cpu["files"].keys()
    for f in cpu["files"]:
        assert apart["files"][f] == cpu["files"][f], f
