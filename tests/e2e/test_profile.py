"""`gpunfv profile` without a GPU: a clear error and exit status 2; bad option values are caught
before any GPU work. (The measurements themselves run in scripts/gpu-check.sh --suite sched.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, run_gpunfv

ROUTER = REPO / "bench" / "nf_bench" / "router.yaml"


def has_gpu() -> bool:
    return Path("/dev/nvidia0").exists()


def test_profile_help(gpunfv):
    proc = run_gpunfv(gpunfv, "profile", "--help")
    assert proc.returncode == 0, proc.stderr
    for option in ("--sizes", "--batches", "--out", "--sms"):
        assert option in proc.stdout


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_profile_without_gpu_exits_2(gpunfv, tmp_path):
    out = tmp_path / "m.json"
    proc = run_gpunfv(gpunfv, "profile", ROUTER, "--out", out)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "profile needs a CUDA device" in lines[0], proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, needle", [
    (["--sizes", "32"], "--sizes: 32 outside 64..9216"),
    (["--batches", "512"], "--batches: at least two different batch sizes"),
])
def test_profile_bad_values_exit_2(gpunfv, args, needle):
    proc = run_gpunfv(gpunfv, "profile", ROUTER, *args)
    assert proc.returncode == 2
    assert needle in proc.stderr, proc.stderr
