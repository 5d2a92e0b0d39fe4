// HostRingBatchRunner: the batch-mode loops (ring_batch_loops.h) of every ring on CPU threads
// over a RingSet and RingBatches in host memory: how `placement: host` runs a gpuring port
// feeding a chain, and how the batch protocol is tested without a GPU. The loops exit once
// stopped (RingSet::request_stop or request_abort) and, for tx, once the host has handed back
// every batch rx published: keep serving batches until rx is done, then join(). Destroyed
// before join() returned (an error unwinding), nobody serves the batches any more, so the
// loops are aborted as they stand.
#pragma once

#include <cstdint>

#include "io/gpuring/loops/internal/host_loops.h"
#include "io/gpuring/loops/internal/ring_batch_loops.h"
#include "io/gpuring/loops/ring_batches.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

class HostRingBatchRunner : public HostLoops {
 public:
  HostRingBatchRunner(RingSet& rings, RingBatches& batches, uint16_t port_id)
      : HostLoops(rings, OnDestroy::abort) {
    const RingSetView v = rings.view();
    const RingBatchView bv = batches.view();
    for (uint32_t r = 0; r < v.p.rings; ++r) {
      spawn([v, bv, r, port_id] { rx_batch_loop(v, bv, r, port_id, SoloTeam{}); });
      spawn([v, bv, r] { tx_batch_loop(v, bv, r, SoloTeam{}); });
    }
  }
};

}  // namespace gpunfv::gpuring
