#include "forward_bench/bare_io_loop.h"

#if GPUNFV_HAVE_DPDK_PORT
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#endif

namespace gpunfv::bench {

void bare_io_loop(uint16_t in, uint16_t out, const std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
#if GPUNFV_HAVE_DPDK_PORT
  rte_mbuf* burst[32];
  uint64_t tx = 0;
  uint32_t turns = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const uint16_t n = rte_eth_rx_burst(in, 0, burst, 32);
    if (n == 0) continue;
    const uint16_t s = rte_eth_tx_burst(out, 0, burst, n);
    tx += s;
    if (__builtin_expect(s < n, 0)) rte_pktmbuf_free_bulk(burst + s, n - s);
    if (__builtin_expect((++turns & 255) == 0, 0)) sent.fetch_add(tx, std::memory_order_relaxed), tx = 0;
  }
  sent.fetch_add(tx, std::memory_order_relaxed);
#else
  (void)in, (void)out, (void)stop, (void)sent;
#endif
}

}  // namespace gpunfv::bench
