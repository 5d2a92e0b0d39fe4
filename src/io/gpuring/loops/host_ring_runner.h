// HostRingRunner: the persistent rx and tx loops of every ring (ring_loops.h) on CPU threads
// over a RingSet in host memory, the same code the GPU kernels run. It is how the ring protocol
// is tested without a GPU, and a CPU fallback of the port. Destroyed while running, it stops
// the loops and waits for them to drain.
#pragma once

#include <cstdint>

#include "io/gpuring/loops/internal/host_loops.h"
#include "io/gpuring/loops/internal/ring_loops.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

class HostRingRunner : public HostLoops {
 public:
  template <typename Hook>
  HostRingRunner(RingSet& rings, uint16_t port_id, const Hook& hook) : HostLoops(rings, OnDestroy::drain) {
    const RingSetView v = rings.view();
    for (uint32_t r = 0; r < v.p.rings; ++r) {
      spawn([v, r, port_id, hook] { rx_ring_loop(v, r, port_id, hook); });
      spawn([v, r] { tx_ring_loop(v, r); });
    }
  }
};

}  // namespace gpunfv::gpuring
