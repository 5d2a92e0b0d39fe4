"""scripts/check-layers.py: the tree's includes go only down the layers, and the check catches an
include that goes up (or from a port into an NF) in a tree made to have one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO

SCRIPT = REPO / "scripts" / "check-layers.py"


def check(src: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(src)], capture_output=True, text=True,
                          timeout=60)


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return src


def test_the_source_tree_has_no_upward_include():
    r = check(REPO / "src")
    assert r.returncode == 0, r.stdout + r.stderr


def test_downward_and_sideways_includes_pass(tmp_path):
    src = tree(tmp_path, {
        "core/a.h": '#include <vector>\n#include "core/b.h"\n',
        "core/b.h": "",
        "nf/n.cpp": '#include "core/a.h"\n#include "gpu/g.h"\n',
        "gpu/g.h": '#include "core/a.h"\n',
        "chain/c.cpp": '#include "sched/s.h"\n#include "io/p.h"\n#include "nf/n.h"\n',
        "sched/s.h": '#include "chain/c.h"\n',
        "cli/main.cpp": '#include "telemetry/r.h"\n',
    })
    r = check(src)
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_upward_include_fails_naming_file_and_line(tmp_path):
    src = tree(tmp_path, {
        "core/a.h": "",
        "io/gpuring/loops/l.h": '#include "core/a.h"\n\n#include "chain/classify.h"\n',
        "chain/e.cpp": '#include  "telemetry/report.h"\n',
    })
    r = check(src)
    assert r.returncode == 1
    assert "src/io/gpuring/loops/l.h:3: includes chain/classify.h: chain is above io" in r.stdout
    assert "src/chain/e.cpp:1: includes telemetry/report.h: telemetry is above chain" in r.stdout


def test_a_port_including_an_nf_fails(tmp_path):
    src = tree(tmp_path, {"io/forward/f.cpp": '#include "nf/router/router.h"\n'})
    r = check(src)
    assert r.returncode == 1
    assert "src/io/forward/f.cpp:1: includes nf/router/router.h: io includes nothing from nf" in r.stdout


def test_a_tree_without_layer_folders_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    r = check(tmp_path / "empty")
    assert r.returncode == 2
    assert "holds none of the layer folders" in r.stderr
