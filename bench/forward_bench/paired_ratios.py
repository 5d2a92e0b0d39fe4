#!/usr/bin/env python3
"""Round-by-round ratios from forward_bench's results.json: for each frame size, ours (the
zero-copy rows) against testpmd and against the bare loop, and the bare loop against testpmd.

  paired_ratios.py DIR [DIR ...]     (DIR: a forward_bench --out folder)

forward_bench keeps every round's rate (round_mpps) and runs the rows of a round one after the
other, so a round's ratio compares runs seconds apart. On hosts whose speed jumps between two
levels from one second to the next (bench/results/forward-h100host-2026-11-25), the median of those
ratios over many rounds says more than the ratio of the best rounds; this prints both, the mean,
how many rounds came out at or above 1, and the ratio of the rows' upper quartiles.
"""
import json
import statistics
import sys

OURS = ("gpunfv zc bytes-off", "gpunfv zero-copy")


def quantile(values, q):
    v = sorted(values)
    return v[int(q * (len(v) - 1))]


def compare(name, a, b):
    pairs = [x / y for x, y in zip(a["round_mpps"], b["round_mpps"]) if y > 0]
    if not pairs:
        return
    print(f"  {name:<16} paired median {statistics.median(pairs):.3f}  mean {statistics.mean(pairs):.3f}"
          f"  >=1 in {sum(p >= 1 for p in pairs):>2} of {len(pairs):<2}"
          f"  best {max(a['round_mpps']) / max(b['round_mpps']):.3f}"
          f"  p75 {quantile(a['round_mpps'], 0.75) / quantile(b['round_mpps'], 0.75):.3f}")


def main(dirs):
    for d in dirs:
        with open(f"{d}/results.json") as f:
            rows = json.load(f)["rows"]
        by = {(r["forwarder"], r["bytes"]): r for r in rows if r["descriptor_batch"] == 32}
        print(f"== {d}")
        for size in sorted({r["bytes"] for r in rows}):
            ours = next((by[(o, size)] for o in OURS if (o, size) in by), None)
            bare, tpmd = by.get(("bare io loop", size)), by.get(("dpdk-testpmd io", size))
            print(f" {size} B ({len((ours or bare or tpmd)['round_mpps'])} rounds)")
            if ours and tpmd:
                compare("ours / testpmd", ours, tpmd)
            if ours and bare:
                compare("ours / bare", ours, bare)
            if bare and tpmd:
                compare("bare / testpmd", bare, tpmd)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
