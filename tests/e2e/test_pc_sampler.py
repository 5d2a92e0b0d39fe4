"""bench/probes/pc_sampler.c (preloaded sampling profiler) and pc_report.py on a real run:
samples land in the process that burns the CPU, are named by DSO and symbol, and a program
started through a shell's exec survives the timer it inherits."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO

CONFIG = """\
ports:
  - {name: gen, type: generator, rate: 0, size: 64, flows: 1024, count: 20000000}
  - {name: out, type: discard}
chains:
  - {from: gen, path: [], to: out}
"""


def sampler_lib(gpunfv):
    if os.environ.get("GPUNFV_SANITIZED") == "1":
        # ASan's runtime must come first in the initial library list; a preloaded library
        # comes before it, so the sanitized binary refuses to start with the sampler.
        pytest.skip("the sampler is preloaded, and an ASan binary needs its runtime loaded first")
    lib = gpunfv.parent / "libgpunfv_pc_sampler.so"
    if not lib.exists():
        pytest.fail(f"{lib} missing: the build makes it (cmake/probes.cmake)")
    return lib


def test_samples_are_named_by_symbol_and_survive_a_shells_exec(gpunfv, tmp_path):
    lib = sampler_lib(gpunfv)
    cfg = tmp_path / "gen.yaml"
    cfg.write_text(CONFIG)
    samples = tmp_path / "samples"
    samples.mkdir()
    env = dict(os.environ, LD_PRELOAD=str(lib), PC_SAMPLER_DIR=str(samples), PC_SAMPLER_US="500")
    # The shell burns CPU first, so its interval timer is running when it execs gpunfv: without
    # the sampler's exec hook the new image dies of SIGPROF before it can install a handler.
    script = 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exec "$0" run "$1"'
    run = subprocess.run(["sh", "-c", script, str(gpunfv), str(cfg)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "every packet transmitted or dropped" in run.stdout
    bins = sorted(samples.glob("pcs-*.bin"))
    assert bins and all(b.with_suffix(".maps").exists() for b in bins)

    report = subprocess.run([sys.executable, str(REPO / "bench/probes/pc_report.py"), str(samples),
                             "--binary", f"gpunfv={gpunfv}", "--ips", "3"],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    # The exec kept the shell's pid: one process, gpunfv, with its threads' samples.
    section = report.stdout.split("(gpunfv)")
    assert len(section) == 2, report.stdout
    head = section[1].splitlines()[0]
    taken = int(head.split(":")[1].split()[0])
    # One sample per 0.5 ms of the process's CPU time: a few hundred here, fewer on a loaded
    # machine; some, and named inside our binary, is what the sampler must show.
    assert taken >= 10, report.stdout
    assert "gpunfv: gpunfv::" in section[1], report.stdout  # named inside our own binary
    assert "by instruction" in section[1]


def test_without_a_directory_it_does_nothing(gpunfv, tmp_path):
    lib = sampler_lib(gpunfv)
    env = dict(os.environ, LD_PRELOAD=str(lib))
    env.pop("PC_SAMPLER_DIR", None)
    run = subprocess.run([str(gpunfv), "--help"], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert run.returncode == 0 and not list(tmp_path.iterdir())


def test_report_says_what_is_wrong_with_a_folder_without_samples(tmp_path):
    run = subprocess.run([sys.executable, str(REPO / "bench/probes/pc_report.py"), str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "no pcs-*.bin" in run.stderr
