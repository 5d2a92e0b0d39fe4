// The rx half of the ring protocol, one ring, run by one thread (a kernel block's thread on the
// GPU, a std::thread in CPU tests) exactly as a poll-mode driver runs it (DPDK ixgbe):
//   poll DD at next_to_clean -> take the slot the descriptor held -> re-arm the descriptor with
//   a fresh slot from the pool -> hand the packet on -> after tail_batch re-armed descriptors,
//   or tail_timeout_ns after the first unannounced one, write RDT = next_to_clean - 1.
// If the pool is empty the packet stays in the ring (as DPDK does when mbuf allocation fails)
// and is taken once tx has returned a slot.
#pragma once

#include <cstdint>

#include "io/gpuring/ring/internal/slot_pool.h"

namespace gpunfv::gpuring {

// A received packet, still in its slot.
struct RxPacket {
  uint32_t slot;
  uint32_t length;
  uint32_t rss;
};

class RxRing {
 public:
  GPUNFV_HD RxRing(const RingSetView& v, uint32_t ring)
      : v_(v), ring_(ring), desc_(v.rx_desc + uint64_t(ring) * v.p.ring_size),
        sw_(v.rx_slot + uint64_t(ring) * v.p.ring_size), regs_(queue_registers(v.bar, ring)),
        counters_(v.rx_counters[ring]), done_(v.done[ring]), pool_(v, ring, SlotPool::Side::rx),
        packets_(&counters_.packets), bytes_(&counters_.bytes), passed_(&counters_.passed),
        alloc_waits_(&counters_.alloc_waits), tail_writes_(&counters_.tail_writes) {}

  enum class Poll { packet, empty, no_slot };

  // Takes the packet at next_to_clean if the NIC has written it back.
  GPUNFV_HD Poll poll(RxPacket& pkt) {
    RxDesc* d = desc_ + next_to_clean_;
    const uint64_t upper = load_acquire(&d->qword[1]);
    if (!(rx_upper_status(upper) & kRxStatusDD)) return Poll::empty;
    uint32_t fresh;
    if (!pool_.alloc(fresh)) {
      alloc_waits_.add();
      return Poll::no_slot;
    }
    pkt.slot = sw_[next_to_clean_];
    stamp_taken(pkt.slot);
    pkt.length = rx_upper_length(upper);
    pkt.rss = d->wb.rss;
    // Re-arm (read layout): hdr_addr = 0 also clears DD, which shares its quadword.
    d->read.pkt_addr = v_.slot_bus(fresh);
    d->read.hdr_addr = 0;
    sw_[next_to_clean_] = fresh;
    next_to_clean_ = (next_to_clean_ + 1) & (v_.p.ring_size - 1);
    packets_.add();
    bytes_.add(pkt.length);
    if (unannounced_++ == 0) first_unannounced_ns_ = ring_now_ns();
    if (unannounced_ >= v_.p.tail_batch) write_tail();
    return Poll::packet;
  }

  // The same for a team of lanes (team.h): each lane looks at one descriptor from
  // next_to_clean on (one memory round trip for the whole team), the leader takes the leading
  // run of written-back ones (re-arming each with a fresh slot, as poll does), and lane i < k
  // gets packet i in `mine`. Returns k, in ring order; 0 with `none` saying why (nothing
  // written back, or the pool is empty and the packets stay in the ring). Team-wide call.
  // RDT for the descriptors re-armed by the previous call is written here, at the start of the
  // next one, once the previous call's packets have been handed on: the tail write's system-
  // scope fence (a PCIe round trip) then no longer stands between taking packets and running
  // the NF on them. The NIC still gets descriptors back every tail_batch packets, one call late.
  // `max` (>= 1) caps k: batch mode takes no more than its batch has room for.
  template <typename Team>
  GPUNFV_HD uint32_t receive(const Team& team, RxPacket& mine, Poll& none, uint32_t max = 0xFFFFFFFFu) {
    if (team.leader() && unannounced_ >= v_.p.tail_batch) write_tail();
    const uint32_t mask = v_.p.ring_size - 1;
    const uint32_t first = team.share(next_to_clean_);
    const uint32_t lane = team.lane();
    const uint32_t at = (first + lane) & mask;
    bool ready = false;
    uint64_t upper = 0;
    if (lane < v_.p.ring_size - 1 && lane < max) {  // the NIC owns at most ring_size - 1 descriptors
      upper = load_acquire(&desc_[at].qword[1]);
      ready = rx_upper_status(upper) & kRxStatusDD;
    }
    const uint32_t n = team.leading(ready);
    if (n == 0) {
      none = Poll::empty;
      return 0;
    }
    if (lane < n) {
      mine.slot = sw_[at];
      mine.length = rx_upper_length(upper);
      mine.rss = desc_[at].wb.rss;
    }
    team.sync();  // every lane has its slot before the leader re-arms the descriptors
    uint32_t k = 0;
    if (team.leader()) k = rearm(n);
    k = team.share(k);
    if (lane < k) stamp_taken(mine.slot);
    const uint64_t bytes = team.sum(lane < k ? mine.length : 0u);
    if (team.leader()) bytes_.add(bytes);
    if (k == 0) none = Poll::no_slot;
    return k;
  }

