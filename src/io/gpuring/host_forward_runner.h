// HostForwardRunner: the forwarding loops (forward_loops.h) on CPU threads, one per ring pair,
// over rings in host memory: how the loops are tested without a GPU, and the `bn` variant's
// host thread.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "io/gpuring/forward_rings.h"

namespace gpunfv::gpuring {

class HostForwardRunner {
 public:
  template <typename View, typename Fn, typename Tamper>
  HostForwardRunner(ForwardRings& rings, uint16_t port_id, const View& nf, Fn fn, Tamper tamper)
      : rings_(rings) {
    const ForwardView f = rings.view();
    for (uint32_t r = 0; r < f.rx.p.rings; ++r)
      threads_.emplace_back([f, r, port_id, nf, fn, tamper] { forward_ring_loop(f, r, port_id, nf, fn, tamper); });
  }
  ~HostForwardRunner() { stop_and_join(); }
  HostForwardRunner(const HostForwardRunner&) = delete;
  HostForwardRunner& operator=(const HostForwardRunner&) = delete;

  // Call once the NIC has delivered its last frame.
  void stop_and_join() {
    rings_.request_stop();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  ForwardRings& rings_;
  std::vector<std::thread> threads_;
};

}  // namespace gpunfv::gpuring
