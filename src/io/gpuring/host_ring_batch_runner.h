// HostRingBatchRunner: the batch-mode loops (ring_batch_loops.h) of every ring on CPU threads
// over a RingSet and RingBatches in host memory: how `placement: host` runs a gpuring port
// feeding a chain, and how the batch protocol is tested without a GPU. Each thread is a team of
// one (SoloTeam: team.h).
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "io/gpuring/ring_batch_loops.h"
#include "io/gpuring/ring_batches.h"
#include "io/gpuring/ring_set.h"

namespace gpunfv::gpuring {

class HostRingBatchRunner {
 public:
  HostRingBatchRunner(RingSet& rings, RingBatches& batches, uint16_t port_id) : rings_(rings) {
    const RingSetView v = rings.view();
    const RingBatchView bv = batches.view();
    for (uint32_t r = 0; r < v.p.rings; ++r) {
      threads_.emplace_back([v, bv, r, port_id] { rx_batch_loop(v, bv, r, port_id, SoloTeam{}); });
      threads_.emplace_back([v, bv, r] { tx_batch_loop(v, bv, r, SoloTeam{}); });
    }
  }
  // Destroyed before join() returned (an error unwinding): nobody serves the batches any
  // more, so a drain could wait for ever; the loops are aborted as they stand instead.
  ~HostRingBatchRunner() {
    for (auto& t : threads_)
      if (t.joinable()) rings_.request_abort();
    join();
  }
  HostRingBatchRunner(const HostRingBatchRunner&) = delete;
  HostRingBatchRunner& operator=(const HostRingBatchRunner&) = delete;

  // The loops exit once stopped (RingSet::request_stop or request_abort) and, for tx, once the
  // host has handed back every batch rx published: keep serving batches until rx is done.
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  RingSet& rings_;
  std::vector<std::thread> threads_;
};

}  // namespace gpunfv::gpuring
