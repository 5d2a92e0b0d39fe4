// HostForwardRunner: the forwarding loops (forward_loops.h) on CPU threads, one per ring pair,
// over rings in host memory: how the loops are tested without a GPU, and the `bn` variant's
// host thread. Destroyed while running, it stops the loops and waits for them to drain.
#pragma once

#include <cstdint>

#include "io/gpuring/loops/forward_rings.h"
#include "io/gpuring/loops/internal/host_loops.h"

namespace gpunfv::gpuring {

class HostForwardRunner : public HostLoops {
 public:
  template <typename Hook, typename Tamper>
  HostForwardRunner(ForwardRings& rings, uint16_t port_id, const Hook& hook, Tamper tamper)
      : HostLoops(rings, OnDestroy::drain) {
    const ForwardView f = rings.view();
    for (uint32_t r = 0; r < f.rx.p.rings; ++r)
      spawn([f, r, port_id, hook, tamper] { forward_ring_loop(f, r, port_id, hook, tamper); });
  }
};

}  // namespace gpunfv::gpuring
