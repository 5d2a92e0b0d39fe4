"""A gpuring port on a real NIC (`nic:`) where there is none: `gpunfv run` stops before any
packet with exit status 2 and one error line at the nic: line naming what is missing, on either
backend; and the emulator's settings are refused beside nic:."""
from __future__ import annotations

import pytest

from conftest import REPO, ROUTER_DATA, run_gpunfv
from test_config_errors import config_file, expect_config_error

# What this build and machine may lack first (dpdk_nic.h): the device, DPDK, or CUDA.
MISSING = ("no PCI device", "this build has no DPDK", "this build has no CUDA")


def nic_config(tmp_path, address: str, extra: str = "") -> object:
    return config_file(tmp_path, f"""\
ports:
  - name: gr
    type: gpuring
    nic: {address}
{extra}  - {{name: p1, type: "discard"}}
  - {{name: p2, type: "discard"}}
nfs:
  - {{name: r1, type: router, routes: "{ROUTER_DATA / 'example.routes'}"}}
chains:
  - {{from: gr, path: [r1]}}
""")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_absent_nic_is_named(gpunfv, tmp_path, backend):
    # Domain ffff does not exist on an ordinary machine.
    config = nic_config(tmp_path, "ffff:fe:1f.7")
    proc = run_gpunfv(gpunfv, "run", config, "--backend", backend, "--duration", "1", timeout=30)
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr}"
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("gpunfv: error: "), line
    assert f"{config}:4: nic:" in line, line
    assert any(m in line for m in MISSING), line
    assert proc.stdout == ""


def test_example_stops_with_the_reason(gpunfv, tmp_path):
    text = (REPO / "examples" / "gpuring-nic-router.yaml").read_text()
    text = text.replace("../out/", f"{tmp_path}/").replace("../data/", f"{REPO / 'data'}/")
    config = config_file(tmp_path, text)
    proc = run_gpunfv(gpunfv, "run", config, "--backend", "gpu", "--duration", "1", timeout=30)
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr}"
    assert f"{config}:13: nic: " in proc.stderr, proc.stderr
    # Without --duration the run could never end: said before anything else is tried.
    proc = run_gpunfv(gpunfv, "run", config, "--backend", "gpu", timeout=30)
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr}"
    line = proc.stderr.strip().splitlines()[-1]
    assert f"{config}:13:" in line and "--duration" in line, line


def test_bad_address(gpunfv, tmp_path):
    expect_config_error(gpunfv, nic_config(tmp_path, "03:00"), ":4:", "not a PCI address")


def test_emulator_settings_are_refused(gpunfv, tmp_path):
    expect_config_error(gpunfv, nic_config(tmp_path, "0000:03:00.0", "    rate: 1Mpps\n"), ":5:",
                        "NIC emulator setting")
    expect_config_error(gpunfv, nic_config(tmp_path, "0000:03:00.0", "    slot_bytes: 1536\n"), ":5:",
                        "multiple of 1024")


def test_forward_side_is_refused(gpunfv, tmp_path):
    config = config_file(tmp_path, """\
ports:
  - name: a
    type: gpuring
    nic: 0000:03:00.0
  - name: b
    type: gpuring
    sink: {type: "discard"}
forward:
  - {from: a, to: b}
""")
    expect_config_error(gpunfv, config, ":4:", "chain's from: only")
