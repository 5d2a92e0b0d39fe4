#!/usr/bin/env python3
"""Shares of CPU time per thread, DSO and symbol from what bench/probes/pc_sampler.c wrote.

  pc_report.py DIR [--binary NAME=LOCAL_PATH ...] [--top N]

DIR holds pcs-PID.bin (samples) and pcs-PID.maps (the process's /proc/self/maps). A sample's
instruction pointer is placed in its mapping, turned into the file's virtual address through
the file's PT_LOAD segments (readelf) and named by the symbol around it (nm, with sizes). The
files are looked up here: by the path in maps, else by --binary NAME=PATH (NAME: the file's
base name there), e.g. an unstripped local build of a binary that was packaged stripped; a
stripped file names only its exported symbols (shown as 'nearest exported: ...').
"""
import argparse
import bisect
import collections
import os
import struct
import subprocess
import sys

HEADER = struct.Struct("<8sQQQ")
RECORD = struct.Struct("<QQ")


def read_samples(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, interval_us, count, capacity = HEADER.unpack_from(data, 0)
    if magic != b"GPCSAMP1":
        raise SystemExit(f"{path}: not a pc_sampler file")
    kept = min(count, capacity)
    recs = [RECORD.unpack_from(data, HEADER.size + i * RECORD.size) for i in range(kept)]
    return interval_us, count, recs


def read_maps(path):
    maps = []
    with open(path) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or "x" not in parts[1]:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            maps.append((lo, hi, int(parts[2], 16), parts[5].strip()))
    maps.sort()
    return maps


class Elf:
    """PT_LOAD segments and symbols of one file."""

    def __init__(self, path):
        self.path = path
        self.loads = []  # (offset, vaddr, filesz)
        out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == "LOAD":
                self.loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
        self.stripped = False
        syms = self._nm([])
        if not syms:
            self.stripped = True
            syms = self._nm(["-D"])
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def _nm(self, extra):
        out = subprocess.run(["nm", "-C", "-S", "--defined-only", *extra, self.path],
                             capture_output=True, text=True).stdout
        syms = []
        for line in out.splitlines():
            f = line.split(None, 3)
            if len(f) == 4 and f[2] in "tTwWiI":
                syms.append((int(f[0], 16), int(f[1], 16), f[3]))
        return syms

    def vaddr(self, file_offset):
        for off, va, size in self.loads:
            if off <= file_offset < off + size:
                return file_offset - off + va
        return None

    def name(self, file_offset):
        vaddr = None
        for off, va, size in self.loads:
            if off <= file_offset < off + size:
                vaddr = file_offset - off + va
        if vaddr is None:
            return "?"
        i = bisect.bisect_right(self.addrs, vaddr) - 1
        if i < 0:
            return "?"
        addr, size, name = self.syms[i]
        if self.stripped:
            return f"nearest exported: {name}"
        return name if vaddr < addr + max(size, 1) else f"? (after {name})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--binary", action="append", default=[], help="NAME=LOCAL_PATH")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--ips", type=int, default=0,
                    help="also the N hottest instruction addresses per thread (the file's virtual"
                         " addresses, for objdump -d --start-address)")
    a = ap.parse_args()
    local = dict(b.split("=", 1) for b in a.binary)
    elves = {}

    def elf_for(path):
        base = os.path.basename(path)
        cand = local.get(base) or (path if os.path.isfile(path) else None)
        if not cand:
            return None
        if cand not in elves:
            elves[cand] = Elf(cand)
        return elves[cand]

    files = sorted(f for f in os.listdir(a.dir) if f.startswith("pcs-") and f.endswith(".bin"))
    if not files:
        raise SystemExit(f"{a.dir}: no pcs-*.bin")
    for fname in files:
        pid = fname[4:-4]
        interval_us, count, recs = read_samples(os.path.join(a.dir, fname))
        mpath = os.path.join(a.dir, f"pcs-{pid}.maps")
        maps = read_maps(mpath) if os.path.exists(mpath) else []
        los = [m[0] for m in maps]
        by_tid = collections.defaultdict(list)
        for ip, tid in recs:
            by_tid[tid].append(ip)
        exe = next((m[3] for m in maps if m[3].startswith("/")), "?")
        print(f"== pid {pid} ({os.path.basename(exe)}): {count} samples every {interval_us} us of CPU"
              f"{'' if count <= len(recs) else f', {len(recs)} kept'}")
        for tid, ips in sorted(by_tid.items(), key=lambda kv: -len(kv[1])):
            if len(ips) < 0.02 * len(recs):
                continue
            dsos, symbols, hot = collections.Counter(), collections.Counter(), collections.Counter()
            for ip in ips:
                i = bisect.bisect_right(los, ip) - 1
                if i >= 0 and ip < maps[i][1]:
                    lo, _, off, path = maps[i]
                    dso = os.path.basename(path) or "[anon]"
                    e = elf_for(path) if path.startswith("/") else None
                    sym = e.name(ip - lo + off) if e else "?"
                    va = e.vaddr(ip - lo + off) if e else None
                    hot[(dso, va if va is not None else ip - lo + off)] += 1
                else:
                    dso, sym = "?", "?"
                dsos[dso] += 1
                symbols[(dso, sym)] += 1
            n = len(ips)
            print(f"  thread {tid}: {n} samples ({100.0 * n / len(recs):.1f}% of the process's)")
            for dso, c in dsos.most_common(a.top):
                print(f"    {100.0 * c / n:6.2f}%  {dso}")
            print("    by symbol:")
            for (dso, sym), c in symbols.most_common(a.top):
                print(f"    {100.0 * c / n:6.2f}%  {dso}: {sym}")
            if a.ips:
                print("    by instruction (file virtual address):")
                for (dso, va), c in hot.most_common(a.ips):
                    print(f"    {100.0 * c / n:6.2f}%  {dso} {va:#x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
