#!/usr/bin/env python3
"""The tables of bench/isolation/run.sh: S_d's steady rate per frame size (median [min-max] over
the rounds) with isoPointer's checks compiled in and out on the GPU, and with its NFs in NF
processes or in gpunfv run's process on the GPU and on the CPU; what each costs."""
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "chains"))
from summarize import load_one  # noqa: E402

RUN = re.compile(r"^sd-(?P<size>\d+)-(?P<variant>checked|unchecked|(?:gpu|cpu)-(?:manager|processes))\.r(?P<rep>\d+)$")


def main(reports: Path, logs: Path) -> None:
    runs: dict[tuple[int, str], list[dict]] = {}
    for f in sorted(reports.glob("*.json")):
        m = RUN.match(f.stem)
        if m:
            runs.setdefault((int(m["size"]), m["variant"]), []).append(load_one(f, logs))
    table(runs, "GPU backend, unco", ("checked", "unchecked"), ("checks on", "checks off"))
    print()
    table(runs, "GPU backend, unco", ("gpu-processes", "gpu-manager"), ("NFs in processes", "NFs in gpunfv run"))
    print()
    table(runs, "CPU backend", ("cpu-processes", "cpu-manager"), ("NFs in processes", "NFs in gpunfv run"))


def table(runs, title, variants, heads) -> None:
    print(f"{title}\n\n| size | unit | {heads[0]} | {heads[1]} | cost | accounting |")
    print("|---|---|---|---|---|---|")
    for size in sorted({s for s, v in runs if v in variants}):
        cells = {}
        for build in variants:
            rs = runs.get((size, build), [])
            key = "rate" if size < 512 else "rate_gbps"
            vals = sorted(r[key] for r in rs)
            cells[build] = (statistics.median(vals), vals[0], vals[-1]) if vals else None
            cells[build + "_ok"] = all(r["ok"] for r in rs)
        on, off = cells[variants[0]], cells[variants[1]]
        unit = "Mpps" if size < 512 else "Gbit/s"
        fmt = lambda c: f"{c[0]:.1f} [{c[1]:.1f}-{c[2]:.1f}]" if c else "-"
        cost = f"{(1 - on[0] / off[0]) * 100:+.1f}%" if on and off else "-"
        ok = "ok" if cells[variants[0] + "_ok"] and cells[variants[1] + "_ok"] else "FAILED"
        print(f"| {size} B | {unit} | {fmt(on)} | {fmt(off)} | {cost} | {ok} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
