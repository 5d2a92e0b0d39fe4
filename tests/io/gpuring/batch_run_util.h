// The host's side of a batch-mode ring run in the CPU tests (ring_batch_loops_test,
// team_batch_loops_test): serve ready batches through a test chain until the rings drain.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "io/gpuring/nic_emu/nic_emulator.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring::ring_test {

// Whether every ring's rx loop has exited.
inline bool all_rx_done(const RingSet& rings) {
  for (uint32_t r = 0; r < rings.params().rings; ++r)
    if (!__atomic_load_n(&rings.host_done()[r].rx, __ATOMIC_ACQUIRE)) return false;
  return true;
}

// Serves ready batches with chain.serve_one(), asks the rings to drain once the NIC has
// delivered everything, and returns when rx is done and nothing is left to serve. Past
// `limit_s` it records a failure and aborts the rings. Between empty looks it yields, or sleeps
// 50 us (`sleep`: tests that run more threads than cores).
template <typename Chain>
void serve_until_drained(RingSet& rings, NicEmulator& nic, Chain& chain, int limit_s, bool sleep) {
  bool stopped = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (;;) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the loops did not drain in " << limit_s << " s";
      rings.request_abort();
      return;
    }
    if (chain.serve_one()) continue;
    if (!stopped && nic.rx_finished()) {
      rings.request_stop();
      stopped = true;
    }
    if (stopped && all_rx_done(rings) && !chain.serve_one()) return;
    if (sleep)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    else
      std::this_thread::yield();
  }
}

}  // namespace gpunfv::gpuring::ring_test
