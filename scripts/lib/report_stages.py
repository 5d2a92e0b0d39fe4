#!/usr/bin/env python3
"""One line per chain stage of a gpunfv JSON report (launches, queue occupancy), the input rate
and the scheduler's last allocation.  usage: report_stages.py REPORT.json [SIZE]"""
import json
import sys


def main():
    r = json.load(open(sys.argv[1]))
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    secs = r.get("elapsed_s") or 1
    for name, p in r.get("ports", {}).items():
        if p.get("rx_packets"):
            mpps = p["rx_packets"] / secs / 1e6
            gbps = f", {mpps * size * 8 / 1e3:.1f} Gbit/s" if size else ""
            print(f"port {name}: {mpps:.2f} Mpps{gbps} over {secs:.1f} s, accounting_ok {r.get('accounting_ok')}")
    for c in r.get("chains", []):
        for st in c.get("stages", []):
            busy = st.get("busy_s", 0) / secs * 100
            print(f"  stage {st['nf'] or '-':8s} launches {st['launches']:7d} batches {st['batches']:7d} "
                  f"mean queued {st['mean_queued_packets']:10.0f} max {st['max_queued_packets']:7d} "
                  f"GPU busy {busy:5.1f}%")
    print("  allocation: " + str(r.get("scheduler", {}).get("line", "")))


if __name__ == "__main__":
    main()
