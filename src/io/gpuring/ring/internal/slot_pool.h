// Packet-slot allocator of one ring pair, in ring memory. The rx side (one thread) allocates a
// fresh slot for every descriptor it re-arms; slots come back from the tx side after the NIC
// sent them (an SPSC queue, tx -> rx) or from the rx side itself when the NF drops a packet (a
// stack only rx touches). Counters record every transition, so the exit audit can prove that
// allocated == freed_by_tx + freed_by_drop + slots still in flight.
#pragma once

#include <cstdint>

#include "io/gpuring/ring/ring_set_view.h"

namespace gpunfv::gpuring {

class SlotPool {
 public:
  enum class Side { rx, tx };
  // Each side builds its own SlotPool and calls only its own methods (alloc, free_by_drop: rx;
  // free_by_tx: tx).
  GPUNFV_HD SlotPool(const RingSetView& v, uint32_t ring, Side side)
      : freed_(freed_queue(v, ring)),
        stash_(v.stash + uint64_t(ring) * v.p.slots_per_ring),
        stash_count_(&v.queues[ring].stash_count, side == Side::rx),
        allocated_(&v.queues[ring].allocated, side == Side::rx),
        freed_by_drop_(&v.queues[ring].freed_by_drop, side == Side::rx),
        freed_by_tx_(&v.queues[ring].freed_by_tx, side == Side::tx) {}

  // rx side. False when every slot of the ring is armed, queued or on the wire.
  GPUNFV_HD bool alloc(uint32_t& slot) {
    if (stash_count_.value > 0) {
      slot = stash_[stash_count_.value - 1];
      stash_count_.add(uint32_t(-1));
    } else if (!freed_.pop(slot)) {
      return false;
    }
    allocated_.add();
    return true;
  }
  // rx side, batched: alloc_unpublished for each slot of a burst, then publish_allocs once.
  GPUNFV_HD bool alloc_unpublished(uint32_t& slot) {
    if (stash_count_.value > 0) {
      slot = stash_[stash_count_.value - 1];
      stash_count_.add(uint32_t(-1));
    } else if (freed_.pop_unpublished(slot)) {
      popped_ = true;
    } else {
      return false;
    }
    allocated_.add();
    return true;
  }
  GPUNFV_HD void publish_allocs() {
    if (popped_) freed_.publish_head();
    popped_ = false;
  }
  // rx side: a packet its NF dropped.
  GPUNFV_HD void free_by_drop(uint32_t slot) {
    stash_[stash_count_.value] = slot;
    stash_count_.add();
    freed_by_drop_.add();
  }
  // tx side: a packet the NIC has sent. The queue holds every slot of the ring, so never full.
  GPUNFV_HD void free_by_tx(uint32_t slot) {
    freed_.push(slot);
    freed_by_tx_.add();
  }
  // tx side, batched: free_by_tx_unpublished for each sent slot, then publish_frees once.
  GPUNFV_HD void free_by_tx_unpublished(uint32_t slot) {
    freed_.push_unpublished(slot);
    freed_by_tx_.add();
  }
  GPUNFV_HD void publish_frees() { freed_.publish_tail(); }

 private:
  SpscQueue<uint32_t> freed_;
  uint32_t* stash_;
  OwnedWord<uint32_t> stash_count_;
  OwnedWord<uint64_t> allocated_, freed_by_drop_, freed_by_tx_;
  bool popped_ = false;  // alloc_unpublished took from the queue since the last publish
};

}  // namespace gpunfv::gpuring
