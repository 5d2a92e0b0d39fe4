#!/usr/bin/env bash
# Everything the forward benchmark needs on a host without DPDK or the build's -dev packages (a
# GPU host, say), in .gpu-package/fwd (git-ignored): dpdk-testpmd with its libraries and plugins
# and the testpmd-wrap wrapper (scripts/package-testpmd.sh), and forward_bench from BUILD with the shared
# libraries it loads (all but the C library) in .gpu-package/fwd/bin. Then, on that host:
#
#   LD_LIBRARY_PATH=.gpu-package/fwd/bin FORWARD_HOST=h200host TESTPMD=.gpu-package/fwd/testpmd-wrap \
#     scripts/forward-bench.sh .gpu-package/fwd/bin --seconds 2 --rounds 2
#
# Usage: BUILD=build scripts/package-forward-bench.sh   (any build: forward_bench uses no GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ -x "$BUILD/forward_bench" ] || { echo "package-forward-bench: no $BUILD/forward_bench (cmake --build $BUILD --target forward_bench)" >&2; exit 1; }
scripts/package-testpmd.sh
OUT=.gpu-package/fwd/bin
rm -rf "$OUT" && mkdir -p "$OUT"
cp "$BUILD/forward_bench" "$OUT/"
strip "$OUT/forward_bench" 2>/dev/null || true
ldd "$OUT/forward_bench" | awk '/=>/ {print $3}' | grep -vE 'libc\.so|libm\.so|ld-linux|libpthread|libdl\.so|librt\.so' \
  | sort -u | xargs -r -I{} cp -L {} "$OUT/"
if LD_LIBRARY_PATH="$OUT" ldd "$OUT/forward_bench" | grep -q 'not found'; then
  echo "package-forward-bench: forward_bench has unresolved libraries:" >&2
  LD_LIBRARY_PATH="$OUT" ldd "$OUT/forward_bench" | grep 'not found' >&2
  exit 1
fi
echo "package-forward-bench: $(du -sh .gpu-package/fwd | cut -f1) in .gpu-package/fwd (bin: $(du -sh "$OUT" | cut -f1))"
