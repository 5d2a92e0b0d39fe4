"""scripts/check-layers.py: the tree's includes go only down the layers and keep internal/ headers
in their component, and the check catches an include that goes up, from a port into an NF, from
the runtime into configuration parsing, or into another component's internal/, in a tree made to
have one."""
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
    """Writes `files` (paths under src/, or ../tests/... beside it) and returns src/."""
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
        "config/load.cpp": '#include <yaml-cpp/yaml.h>\n#include "core/config_node.h"\n'
                           '#include "chain/runtime_config.h"\n#include "config/internal/p.h"\n',
        "config/internal/p.h": '#include "config/internal/q.h"\n',
        "telemetry/r.h": '#include "config/config.h"\n',
        "cli/main.cpp": '#include "telemetry/r.h"\n',
        "io/gpuring/loops/l.cu": '#include "io/gpuring/loops/internal/ring_loops.h"\n'
                                 '#include "io/gpuring/ring/ring_set.h"\n',
        "../tests/io/gpuring/loops/l_test.cpp": '#include "io/gpuring/loops/internal/ring_loops.h"\n',
        "../tests/config/p_test.cpp": '#include "config/internal/p.h"\n',
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


def test_the_runtime_parsing_configuration_fails(tmp_path):
    src = tree(tmp_path, {
        "core/config_node.h": "",
        "chain/executor.cpp": '#include "core/config_node.h"\n',
        "sched/profiler.cpp": '#include <fmt/format.h>\n#include <yaml-cpp/yaml.h>\n',
        "chain/stage.cpp": '#include "config/config.h"\n',
    })
    r = check(src)
    assert r.returncode == 1
    assert ("src/chain/executor.cpp:1: includes core/config_node.h: chain parses no configuration"
            in r.stdout)
    assert "src/sched/profiler.cpp:2: includes yaml-cpp/yaml.h: sched parses no configuration" in r.stdout
    assert "src/chain/stage.cpp:1: includes config/config.h: config is above chain" in r.stdout


def test_an_internal_header_included_from_outside_its_component_fails(tmp_path):
    src = tree(tmp_path, {
        "io/gpuring/loops/internal/ring_loops.h": "",
        # another gpuring component, the layer above, and a sibling folder's tests
        "io/gpuring/nic_emu/e.cpp": '#include "io/gpuring/loops/internal/ring_loops.h"\n',
        "chain/ring_nf_runners.cu": '#include "io/gpuring/loops/gpu_ring_kernels.cuh"\n'
                                    '#include "io/gpuring/loops/internal/ring_loops.h"\n',
        "cli/main.cpp": '#include "config/internal/nf_factory.h"\n',
        "../tests/io/gpuring/ring/team_test.cpp": '#include "io/gpuring/loops/internal/ring_loops.h"\n',
        "../bench/gpuring_bench.cpp": '#include "io/gpuring/loops/internal/ring_loops.h"\n',
    })
    r = check(src)
    assert r.returncode == 1, r.stdout
    private = "io/gpuring/loops/internal/ is private to io/gpuring/loops/"
    assert (f"src/io/gpuring/nic_emu/e.cpp:1: includes io/gpuring/loops/internal/ring_loops.h: {private}"
            in r.stdout)
    assert (f"src/chain/ring_nf_runners.cu:2: includes io/gpuring/loops/internal/ring_loops.h: {private}"
            in r.stdout)
    assert ("src/cli/main.cpp:1: includes config/internal/nf_factory.h: config/internal/ is private to "
            "config/" in r.stdout)
    assert (f"tests/io/gpuring/ring/team_test.cpp:1: includes io/gpuring/loops/internal/ring_loops.h: "
            f"{private}" in r.stdout)
    assert (f"bench/gpuring_bench.cpp:1: includes io/gpuring/loops/internal/ring_loops.h: {private}"
            in r.stdout)
    assert "gpu_ring_kernels.cuh" not in r.stdout


def test_the_tree_keeps_private_headers_in_internal_folders():
    """The gpuring components and config hide their private headers in internal/ (the rule above
    then keeps them there)."""
    for component, private in {
        "io/gpuring/ring": ["slot_pool.h"],
        "io/gpuring/nic": ["nic_82599_plan.h"],
        "io/gpuring/loops": ["forward_loops.h", "host_loops.h", "ring_batch_loops.h", "ring_loops.h"],
        "config": ["chain_graph_config.h", "file_roles.h", "forward_config.h", "nf_factory.h"],
    }.items():
        folder = REPO / "src" / component
        for name in private:
            assert (folder / "internal" / name).is_file(), f"{component}/internal/{name}"
            assert not (folder / name).exists(), f"{component}/{name} is private: internal/"
