// Packet accounting. Every packet that enters a port ends in exactly one of {transmitted,
// dropped with a reason}; these counters make that checkable: per port
// rx_packets = forwarded + dropped.total(), per NF in = out + drops.total().
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/drop_reason.h"

namespace gpunfv {

// A counter one thread writes while another reads it (the metrics endpoint, the per-second
// time series): relaxed single-writer updates, which are plain loads and stores on x86, so the
// writer pays nothing and the reader never sees a torn value.
inline void add_relaxed(uint64_t& c, uint64_t n) {
  std::atomic_ref<uint64_t> r(c);
  r.store(r.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
inline uint64_t load_relaxed(const uint64_t& c) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(c)).load(std::memory_order_relaxed);
}

struct DropCounts {
  std::array<uint64_t, kMaxDropReasons> by_reason{};
  void add(DropReason r, uint64_t n = 1) { add_relaxed(by_reason[static_cast<size_t>(r)], n); }
  uint64_t total() const;
  uint64_t operator[](DropReason r) const { return by_reason[static_cast<size_t>(r)]; }
  // A copy while the writing thread goes on counting.
  DropCounts load_relaxed() const;
  void merge(const DropCounts& o) {
    for (size_t r = 0; r < by_reason.size(); ++r) by_reason[r] += o.by_reason[r];
  }
};

// Per port. rx_* are written by the port's ingress thread, the rest by the egress thread;
// atomics (relaxed) only so the progress thread can read totals while packets flow.
struct PortCounters {
  std::string name;
  std::atomic<uint64_t> rx_packets{0}, rx_bytes{0};
  std::atomic<uint64_t> tx_packets{0}, tx_bytes{0};
  // False where a forward runs with `count_bytes: off` on this port's rx (tx) side: the bytes
  // there are not counted, and reports print none rather than the partial number.
  std::atomic<bool> rx_bytes_counted{true}, tx_bytes_counted{true};
  std::atomic<uint64_t> forwarded{0};     // received here, transmitted on some port
  std::atomic<uint64_t> dropped_total{0}; // received here, dropped (reasons below)
  DropCounts dropped;                     // egress thread only
  // Frames the port itself lost while the chain did not take them (a live source's receive
  // queue overflowing under backpressure); ingress thread; folded into `dropped` at the end.
  std::atomic<uint64_t> rx_queue_drops{0};
};

struct NfCounters {
  std::string name;
  std::string type;
  uint64_t in = 0, out = 0;
  // Frame bytes of the packets in `in` and `out`, each frame's length as egress sees it (in =
  // out + the bytes of the NF's drops).
  uint64_t in_bytes = 0, out_bytes = 0;
  DropCounts drops;
};

}  // namespace gpunfv
