// HostRingRunner: runs the persistent rx and tx loops of every ring on CPU threads over a
// RingSet in host memory, the same code the GPU kernels run (ring_loops.h). It is how the ring
// protocol is tested without a GPU, and a CPU fallback of the port.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "io/gpuring/ring_loops.h"
#include "io/gpuring/ring_set.h"

namespace gpunfv::gpuring {

class HostRingRunner {
 public:
  template <typename View, typename Fn>
  HostRingRunner(RingSet& rings, uint16_t port_id, const View& nf, Fn fn) : rings_(rings) {
    const RingSetView v = rings.view();
    for (uint32_t r = 0; r < v.p.rings; ++r) {
      threads_.emplace_back([v, r, port_id, nf, fn] { rx_ring_loop(v, r, port_id, nf, fn); });
      threads_.emplace_back([v, r] { tx_ring_loop(v, r); });
    }
  }
  ~HostRingRunner() { stop_and_join(); }
  HostRingRunner(const HostRingRunner&) = delete;
  HostRingRunner& operator=(const HostRingRunner&) = delete;

  // Call once the NIC has delivered its last frame (NicEmulator::rx_finished()).
  void stop_and_join() {
    rings_.request_stop();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  RingSet& rings_;
  std::vector<std::thread> threads_;
};

}  // namespace gpunfv::gpuring
