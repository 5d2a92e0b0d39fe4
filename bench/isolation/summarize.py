#!/usr/bin/env python3
"""The tables of bench/isolation/run.sh: S_d's steady rate per frame size (median [min-max] over
the rounds) with isoPointer's checks compiled in and out on the GPU, and with its NFs in NF
processes or in gpunfv run's process on the GPU and on the CPU; what each costs, from the
medians and round by round (each round's pair ran back to back, so drift in the host that
moves both runs of a round cancels in that round's cost), with every round's cost in order."""
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "chains"))
from summarize import load_one  # noqa: E402

RUN = re.compile(r"^sd-(?P<size>\d+)-(?P<variant>checked|unchecked|(?:gpu|cpu)-(?:manager|processes))\.r(?P<rep>\d+)$")


def main(reports: Path, logs: Path) -> None:
    runs: dict[tuple[int, str], dict[int, dict]] = {}
    for f in sorted(reports.glob("*.json")):
        m = RUN.match(f.stem)
        if m:
            runs.setdefault((int(m["size"]), m["variant"]), {})[int(m["rep"])] = load_one(f, logs)
    table(runs, "GPU backend, unco", ("checked", "unchecked"), ("checks on", "checks off"))
    print()
    table(runs, "GPU backend, unco", ("gpu-processes", "gpu-manager"), ("NFs in processes", "NFs in gpunfv run"))
    print()
    table(runs, "CPU backend", ("cpu-processes", "cpu-manager"), ("NFs in processes", "NFs in gpunfv run"))


def table(runs, title, variants, heads) -> None:
    print(f"{title}\n\n| size | unit | {heads[0]} | {heads[1]} | cost | cost per round | rounds | accounting |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sorted({s for s, v in runs if v in variants}):
        key = "rate" if size < 512 else "rate_gbps"
        by_round = [runs.get((size, build), {}) for build in variants]
        cells = []
        for rs in by_round:
            vals = sorted(r[key] for r in rs.values())
            cells.append((statistics.median(vals), vals[0], vals[-1]) if vals else None)
        on, off = cells
        unit = "Mpps" if size < 512 else "Gbit/s"
        fmt = lambda c: f"{c[0]:.1f} [{c[1]:.1f}-{c[2]:.1f}]" if c else "-"
        cost = f"{(1 - on[0] / off[0]) * 100:+.1f}%" if on and off else "-"
        in_order = [(1 - by_round[0][k][key] / by_round[1][k][key]) * 100
                    for k in sorted(by_round[0].keys() & by_round[1].keys())]
        paired = sorted(in_order)
        per_round = (f"{statistics.median(paired):+.1f}% [{paired[0]:+.1f} to {paired[-1]:+.1f}]"
                     if paired else "-")
        rounds = ", ".join(f"{c:+.1f}" for c in in_order) or "-"
        ok = "ok" if all(r["ok"] for rs in by_round for r in rs.values()) else "FAILED"
        print(f"| {size} B | {unit} | {fmt(on)} | {fmt(off)} | {cost} | {per_round} | {rounds} | {ok} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
