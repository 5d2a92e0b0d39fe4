#!/usr/bin/env bash
# Packages a CUDA build and the shared libraries it needs (all but the C library) into
# .gpu-package/bin, for a GPU host that has the NVIDIA driver but not the build's -dev packages.
# Copy the repository (or just scripts/, bench/, examples/, data/) and .gpu-package/bin there and
# run scripts/gpu-check.sh --suite NAME .gpu-package/bin OUT (docs/gpu-host.md).
# Usage: BUILD=build-cuda scripts/package-for-gpu-host.sh   (EXES: the binaries to package)
#
# DPDK (nf_bench's and gpunfv_tests' rte_lpm peer): linked statically by default
# (GPUNFV_DPDK_STATIC), so only libnuma and libbsd come along, found by ldd like the others. A
# shared DPDK link (-DGPUNFV_DPDK_STATIC=OFF) brings its librte_*.so the same way; its EAL then
# also loads every driver in DPDK's PMD directory (/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0)
# where that directory exists, and none where DPDK is not installed, which the peer does not need.
# nf_bench's other peers (Hyperscan, OpenSSL, intel-ipsec-mb) are shared libraries found by ldd.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-cuda}
EXES=${EXES:-gpunfv gpunfv_tests nf_bench collect_bench route_update_bench}
rm -rf .gpu-package/bin && mkdir -p .gpu-package/bin
for exe in $EXES; do cp "$BUILD/$exe" .gpu-package/bin/; done
cp scripts/report_html.py .gpu-package/bin/  # gpunfv report --html finds it beside the binary
for exe in .gpu-package/bin/*; do
  ldd "$exe" | awk '/=>/ {print $3}' | grep -vE 'libc\.so|libm\.so|ld-linux|libpthread|libdl\.so|librt\.so' || true
done | sort -u | xargs -r -I{} cp -L {} .gpu-package/bin/
# Every library must resolve with only .gpu-package/bin added to the search path.
for exe in $EXES; do
  if LD_LIBRARY_PATH=.gpu-package/bin ldd ".gpu-package/bin/$exe" | grep -q 'not found'; then
    echo "package-for-gpu-host: $exe has unresolved libraries:" >&2
    LD_LIBRARY_PATH=.gpu-package/bin ldd ".gpu-package/bin/$exe" | grep 'not found' >&2
    exit 1
  fi
done
du -sh .gpu-package/bin
