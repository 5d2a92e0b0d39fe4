// Port-to-port forwarding between two GPU ring ports (P2PNIC): the loop one kernel
// block's warp runs per ring pair (a Team, team.h: lane 0 runs the ring protocol, the warp
// takes each frame's sampled integrity sum, so large frames cost no more round trips than
// small ones), or a CPU thread (a team of one) in tests and for the `bn` variant. No host
// thread is in the data path: the block polls port A's rx ring, hands the slot a packet
// arrived in to port B's tx ring (descriptor hand-over, zero copy), and reclaims it once B's
// NIC has sent it.
//
// The two views share one slot pool (ForwardRings sets them up, forward_rings.h): A's rx
// descriptors are re-armed from it and B's tx completions return to it. Whose pool that is is
// the variant: `wr` B's (A's NIC writes into the sender's buffers), `rd` A's (B's NIC reads
// out of the receiver's; completions cross back through A's freed queue).
//
// Per packet: rx -> optional per-packet hook (as ring_loops.h's; a forward with `route:` runs the
// router's own logic, TTL and checksum as the router does) -> sampled integrity taken -> queued for tx -> [tamper: the test hook] ->
// integrity verified at tx admission (a mismatch is the drop integrity_mismatch, counted with
// A's rx drops, the slot freed by drop) -> posted. Tail updates are batched by both rings
// (tail_batch, tail_timeout_ns, as the port's loops). Stop: as ring_loops.h, for both rings at
// once: exit when the stop word says drain, A's ring is empty, the queue is empty and B's NIC
// has sent every posted descriptor; abort exits at once.
#pragma once

#include <cstdint>

#include "io/forward/sampled_integrity.h"
#include "io/gpuring/loops/internal/ring_loops.h"
#include "io/gpuring/ring/team.h"

