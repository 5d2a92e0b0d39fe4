"""bench/run-all in its CPU-only quick mode, cut down to seconds: nf_bench (router, 64 B, two
short samples per row), the latency sweep on the CPU backend and, where built, the forward
benchmark. Checks the harness, not any figure: the results folder holds the README, the JSON
and valid PNG plots; every nf_bench row has its samples with min <= median <= max; all-threads
rows carry their scaling; checks passed; a part that cannot run is recorded, not hidden."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib

import pytest

from conftest import REPO

RUN_ALL = REPO / "bench" / "run-all"


def assert_png(path):
    """A PNG that opens: signature, IHDR with a sane size, every chunk's CRC, an IEND."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    at, kinds = 8, []
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind = data[at + 4:at + 8]
        body = data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert zlib.crc32(kind + body) == crc, (path, kind)
        kinds.append(kind)
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
            assert 100 < w < 10000 and 100 < h < 10000, (path, w, h)
        at += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds, (path, kinds)
    try:
        import matplotlib.image
    except ImportError:
        return
    img = matplotlib.image.imread(str(path))
    assert img.shape[0] > 100 and img.shape[1] > 100


def test_cpu_only_quick_run_writes_tables_json_and_plots(gpunfv, tmp_path):
    if not (gpunfv.parent / "nf_bench").exists():
        pytest.skip("nf_bench not built")
    out = tmp_path / "all"
    proc = subprocess.run(
        [sys.executable, str(RUN_ALL), "--bin", str(gpunfv.parent), "--out", str(out),
         "--machine", "testvm", "--quick", "--cpu-only", "--parts", "nf,latency,forward",
         "--nf", "router,firewall", "--nf-case", "router,firewall_acl1_1k", "--sizes", "64", "--min-seconds", "0.02", "--repeats", "2",
         "--packets", "20000", "--threads", "2", "--latency-seconds", "0.3",
         "--forward-seconds", "0.2", "--forward-sizes", "64"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["gpu"] is False and results["mode"] == "quick"
    assert set(results["parts"]) == {"nf", "latency", "forward"}
    for part, r in results["parts"].items():
        assert r["status"] in ("ok", "skipped"), (part, r)
    assert results["parts"]["nf"]["status"] == "ok"
    assert results["parts"]["latency"]["status"] == "ok"

    nf = json.loads((out / "nf" / "nf_bench.json").read_text())
    assert nf["repeats"] == 2 and nf["min_seconds"] == 0.02
    assert nf["worker_cpus"]
    names = [c["name"] for c in nf["cases"]]
    assert names == ["router", "firewall_acl1_1k"], names
    for case in nf["cases"]:
        rows = case["sizes"][0]["rows"]
        paths = [r["path"] for r in rows]
        assert "gpunfv CPU, 1 thread" in paths and "gpunfv CPU, 2 threads" in paths, paths
        assert not any("GPU" in p for p in paths), paths
        for r in rows:
            assert len(r["samples_mpps"]) == 2, r
            assert 0 < r["mpps_min"] <= r["mpps"] <= r["mpps_max"], r
            assert r["timed_seconds"] >= 2 * 0.02, r
            assert r["scope"], r
            if r["threads"] == 2:
                assert r["scaling"] > 0 and isinstance(r["poor_scaling"], bool), r
            if "check" in r:
                assert r["check"]["mismatches"] == 0 and r["check"]["compared"] > 0, r
    table = (out / "nf" / "nf_bench.md").read_text()
    assert "| size | path | work included | Mpps median [min-max]" in table
    assert "every check passed" in table

    pngs = [out / "nf" / "nf-throughput.png", out / "latency" / "latency-vs-load.png",
            out / "latency" / "latency-cdf.png"]
    if results["parts"]["forward"]["status"] == "ok":
        pngs.append(out / "forward" / "forward-throughput.png")
    for png in pngs:
        assert_png(png)

    readme = (out / "README.md").read_text()
    assert "testvm" in readme and "(nf_bench)" in readme
    assert "![nf-throughput.png](nf/nf-throughput.png)" in readme
    assert "chains" not in results["parts"]

    # --replot redraws from the JSON alone (for a run on a host without matplotlib).
    for png in pngs:
        png.unlink()
    proc = subprocess.run([sys.executable, str(RUN_ALL), "--out", str(out), "--replot"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for png in pngs:
        assert_png(png)
    assert (out / "README.md").read_text() == readme


def test_unknown_part_is_refused(gpunfv, tmp_path):
    proc = subprocess.run([sys.executable, str(RUN_ALL), "--bin", str(gpunfv.parent), "--out",
                           str(tmp_path / "x"), "--parts", "nf,bogus"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unknown part(s) bogus" in proc.stderr
    assert not (tmp_path / "x").exists()
