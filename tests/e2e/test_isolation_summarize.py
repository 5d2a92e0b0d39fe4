"""bench/isolation/summarize.py on made-up reports: each build's median with min and max, the
cost from the medians, and the cost round by round (a round's two runs paired by its number),
each round's listed in order.
It checks the arithmetic of the isolation benchmark's tables, not any figure."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO
from test_chains_summarize import write_run


def test_cost_from_the_medians_and_round_by_round(tmp_path):
    reports, logs = tmp_path / "reports", tmp_path / "logs"
    reports.mkdir()
    logs.mkdir()
    # steady rate: the median of the second half (seconds 3 and 4) of each run
    on = {1: 90, 2: 120, 3: 99}    # checks on
    off = {1: 100, 2: 125, 3: 110}  # checks off: round costs 10%, 4%, 10%
    for rep in on:
        write_run(reports, logs, f"sd-64-checked.r{rep}", [5, 5, on[rep], on[rep]], 64)
        write_run(reports, logs, f"sd-64-unchecked.r{rep}", [5, 5, off[rep], off[rep]], 64)
    write_run(reports, logs, "sd-64-unchecked.r4", [5, 5, 200, 200], 64)  # no pair: not a round
    out = subprocess.run([sys.executable, str(REPO / "bench" / "isolation" / "summarize.py"),
                          str(reports), str(logs)], capture_output=True, text=True, check=True).stdout
    row = next(line for line in out.splitlines() if line.startswith("| 64 B"))
    assert "99.0 [90.0-120.0]" in row and "117.5 [100.0-200.0]" in row
    assert f"{(1 - 99 / 117.5) * 100:+.1f}%" in row
    assert "+10.0% [+4.0 to +10.0]" in row
    assert "| +10.0, +4.0, +10.0 |" in row  # each round's cost, in round order
    assert row.endswith("| ok |")
