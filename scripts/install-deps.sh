#!/usr/bin/env bash
# Installs the Debian packages gpunfv needs, only those missing (needs root or sudo).
set -euo pipefail
# dpdk-dev: dpdk-testpmd, the peer of bench/forward-bench.sh (Debian 12 ships it there, not in dpdk).
# clang: make sanitize and make fuzz (ASan, UBSan and libFuzzer runtimes come with it).
# libcpp-httplib-dev: the metrics endpoint; python3-matplotlib: the HTML report's plots and those
# of bench/run-all and bench/latency/sweep.py; prometheus (promtool too) and chromium: the
# end-to-end tests of the metrics endpoint and the HTML report.
pkgs=(build-essential cmake pkg-config clang libpcap-dev libyaml-cpp-dev libfmt-dev nlohmann-json3-dev
      libcli11-dev libgtest-dev libbenchmark-dev libdpdk-dev libhyperscan-dev libssl-dev libipsec-mb-dev
      tshark python3-pytest python3-scapy python3-cryptography
      libxdp-dev libbpf-dev tcpreplay tcpdump dpdk-dev
      libcpp-httplib-dev python3-matplotlib prometheus chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "gpunfv: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
