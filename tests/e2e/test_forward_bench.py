"""bench/forward_bench.cpp on one net_ring port, briefly: every row it prints has a rate, our
zero-copy rows lost no frame, and dpdk-testpmd (Debian's) runs both ways forward_bench drives
it: one interactive process for all rows (start/stop, on a pseudo-terminal) and a process per
row. No figure is compared with another: only that each row was measured."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest


def forward_bench(gpunfv):
    exe = gpunfv.parent / "forward_bench"
    if not exe.exists():
        pytest.skip(f"{exe} not built (needs libdpdk: cmake/live_ports.cmake)")
    return exe


@pytest.mark.parametrize("per_row", [False, True], ids=["testpmd-session", "testpmd-per-row"])
def test_every_row_is_measured_and_testpmd_gives_a_rate(gpunfv, tmp_path, per_row):
    exe = forward_bench(gpunfv)
    testpmd = shutil.which("dpdk-testpmd")
    if testpmd is None:
        pytest.skip("dpdk-testpmd not installed (scripts/install-deps.sh installs dpdk)")
    args = [str(exe), "--testpmd", testpmd, "--one-port", "--sizes", "64", "--seconds", "0.2",
            "--rounds", "2", "--no-copy", "--no-sweep", "--bare-loop", "--count-bytes", "off",
            "--out", str(tmp_path)]
    if per_row:
        args.append("--testpmd-per-row")
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {r["forwarder"]: r for r in json.loads((tmp_path / "results.json").read_text())["rows"]}
    assert set(rows) == {"gpunfv zc bytes-off", "bare io loop", "dpdk-testpmd io"}, rows.keys()
    for name, r in rows.items():
        # Rounds of 0.2 s: on a loaded machine one round of a loop may forward nothing.
        assert r["mpps"] > 0 and len(r["round_mpps"]) == 2 and any(x > 0 for x in r["round_mpps"]), (name, r)
    tpmd = rows["dpdk-testpmd io"]
    assert ("one testpmd process" in tpmd["note"]) != per_row, tpmd["note"]
    ours = rows["gpunfv zc bytes-off"]
    # No drop note (a drop would shrink the circulating seed), every post a whole burst.
    assert ours["note"].startswith("bytes: off, 32.0 frames/post"), ours["note"]
    assert ours["paired_testpmd_ratio"] > 0 and ours["latency_timed"] > 0, ours
    assert "dpdk-testpmd io" in (tmp_path / "table.txt").read_text()
