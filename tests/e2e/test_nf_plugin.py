"""NF plugins: examples/nf-plugin (dscp_mark) built against the SDK that `cmake --install` puts
out, loaded by path from a configuration, and checked against tshark's reading of its input and
output; the loader's refusals; on a GPU host, its GPU output equal to its CPU output."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import (REPO, TRACES, check_accounting, read_pcap, run_chain, run_gpunfv,
                      tshark_fields, write_config)
from plugin_build import build_plugin

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
DSCP, DROP_DSCP = 10, 1
REASONS = ("dscp_dropped",)  # the plugin's own
NO_GPU = re.compile(r"^gpunfv: (GPU )?error: .*(no CUDA device|no (CUDA|GPU) backend)", re.I | re.M)


@pytest.fixture(scope="session")
def plugin(gpunfv, tmp_path_factory) -> Path:
    """The example plugin, built against the SDK installed from gpunfv's own build tree (or, for
    a packaged gpunfv on a GPU host, built beside it: GPUNFV_NF_PLUGIN names the library)."""
    return build_plugin(gpunfv, tmp_path_factory, REPO / "examples" / "nf-plugin", "dscp_mark",
                        "GPUNFV_NF_PLUGIN")


def config(folder: Path, library: Path, backend: str, extra: str = "") -> tuple[Path, Path]:
    out = folder / f"{backend}.pcap"
    nf = {"name": "mark", "type": "plugin", "library": library, "dscp": DSCP, "drop_dscp": DROP_DSCP}
    path = write_config(folder / f"{backend}.yaml",
                        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE},
                               {"name": "out", "type": "pcap", "tx": out}],
                        nfs=[nf], chains=[{"from": "in", "path": ["mark"], "to": "out"}])
    if extra:
        path.write_text(path.read_text().replace(f"drop_dscp: {DROP_DSCP}", f"drop_dscp: {DROP_DSCP}{extra}"))
    return path, out


def ip_fields(pcap: Path) -> list[list[str]]:
    """Per packet: DSCP, ECN and checksum status (1: good) of its first IPv4 header."""
    return tshark_fields(pcap, ["ip.dsfield.dscp", "ip.dsfield.ecn", "ip.checksum.status"],
                         prefs=("ip.check_checksum:TRUE",))


def test_plugin_marks_and_drops_as_tshark_reads_it(gpunfv, plugin, tmp_path):
    path, out = config(tmp_path, plugin, "cpu")
    report = run_chain(gpunfv, path, plugin_reasons=REASONS)
    before = ip_fields(SIP_TRACE)
    dropped = sum(1 for dscp, _, _ in before if dscp == str(DROP_DSCP))
    assert dropped > 0
    mark = report["nfs"]["mark"]
    assert mark["type"] == "dscp_mark"
    assert mark["drops"] == {"dscp_dropped": dropped}
    after = ip_fields(out)
    kept = [row for row in before if row[0] != str(DROP_DSCP)]
    assert len(after) == len(kept) == report["ports"]["out"]["tx_packets"]
    for (dscp_in, ecn_in, _), (dscp, ecn, status) in zip(kept, after):
        if dscp_in:  # IPv4: re-marked, ECN kept, checksum still right
            assert (dscp, ecn, status) == (str(DSCP), ecn_in, "1")
        else:
            assert dscp == ""


def test_plugin_on_the_gpu_equals_the_cpu(gpunfv, plugin, tmp_path):
    gpu_path, gpu_out = config(tmp_path, plugin, "gpu")
    report_path = tmp_path / "gpu-report.json"
    proc = run_gpunfv(gpunfv, "run", gpu_path, "--backend", "gpu", "-q", "--report", report_path)
    if proc.returncode != 0 and NO_GPU.search(proc.stderr):
        pytest.skip("no GPU here")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    gpu_report = json.loads(report_path.read_text())
    check_accounting(gpu_report, REASONS)
    assert gpu_report["backend"] == "gpu"
    cpu_path, cpu_out = config(tmp_path, plugin, "cpu")
    cpu_report = run_chain(gpunfv, cpu_path, plugin_reasons=REASONS)
    assert gpu_report["nfs"]["mark"]["drops"] == cpu_report["nfs"]["mark"]["drops"]
    assert [f for _, f in read_pcap(gpu_out)[1]] == [f for _, f in read_pcap(cpu_out)[1]]


def a_library_of(gpunfv: Path) -> str:
    """A shared library that is not a plugin: one gpunfv itself links."""
    ldd = subprocess.run(["ldd", str(gpunfv)], capture_output=True, text=True).stdout
    found = re.search(r"=> (\S*libz\.so\S*)", ldd) or re.search(r"=> (/\S+\.so\S*)", ldd)
    assert found, ldd
    return found.group(1)


def expect_refused(gpunfv: Path, path: Path, *needles: str) -> None:
    proc = run_gpunfv(gpunfv, "run", path, "--backend", "cpu", "-q")
    assert proc.returncode != 0, proc.stdout
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_plugin_refusals(gpunfv, plugin, tmp_path):
    path, _ = config(tmp_path, tmp_path / "missing.so", "cpu")
    expect_refused(gpunfv, path, f"{path}:5:", "missing.so", "cannot open NF plugin")

    path, _ = config(tmp_path, Path(a_library_of(gpunfv)), "cpu")
    expect_refused(gpunfv, path, f"{path}:5:", "is not an NF plugin")

    stamp = tmp_path / "stamp.cpp"
    stamp.write_text('extern "C" const char gpunfv_nf_abi[] = "gpunfv NF interface 0, CUDA 9, checked";\n')
    other = tmp_path / "libother.so"
    subprocess.run(["c++", "-shared", "-fPIC", "-o", str(other), str(stamp)], check=True)
    path, _ = config(tmp_path, other, "cpu")
    expect_refused(gpunfv, path, f"{path}:5:", "was built for gpunfv NF interface 0, CUDA 9")

    path, _ = config(tmp_path, plugin, "cpu", ", dscpp: 3")
    expect_refused(gpunfv, path, f"{path}:5:", "unknown key 'dscpp'", "dscp, drop_dscp")

    copy = tmp_path / "libcopy.so"
    shutil.copy(plugin, copy)
    path, _ = config(tmp_path, plugin, "cpu")
    text = path.read_text()
    second = text.splitlines()[4].replace('"mark"', '"mark2"').replace(str(plugin), str(copy))
    path.write_text(text.replace("chains:", f"{second}\nchains:"))
    expect_refused(gpunfv, path, f"{path}:6:", "registers NF type 'dscp_mark', which is already registered")
