#!/usr/bin/env python3
"""CPU use of each thread of a running process over an interval, from /proc (no packages).
gpunfv names its threads (gn-rx-*, gn-gpu-cXsY, gn-egress, gn-collect-*), so the table shows
which part of the pipeline holds the cores.  usage: thread_cpu.py PID [SECONDS]"""
import collections
import os
import sys
import time


def snap(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
            out[tid] = (comm, int(fields[11]) + int(fields[12]))  # utime + stime
        except OSError:
            pass
    return out


def main():
    pid, secs = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    tick = os.sysconf("SC_CLK_TCK")
    a = snap(pid)
    t0 = time.time()
    time.sleep(secs)
    b = snap(pid)
    dt = time.time() - t0
    rows, groups = [], collections.defaultdict(float)
    for tid, (comm, t) in b.items():
        if tid in a:
            cpu = (t - a[tid][1]) / tick / dt
            rows.append((cpu, comm, tid))
            groups[comm.rstrip("0123456789")] += cpu
    rows.sort(reverse=True)
    print(f"process CPU over {dt:.1f} s: {sum(r[0] for r in rows):.2f} cores in {len(rows)} threads")
    print("by kind: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(groups.items(), key=lambda x: -x[1])))
    for cpu, comm, tid in rows[:30]:
        print(f"  {comm:16s} {tid:>8s} {cpu * 100:6.1f}%")


if __name__ == "__main__":
    main()
