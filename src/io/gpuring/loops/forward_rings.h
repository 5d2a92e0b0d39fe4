// ForwardRings: the rings of a `forward:` between two GPU ring ports, A (from) and B (to):
// both ports' RingSets, the one slot pool they share, and the per-slot integrity sums. Builds
// the ForwardView the forwarding loops run on (forward_loops.h) and audits every slot at exit.
//
// Variants (P2PNIC, Figure 4):
//   wr: A's rx descriptors are armed with B's slots: A's NIC writes each frame into the
//       sender's memory; B's tx completions free them locally, into B's own pool.
//   rd: A's own slots; B's NIC reads the frames out of A's memory, and B's tx completions go
//       back to A's allocator through A's freed queue (the cross-port return queue).
//   bn: the baseline through host memory: both rings in host memory, a host thread forwards
//       (as rd), so each frame crosses host DRAM twice (in from A's NIC, out to B's).
// On one GPU, wr and rd move the same bytes over the same link (NIC -> GPU memory -> NIC);
// what differs is whose memory the buffers are, which queue recycles them, and so which port's
// allocator runs dry first under load.
//
// Errors: std::invalid_argument when the two sets' shapes differ (rings, ring_size,
// slots_per_ring, slot_bytes) or their placements do, or bn is asked of device rings; GpuError
// when device memory cannot be had.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "io/gpuring/loops/internal/forward_loops.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

enum class ForwardVariant { wr, rd, bn };
std::string_view forward_variant_name(ForwardVariant v);
// "wr" | "rd" | "bn"; std::invalid_argument otherwise.
ForwardVariant parse_forward_variant(std::string_view s);

class ForwardRings {
 public:
  ForwardRings(RingSet& from, RingSet& to, ForwardVariant variant, bool route, bool integrity);
  ~ForwardRings();
  ForwardRings(const ForwardRings&) = delete;
  ForwardRings& operator=(const ForwardRings&) = delete;

  const ForwardView& view() const { return view_; }
  ForwardVariant variant() const { return variant_; }
  RingSet& from() { return from_; }
  RingSet& to() { return to_; }
  // The set whose slots carry the packets (wr: to, rd and bn: from).
  const RingSet& pool_owner() const { return variant_ == ForwardVariant::wr ? to_ : from_; }

  void request_stop() { from_.request_stop(); }
  void request_abort() { from_.request_abort(); }
  // Both sides of every ring pair have exited (A's rx done and B's tx done words).
  bool all_done() const;
  // After the loops have exited: every pool slot armed in A's rx ring, free, queued, or in B's
  // tx ring, exactly once; counter identities as SlotAudit's over A's rx and B's tx counters.
  SlotAudit audit() const;

 private:
  void arm_rx_with_owner_slots();

  RingSet& from_;
  RingSet& to_;
  ForwardVariant variant_;
  ForwardView view_{};
  uint32_t* sums_ = nullptr;
};

}  // namespace gpunfv::gpuring
