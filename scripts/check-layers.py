#!/usr/bin/env python3
"""Layering check: no source file under src/ includes a header of a layer above its own.

  scripts/check-layers.py [SRC_DIR]     (default: the src/ beside this script)

The layers, lowest first (a layer may include its own and every lower one; chain and sched are
one layer, as are each's subfolders):

  core < gpu < nf < io < chain, sched < telemetry < cli

and one rule beyond the order: io (the ports) includes nothing from nf. Ports run NF code only
through the per-packet hooks the chain layer builds (io/gpuring/loops/ring_loops.h,
io/forward/forward_params.h), so a port never depends on an NF.

Only quoted includes whose first path component is a layer folder are looked at ("nf/x.h");
system headers and relative includes are not. Exit 0 when every include goes down or sideways,
1 with one line per offending include (file:line: what it includes, and why that is upward),
2 when SRC_DIR holds no layer folder.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

RANK = {"core": 0, "gpu": 1, "nf": 2, "io": 3, "chain": 4, "sched": 4, "telemetry": 5, "cli": 6}
FORBIDDEN = {("io", "nf"): "ports run NFs only through hooks the chain layer builds"}
SUFFIXES = {".h", ".hpp", ".cuh", ".cpp", ".cc", ".cu", ".c"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def violations(src: Path) -> list[str]:
    out = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        layer = path.relative_to(src).parts[0]
        if layer not in RANK:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1).split("/")[0]
            if target not in RANK or "/" not in m.group(1):
                continue
            where = f"{path.relative_to(src.parent)}:{number}: includes {m.group(1)}"
            if RANK[target] > RANK[layer]:
                out.append(f"{where}: {target} is above {layer}")
            elif (layer, target) in FORBIDDEN:
                out.append(f"{where}: {layer} includes nothing from {target} "
                           f"({FORBIDDEN[(layer, target)]})")
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
        print(f"check-layers: {len(found)} include(s) go up "
              "(core < gpu < nf < io < chain, sched < telemetry < cli; io includes no nf)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