  // The NF dropped the packet: its slot returns to the pool.
  GPUNFV_HD void drop(const RxPacket& pkt, DropReason why) {
    ++counters_.drops[static_cast<int>(why)];
    pool_.free_by_drop(pkt.slot);
  }
  GPUNFV_HD void passed(uint64_t n = 1) { passed_.add(n); }

  // Writes RDT if re-armed descriptors have waited tail_timeout_ns (or `force`).
  GPUNFV_HD void flush_tail(bool force) {
    if (unannounced_ == 0) return;
    if (force || ring_now_ns() - first_unannounced_ns_ >= v_.p.tail_timeout_ns) write_tail();
  }

  // `how`: 1 drained, 2 aborted (see ring_loops.h).
  GPUNFV_HD void finish(uint32_t how = 1u) {
    flush_tail(true);
    store_release_sys(&done_.rx, how);
  }

 private:
  // Leader: takes the first n written-back descriptors from next_to_clean, re-arming each
  // with a fresh slot; stops early when the pool is empty. One release for the whole burst.
  // The tail is written by the next receive() (or flush_tail), not here.
  GPUNFV_HD uint32_t rearm(uint32_t n) {
    uint32_t k = 0;
    for (; k < n; ++k) {
      uint32_t fresh;
      if (!pool_.alloc_unpublished(fresh)) {
        alloc_waits_.add();
        break;
      }
      RxDesc* d = desc_ + next_to_clean_;
      d->read.pkt_addr = v_.slot_bus(fresh);
      d->read.hdr_addr = 0;  // also clears DD
      sw_[next_to_clean_] = fresh;
      next_to_clean_ = (next_to_clean_ + 1) & (v_.p.ring_size - 1);
      packets_.add();
      if (unannounced_++ == 0) first_unannounced_ns_ = ring_now_ns();
    }
    pool_.publish_allocs();
    return k;
  }

  // When the packet in `slot` was taken, for the GPU side's latency (gpu_latency.h).
  GPUNFV_HD void stamp_taken(uint32_t slot) { v_.slot_taken_ns[slot] = ring_now_ns(); }

  GPUNFV_HD void write_tail() {
    // The descriptor before next_to_clean stays with the driver: RDT == RDH means "no
    // descriptors for the NIC", never "all of them".
    store_release_sys(regs_.rdt, (next_to_clean_ + v_.p.ring_size - 1) & (v_.p.ring_size - 1));
    tail_writes_.add();
    unannounced_ = 0;
  }

  const RingSetView& v_;
  uint32_t ring_;
  RxDesc* desc_;
  uint32_t* sw_;
  QueueRegisters regs_;
  RxCounters& counters_;
  RingDone& done_;
  SlotPool pool_;
  OwnedWord<uint64_t> packets_, bytes_, passed_, alloc_waits_, tail_writes_;
  uint32_t next_to_clean_ = 0;
  uint32_t unannounced_ = 0;
  uint64_t first_unannounced_ns_ = 0;
};

}  // namespace gpunfv::gpuring
