#!/usr/bin/env python3
"""The table of bench/isolation/run.sh: S_d's steady rate per frame size with isoPointer's
checks compiled in and out (median [min-max] over the rounds), and what the checks cost."""
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "chains"))
from summarize import load_one  # noqa: E402

RUN = re.compile(r"^sd-(?P<size>\d+)-(?P<build>checked|unchecked)\.r(?P<rep>\d+)$")


def main(reports: Path, logs: Path) -> None:
    runs: dict[tuple[int, str], list[dict]] = {}
    for f in sorted(reports.glob("*.json")):
        m = RUN.match(f.stem)
        if m:
            runs.setdefault((int(m["size"]), m["build"]), []).append(load_one(f, logs))
    print("| size | unit | checks on | checks off | cost | accounting |")
    print("|---|---|---|---|---|---|")
    for size in sorted({s for s, _ in runs}):
        cells = {}
        for build in ("checked", "unchecked"):
            rs = runs.get((size, build), [])
            key = "rate" if size < 512 else "rate_gbps"
            vals = sorted(r[key] for r in rs)
            cells[build] = (statistics.median(vals), vals[0], vals[-1]) if vals else None
            cells[build + "_ok"] = all(r["ok"] for r in rs)
        on, off = cells["checked"], cells["unchecked"]
        unit = "Mpps" if size < 512 else "Gbit/s"
        fmt = lambda c: f"{c[0]:.1f} [{c[1]:.1f}-{c[2]:.1f}]" if c else "-"
        cost = f"{(1 - on[0] / off[0]) * 100:+.1f}%" if on and off else "-"
        ok = "ok" if cells["checked_ok"] and cells["unchecked_ok"] else "FAILED"
        print(f"| {size} B | {unit} | {fmt(on)} | {fmt(off)} | {cost} | {ok} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
