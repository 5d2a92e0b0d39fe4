#!/usr/bin/env bash
# Packs a CUDA build and the shared libraries it needs (all but the C library) into .carry/bin,
# for a GPU machine that has the driver but not our -dev packages. Usage: BUILD=build-cuda $0
#
# DPDK (router_bench's and gpunfv_tests' rte_lpm peer): linked statically by default
# (GPUNFV_DPDK_STATIC), so only libnuma and libbsd come along, found by ldd like the others. A
# shared DPDK link (-DGPUNFV_DPDK_STATIC=OFF) brings its librte_*.so the same way; its EAL then
# also loads every driver in DPDK's PMD directory (/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0)
# where that directory exists, and none where DPDK is not installed, which the peer does not need.
# nf_bench's other peers (Hyperscan, OpenSSL, intel-ipsec-mb) are shared libraries found by ldd.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-cuda}
EXES=${EXES:-gpunfv gpunfv_tests router_bench nf_bench collect_bench}
rm -rf .carry/bin && mkdir -p .carry/bin
for exe in $EXES; do cp "$BUILD/$exe" .carry/bin/; done
for exe in .carry/bin/*; do
  ldd "$exe" | awk '/=>/ {print $3}' | grep -vE 'libc\.so|libm\.so|ld-linux|libpthread|libdl\.so|librt\.so' || true
done | sort -u | xargs -r -I{} cp -L {} .carry/bin/
# Every library must resolve with only .carry/bin added to the search path.
for exe in $EXES; do
  if LD_LIBRARY_PATH=.carry/bin ldd ".carry/bin/$exe" | grep -q 'not found'; then
    echo "carry: $exe has unresolved libraries:" >&2
    LD_LIBRARY_PATH=.carry/bin ldd ".carry/bin/$exe" | grep 'not found' >&2
    exit 1
  fi
done
du -sh .carry/bin
