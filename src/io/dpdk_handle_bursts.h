// Handle bursts on a DPDK ethdev's queue 0, inline: what DpdkPort's zc_rx_handles /
// zc_tx_handles do, callable without the virtual call, so a forward between two dpdk ports
// moves bursts the way dpdk-testpmd io does (io/forward/forward_bursts.cpp). rte_mbuf** and
// void** name the same pointer array. Include only where DPDK's headers are on the include
// path (cmake/live_ports.cmake lists those files).
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>

namespace gpunfv::dpdk_bursts {

// Up to `max` frames; where `bytes` is not null, their total length: a load from each header,
// in L1 since the frames were just received. That sum is what exact byte counts cost on ports
// that keep none (four separate sums measured no faster).
inline uint32_t rx(uint16_t port, void** handles, uint32_t max, uint64_t* bytes) {
  auto** mbufs = reinterpret_cast<rte_mbuf**>(handles);
  const uint16_t got = rte_eth_rx_burst(port, 0, mbufs, uint16_t(std::min<uint32_t>(max, 0xFFFF)));
  if (bytes) {
    uint64_t b = 0;
#pragma GCC unroll 4
    for (uint16_t k = 0; k < got; ++k) b += rte_pktmbuf_pkt_len(mbufs[k]);
    *bytes = b;
  }
  return got;
}

inline uint32_t tx(uint16_t port, void* const* handles, uint32_t n) {
  return rte_eth_tx_burst(port, 0, reinterpret_cast<rte_mbuf**>(const_cast<void**>(handles)),
                          uint16_t(std::min<uint32_t>(n, 0xFFFF)));
}

}  // namespace gpunfv::dpdk_bursts
