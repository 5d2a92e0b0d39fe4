"""NF processes: NFs with `process: NAME` run in an OS process of their own, started by `gpunfv
run` (the Manager), on the Manager's batches in shared memory. Their output equals the same NFs
run in the Manager; a process killed mid-run loses only its own NFs' packets (nf_process_lost),
is started again and counted, and the chain beside it loses nothing; bad `process:` entries
are refused."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from conftest import (TRACES, check_accounting, read_pcap, run_chain, run_gpunfv, tshark_count,
                      write_config)

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"


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


def kill_mid_run(gpunfv: Path, path: Path, report_path: Path) -> tuple[int, str]:
    """Runs `path`, kills its NF process 1 s into the run; the killed pid and stderr."""
    run = subprocess.Popen([str(gpunfv), "run", str(path), "--backend", "cpu", "-q", "--report",
                            str(report_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not (first := children(run.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first, "no NF process started"
        time.sleep(1.0)  # packets flow through it
        os.kill(first[0], signal.SIGKILL)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 0, stdout + stderr
    assert "was lost" in stderr
    return first[0], stderr


def test_killed_nf_process_is_restarted_and_the_other_chain_loses_nothing(gpunfv, tmp_path):
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
    killed, stderr = kill_mid_run(gpunfv, path, report_path)
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
    _, stderr = kill_mid_run(gpunfv, path, report_path)
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

    path, _ = gtsm_config(tmp_path, "vendor-a", "gpu")
    proc = run_gpunfv(gpunfv, "run", path, "--backend", "gpu", "-q")
    assert proc.returncode != 0
    assert "CPU backend only" in proc.stderr or "no CUDA" in proc.stderr or "no GPU" in proc.stderr, proc.stderr
