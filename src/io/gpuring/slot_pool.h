// Packet-slot allocator of one ring pair, in ring memory. The rx side (one thread) allocates a
// fresh slot for every descriptor it re-arms; slots come back from the tx side after the NIC
// sent them (an SPSC queue, tx -> rx) or from the rx side itself when the NF drops a packet (a
// stack only rx touches). Counters record every transition, so the exit audit can prove that
// allocated == freed_by_tx + freed_by_drop + slots still in flight.
#pragma once

#include <cstdint>

#include "io/gpuring/ring_set_view.h"

namespace gpunfv::gpuring {

class SlotPool {
 public:
  GPUNFV_HD SlotPool(const RingSetView& v, uint32_t ring)
      : q_(v.queues[ring]),
        freed_(freed_queue(v, ring)),
        stash_(v.stash + uint64_t(ring) * v.p.slots_per_ring) {}

  // rx side. False when every slot of the ring is armed, queued or on the wire.
  GPUNFV_HD bool alloc(uint32_t& slot) {
    if (q_.stash_count > 0) {
      slot = stash_[--q_.stash_count];
    } else if (!freed_.pop(slot)) {
      return false;
    }
    ++q_.allocated;
    return true;
  }
  // rx side: a packet its NF dropped.
  GPUNFV_HD void free_by_drop(uint32_t slot) {
    stash_[q_.stash_count++] = slot;
    ++q_.freed_by_drop;
  }
  // tx side: a packet the NIC has sent. The queue holds every slot of the ring, so never full.
  GPUNFV_HD void free_by_tx(uint32_t slot) {
    freed_.push(slot);
    // Written only by tx; read by the host after exit.
    ++q_.freed_by_tx;
  }

 private:
  RingQueues& q_;
  SpscQueue<uint32_t> freed_;
  uint32_t* stash_;
};

}  // namespace gpunfv::gpuring