namespace gpunfv::gpuring {

struct ForwardView {
  RingSetView rx;      // A's rx rings, registers, flags and done words, with the shared pool
  RingSetView tx;      // B's tx rings, registers and done words, with the shared pool
  uint32_t* sums;      // per pool slot: the sampled checksum taken at rx
  uint8_t route;       // run the per-packet hook (routing) on each packet
  uint8_t integrity;   // sampled integrity rx -> tx
};
static_assert(std::is_trivially_copyable_v<ForwardView>);

// The GPU path runs no test hook.
struct NoTamper {
  GPUNFV_HD void operator()(uint8_t*, uint32_t) const {}
};

inline constexpr uint32_t kForwardRxBurst = 32;  // rx packets per turn (at least) before tx gets a look

template <typename Hook, typename Tamper, typename Team = SoloTeam>
GPUNFV_HD void forward_ring_loop(const ForwardView& f, uint32_t ring, uint16_t port_id,
                                 const Hook& hook, Tamper tamper, Team team = {}) {
  // Every lane builds the protocol objects (their constructors only read); only the leader
  // uses them (team.h).
  RxRing rx(f.rx, ring);
  TxRing tx(f.tx, ring);
  SpscQueue<uint64_t> to_tx = to_tx_queue(f.rx, ring);  // producer; tx holds the consumer
  const bool lead = team.leader();
  const uint32_t lane = team.lane();
  uint32_t idle = 0;
  for (;;) {
    // rx: take up to a team's worth of packets, route each on its own lane, take their
    // integrity sums (several frames at once, a group of lanes each), then queue them for B's
    // tx ring in ring order.
    uint32_t received = 0;
    RxRing::Poll none = RxRing::Poll::empty;
    bool empty = false;
    while (received < kForwardRxBurst) {
      RxPacket mine{};
      const uint32_t k = rx.receive(team, mine, none);
      if (k == 0) {
        empty = none == RxRing::Poll::empty;
        break;
      }
      received += k;
      uint32_t len = mine.length, why = 0;
      if (f.route && lane < k) why = static_cast<uint32_t>(hook(f.rx.slot_ptr(mine.slot), f.rx.p.slot_bytes, len, port_id));
      team.sync();  // the hooks' writes before the lanes read the frames
      if (f.integrity) {
        const bool keep = lane < k && why == 0;
        team_each_frame(team, k, keep ? len : 0u, [&](uint32_t i, uint32_t group) {
          // Packet i (its group's), from lane i.
          const uint32_t slot_i = team.from(i < k ? i : 0, mine.slot);
          const uint32_t len_i = team.from(i < k ? i : 0, len);
          const uint32_t why_i = team.from(i < k ? i : 0, why);  // team-wide: not behind the i < k test
          const bool take = i < k && why_i == 0;
          const uint32_t sum = team_sampled_integrity_grouped(team, group, take ? f.rx.slot_ptr(slot_i) : nullptr,
                                                              take ? len_i : 0u);
          if (take && lane % group == 0) f.sums[slot_i] = sum;
          return true;
        });
        team.sync();  // every group's sums are written before the tx side reads them
      }
      for (uint32_t i = 0; i < k; ++i) {
        // Team-wide: every lane takes part in each from() (never inside a leader-only branch).
        const uint32_t slot = team.from(i, mine.slot);
        const uint32_t out_len = team.from(i, len);
        const uint32_t verdict = team.from(i, why);
        if (!lead) continue;
        if (verdict != 0)
          rx.drop(RxPacket{slot, out_len, 0}, static_cast<DropReason>(verdict));
        else
          to_tx.push_unpublished(uint64_t(slot) | (uint64_t(out_len) << 32));  // holds every slot: never full
      }
      if (lead) to_tx.publish_tail();
    }
    if (lead) rx.flush_tail(false);
    const uint32_t freed = tx.reclaim(team);
    // tx admission, a team's worth of packets at a time: each lane reads one queued entry, the
    // groups verify the integrity sums (a mismatch is dropped on A's rx counters, the slot freed
    // by drop), and the leader posts B's descriptors naming the same slots, in queue order.
    uint32_t posted = 0;
    for (;;) {
      const uint32_t n = team.share(lead ? tx.postable(team.size()) : 0u);
      if (n == 0) break;
      const uint32_t first = team.share(lead ? tx.queue_head() : 0u);
      team.sync();  // the leader has seen them queued: the lanes may read the entries
      const uint64_t entry = lane < n ? tx.queued_entry(first + lane) : 0;
      const auto slot = static_cast<uint32_t>(entry);
      const auto len = static_cast<uint32_t>(entry >> 32);
      if (lane < n) tamper(f.rx.slot_ptr(slot), len);
      uint32_t intact = 1;
      if (f.integrity) {
        team.sync();  // the tamper hook's writes before the groups read
        uint32_t verdict_for_me = 1;
        team_each_frame(team, n, lane < n ? len : 0u, [&](uint32_t i, uint32_t group) {
          const uint32_t slot_i = team.from(i < n ? i : 0, slot);
          const uint32_t len_i = team.from(i < n ? i : 0, len);
          const uint32_t sum = team_sampled_integrity_grouped(team, group, i < n ? f.rx.slot_ptr(slot_i) : nullptr,
                                                              i < n ? len_i : 0u);
          const uint32_t ok = i < n && sum == f.sums[slot_i] ? 1u : 0u;
          return ok;
        }, &verdict_for_me);
        intact = verdict_for_me;
      }
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t slot_i = team.from(i, slot);
        const uint32_t len_i = team.from(i, len);
        const uint32_t ok = team.from(i, intact);
        if (!lead) continue;
        if (ok) {
          rx.passed();
          tx.post_slot(slot_i, len_i);
          ++posted;
        } else {
          rx.drop(RxPacket{slot_i, len_i, 0}, DropReason::integrity_mismatch);
        }
      }
      if (lead) tx.consume_queued(n);
    }
    if (lead) tx.flush_tail(false);
    if (team.share(received + freed + posted) != 0) continue;
    // Idle: look at the stop word every kFlagEvery rounds (host memory: a PCIe read).
    constexpr uint32_t kKeepGoing = 0, kAbort = 1, kDrained = 2;
    uint32_t action = kKeepGoing;
    if (lead && ++idle % kFlagEvery == 0) {
      const uint32_t stop = load_acquire_sys(&f.rx.flags->stop);
      if (stop == kStopAbort) {
        action = kAbort;
      } else if (stop == kStopDrain && empty && tx.queue_empty()) {
        rx.flush_tail(true);
        tx.flush_tail(true);
        if (tx.outstanding() == 0) action = kDrained;
      }
    }
    action = team.share(action);
    if (action == kAbort) {
      if (lead) {
        rx.finish(2u);
        tx.flush_tail(true);
        tx.finish(2u);
      }
      return;
    }
    if (action == kDrained) break;
    ring_idle();
  }
  if (lead) {
    rx.finish();
    tx.finish();
  }
}

}  // namespace gpunfv::gpuring
