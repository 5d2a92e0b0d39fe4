#!/usr/bin/env bash
# Port-to-port forwarding benchmark: gpunfv zero-copy forward vs copy forward vs dpdk-testpmd
# (io mode) on DPDK net_ring vdevs, 64..1518 B. Writes bench/results/forward-<host>/
# (table.txt, results.json, run.txt with the machine and tool versions).
#
#   scripts/forward-bench.sh [BUILD_DIR] [extra forward_bench options]
#
# BUILD_DIR (default build) must hold forward_bench (any build: the benchmark uses no GPU).
# forward_bench links DPDK statically and runs anywhere. dpdk-testpmd is Debian's (package
# dpdk-dev) and is dynamically linked: for a host without DPDK, scripts/package-forward-bench.sh
# packs it with its libraries and the net_ring / ring mempool plugins (scripts/package-testpmd.sh)
# and forward_bench with its libraries into .gpu-package/fwd; there run
#   LD_LIBRARY_PATH=.gpu-package/fwd/bin FORWARD_HOST=h200host TESTPMD=.gpu-package/fwd/testpmd-wrap \
#     scripts/forward-bench.sh .gpu-package/fwd/bin --seconds 2 --rounds 2
# (FORWARD_HOST names the results folder). Without testpmd the testpmd rows are left out
# (TESTPMD=''). Extra options go to forward_bench, e.g. --seconds 2 --rounds 2, --one-port (one
# port looped onto itself on one core, both sides), --latency-sample N, --no-copy, --no-sweep,
# --bare-loop (rows of testpmd io's loop alone, built into forward_bench, on the same ports),
# --testpmd-per-row (a testpmd process per row instead of one interactive one),
# --count-bytes exact,off (the zero-copy rows: bytes counted exactly, and count_bytes: off, which
# reads no frame, as testpmd io; both by default).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
bin="$build/forward_bench"
[ -x "$bin" ] || { echo "no $bin: build it (cmake --build $build --target forward_bench)"; exit 1; }
testpmd=${TESTPMD-$(command -v dpdk-testpmd || true)}
host=${FORWARD_HOST:-$(hostname -s)}
out=bench/results/forward-$host
case " $* " in *" --one-port "*) out="$out-oneport" ;; esac
mkdir -p "$out"
cpus=$(nproc)
# Two forwarding CPUs: the last two, away from CPU 0 where the system and the main thread live,
# when there are more than two.
if [ "$cpus" -gt 2 ]; then pin="$((cpus - 2)),$((cpus - 1))"; else pin="0,1"; fi
{
  echo "host: $host, $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "kernel: $(uname -r)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "date: $(date -u +%FT%TZ)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  if [ -n "$testpmd" ]; then
    echo "testpmd: $testpmd"
    echo "testpmd libraries (package these for a host without DPDK):"
    { ldd "$testpmd" 2>/dev/null || echo "(not an ELF binary: a wrapper)"; } | grep -E 'rte_|numa|pcap|bsd|wrapper' | sed 's/^/  /' || true
  else
    echo "testpmd: not found (rows left out)"
  fi
} > "$out/run.txt"
cat "$out/run.txt"
"$bin" --testpmd "$testpmd" --cpus "$pin" --out "$out" --host "$host" "$@" | tee "$out/stdout.txt"
