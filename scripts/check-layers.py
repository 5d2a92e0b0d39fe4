#!/usr/bin/env python3
"""Layering check: no source file under src/ includes a header of a layer above its own, and no
file includes a header private to a component it is not part of.

  scripts/check-layers.py [SRC_DIR]     (default: the src/ beside this script)

The layers, lowest first (a layer may include its own and every lower one; chain and sched are
one layer, as are each's subfolders):

  core < gpu < nf < io < chain, sched < config < telemetry < cli

and the rules beyond the order:
  - io (the ports) includes nothing from nf. Ports run NF code only through the per-packet hooks
    the chain layer builds (io/gpuring/loops/gpu_ring_kernels.cuh, io/forward/forward_params.h),
    so a port never depends on an NF.
  - the runtime (chain, sched) parses no configuration: it includes neither core/config_node.h
    nor yaml-cpp. config/ builds the RuntimeConfig (chain/runtime_config.h) it runs.
  - a header in a folder named internal/ is private to the folder that holds that internal/ (its
    component, e.g. io/gpuring/loops/internal/ to io/gpuring/loops/). Only files of that
    component include it; tests/ mirrors src/, so tests/io/gpuring/loops/ may too. The files
    beside SRC_DIR in tests/, bench/ and fuzz/ are checked for this rule as well.

Only quoted includes whose first path component is a layer folder are looked at ("nf/x.h"), and
yaml-cpp's angle includes; other system headers and relative includes are not. Exit 0 when every
include keeps the rules, 1 with one line per offending include (file:line: what it includes, and
which rule it breaks), 2 when SRC_DIR holds no layer folder.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

RANK = {"core": 0, "gpu": 1, "nf": 2, "io": 3, "chain": 4, "sched": 4, "config": 5,
        "telemetry": 6, "cli": 7}
FORBIDDEN = {("io", "nf"): "ports run NFs only through hooks the chain layer builds"}
NO_CONFIG_PARSING = {"chain", "sched"}
CONFIG_PARSERS = ("core/config_node.h", "yaml-cpp/")
SUFFIXES = {".h", ".hpp", ".cuh", ".cpp", ".cc", ".cu", ".c"}
INCLUDE = re.compile(r'^\s*#\s*include\s*(["<])([^">]+)[">]')
PRIVATE = "internal"
# Trees beside SRC_DIR checked for private includes only: tests/ mirrors src/, bench/ and fuzz/
# are part of no component.
CLIENT_TREES = ("tests", "bench", "fuzz")


def includes(path: Path):
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            yield number, m.group(1), m.group(2)


def private_violation(component: tuple[str, ...], target: str) -> str | None:
    """Why including `target` from a file of folder `component` (a path under src/, () for a
    file outside src/) breaks privacy, or None."""
    parts = target.split("/")
    if PRIVATE not in parts[:-1]:
        return None
    owner = tuple(parts[:parts.index(PRIVATE)])
    if component[:len(owner)] == owner:
        return None
    return f"{'/'.join(owner)}/{PRIVATE}/ is private to {'/'.join(owner)}/"


def source_files(tree: Path):
    for path in sorted(tree.rglob("*")):
        if path.suffix in SUFFIXES and path.is_file():
            yield path


def violations(src: Path) -> list[str]:
    out = []
    for path in source_files(src):
        rel = path.relative_to(src)
        layer = rel.parts[0]
        if layer not in RANK:
            continue
        for number, quote, name in includes(path):
            where = f"{path.relative_to(src.parent)}:{number}: includes {name}"
            if quote == "<":
                if layer in NO_CONFIG_PARSING and name.startswith("yaml-cpp/"):
                    out.append(f"{where}: {layer} parses no configuration (config/ does)")
                continue
            target = name.split("/")[0]
            if target not in RANK or "/" not in name:
                continue
            if RANK[target] > RANK[layer]:
                out.append(f"{where}: {target} is above {layer}")
            elif (layer, target) in FORBIDDEN:
                out.append(f"{where}: {layer} includes nothing from {target} "
                           f"({FORBIDDEN[(layer, target)]})")
            elif layer in NO_CONFIG_PARSING and name in CONFIG_PARSERS:
                out.append(f"{where}: {layer} parses no configuration (config/ does)")
            why = private_violation(rel.parts[:-1], name)
            if why:
                out.append(f"{where}: {why}")
    for tree in CLIENT_TREES:
        root = src.parent / tree
        if not root.is_dir():
            continue
        for path in source_files(root):
            rel = path.relative_to(root)
            component = rel.parts[:-1] if tree == "tests" else ()
            for number, quote, name in includes(path):
                why = quote == '"' and private_violation(component, name)
                if why:
                    out.append(f"{path.relative_to(src.parent)}:{number}: includes {name}: {why}")
    return out


def main() -> int:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src"
    if not any((src / layer).is_dir() for layer in RANK):
        print(f"check-layers: {src} holds none of the layer folders {', '.join(RANK)}", file=sys.stderr)
        return 2
    found = violations(src)
    for v in found:
        print(v)
    if found:
        print(f"check-layers: {len(found)} include(s) break the layering "
              "(core < gpu < nf < io < chain, sched < config < telemetry < cli; io includes no nf; "
              "chain and sched parse no configuration; internal/ headers stay in their component)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
