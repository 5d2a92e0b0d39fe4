#!/usr/bin/env bash
# Packs Debian's dpdk-testpmd (package dpdk-dev), the shared libraries it loads (all but the C
# library) and the two DPDK plugins forward_bench's testpmd rows need (net_ring and the ring
# mempool driver, from DPDK's PMD folder) into .gpu-package/fwd (git-ignored), with a wrapper
# .gpu-package/fwd/testpmd-wrap that runs it on a host without DPDK, such as a GPU host:
#
#   scripts/package-testpmd.sh                        # where dpdk-dev is installed
#   # copy .gpu-package/fwd and a build's forward_bench to the other host, then there:
#   FORWARD_HOST=h200host TESTPMD=.gpu-package/fwd/testpmd-wrap scripts/forward-bench.sh BUILD_DIR --seconds 2 --rounds 2
#
# Where DPDK's PMD folder exists (a host with DPDK installed), EAL loads every plugin from it by
# itself, and a packaged library beside them would register its driver a second time: there the
# wrapper runs the binary on the installed libraries. Elsewhere it puts .gpu-package/fwd/lib first on
# the library path and hands EAL the two plugins with -d. The last step runs the wrapper on two
# net_ring ports for a few seconds, with the installed DPDK folder hidden where it may (a private
# mount namespace), as the other host will run it.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${TESTPMD_BIN:-$(command -v dpdk-testpmd || true)}
PMDS=${DPDK_PMDS:-/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0}
OUT=.gpu-package/fwd
# A short run, as forward_bench starts it: io forwarding between two net_ring ports.
check_run() {
  timeout -s INT 4 "$OUT/testpmd-wrap" --no-huge --no-pci -m 512 --no-shconf --file-prefix "package-check-$$" \
    --vdev=net_ring0 --vdev=net_ring1 --lcores 0@0,1@0 --log-level=error -- --forward-mode=io \
    --nb-cores=1 --tx-first --stats-period=1 --no-lsc-interrupt --total-num-mbufs=2048 2>&1 || true
}
if [ "${1:-}" = --check-inside ]; then check_run; exit 0; fi
[ -n "$SRC" ] && [ -x "$SRC" ] || { echo "package-testpmd: no dpdk-testpmd (apt-get install dpdk-dev)" >&2; exit 1; }
for p in librte_net_ring librte_mempool_ring; do
  [ -e "$PMDS/$p.so.23" ] || { echo "package-testpmd: $PMDS/$p.so.23 missing (DPDK 22.11, ABI 23)" >&2; exit 1; }
done
rm -rf "$OUT" && mkdir -p "$OUT/lib" "$OUT/pmds"
cp -L "$SRC" "$OUT/dpdk-testpmd"
cp -L "$PMDS/librte_net_ring.so.23" "$PMDS/librte_mempool_ring.so.23" "$OUT/pmds/"
libs() { ldd "$1" | awk '/=>/ {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' || true; }
{ libs "$SRC"; for p in "$OUT"/pmds/*; do libs "$p"; done; } | sort -u | xargs -r -I{} cp -L {} "$OUT/lib/"

cat > "$OUT/testpmd-wrap" <<'WRAP'
#!/bin/sh
# dpdk-testpmd packaged with its libraries (scripts/package-testpmd.sh). Where DPDK is installed
# (its PMD folder exists), EAL loads every plugin from there by itself, and a packaged library
# beside them would register its driver a second time: there the installed libraries serve.
# Elsewhere the packaged ones do, and the two plugins the net_ring ports need come with -d.
here=$(dirname "$(readlink -f "$0")")
if [ -d /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0 ]; then exec "$here/dpdk-testpmd" "$@"; fi
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$here/dpdk-testpmd" -d "$here/pmds/librte_mempool_ring.so.23" -d "$here/pmds/librte_net_ring.so.23" "$@"
WRAP
chmod +x "$OUT/testpmd-wrap"

# Every library must resolve from the packaged folder alone.
for f in "$OUT/dpdk-testpmd" "$OUT"/pmds/*; do
  if LD_LIBRARY_PATH="$OUT/lib" ldd "$f" | grep -q 'not found'; then
    echo "package-testpmd: $f has unresolved libraries:" >&2
    LD_LIBRARY_PATH="$OUT/lib" ldd "$f" | grep 'not found' >&2
    exit 1
  fi
done

how="on the installed DPDK"
if unshare -m true 2>/dev/null; then
  log=$(unshare -m sh -c 'mount -t tmpfs none /usr/lib/x86_64-linux-gnu/dpdk && exec "$0" --check-inside' "$0" || true)
  how="with the installed DPDK hidden, as on a host without it"
else
  log=$(check_run)
fi
if ! grep -aqE "Tx-pps: +[1-9]" <<< "$log"; then
  echo "package-testpmd: the packaged testpmd did not forward ($how):" >&2
  tail -n 20 <<< "$log" >&2
  exit 1
fi
echo "package-testpmd: forwarded $how; $(du -sh "$OUT" | cut -f1) in $OUT; run it as TESTPMD=$OUT/testpmd-wrap"
