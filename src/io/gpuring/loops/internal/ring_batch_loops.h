// The persistent loops of one ring pair in batch mode (ring_batches.h): what the rx and tx
// blocks of a gpuring port feeding a chain run, and what CPU threads run for placement: host.
//
// rx: takes a free batch, fills its metadata for every received packet (the packet stays in
// its slot: slot_index names it; rx_ns and wire_ns are the ring clock when rx took the packet,
// one reading for the packets taken in one look, mapped to the host's CLOCK_MONOTONIC and UNIX
// time by the view's offsets), publishes the batch as ready when it holds `capacity` packets or
// once its first packet is timeout_ns old, whether or not more keep arriving. Without a free batch it leaves packets in the
// ring (the NIC then drops at a full ring: nic_rx_ring_full), as a driver without mbufs does.
// tx: takes done batches in order; queues every packet whose verdict is none, with its
// (possibly changed) length, for its ring's tx descriptors, frees the slot of every dropped
// packet, and returns the batch to the free queue; then reclaims and posts as ring_loops.h.
//
// Both loops run as a Team (team.h): a kernel block's warp on the GPU, a CPU thread (a team of
// one) for placement: host. rx looks at up to a team's worth of descriptors at once (never more
// than the batch has room for) and lane i writes packet i's metadata; tx's lanes read a done
// batch's slots, verdicts and lengths a team's worth at a time. The leader keeps everything
// whose order matters (queues, counters, publishing, the tx queue in packet order), so the
// results are the single thread's: the same seq numbers, batches and counts.
//
// Stop and abort as in ring_loops.h: rx drains its ring, publishes its partial batch and sets
// rx done; tx exits once rx is done, every published batch has come back, and the NIC has sent
// everything. On abort rx records its partial batch's count (batch_count) for the audit.
#pragma once

#include <cstdint>

#include "io/gpuring/loops/ring_batches.h"
#include "io/gpuring/loops/internal/ring_loops.h"

namespace gpunfv::gpuring {

template <typename Team = SoloTeam>
GPUNFV_HD void rx_batch_loop(const RingSetView& v, const RingBatchView& bv, uint32_t ring, uint16_t port_id,
                             Team team = {}) {
  // Every lane builds the protocol objects (constructors only read); the leader uses them.
  RxRing rx(v, ring);
  SpscQueue<uint32_t> free_q = batch_free_queue(bv, ring);
  SysSpscQueue<ReadyRecord> ready = batch_ready_queue(bv, ring);
  RingBatchCounters& c = bv.counters[ring];
  OwnedWord<uint64_t> published(&c.published), batched(&c.packets_batched),
      by_timeout(&c.closed_by_timeout);
  const bool lead = team.leader();
  const uint32_t lane = team.lane();
  // The leader's: the batch being filled, its packets and bytes so far, its first packet's time.
  uint32_t cur = kNoBatch, n = 0;
  uint64_t first_ns = 0, bytes = 0;
  auto publish = [&](bool timed_out) {
    bv.batch_count[bv.id(ring, cur)] = n;
    ready.push(ReadyRecord{cur, n, ring_now_ns(), bytes});  // holds every batch of the ring: never full
    published.add();
    if (timed_out) by_timeout.add();
    cur = kNoBatch;
    n = 0;
    bytes = 0;
  };
  uint32_t idle = 0;
  for (;;) {
    if (lead && cur == kNoBatch && free_q.pop(cur)) bv.batch_count[bv.id(ring, cur)] = 0;
    const uint32_t batch = team.share(cur);
    RxRing::Poll none = RxRing::Poll::no_slot;
    if (batch != kNoBatch) {
      const uint32_t at = team.share(n);  // where this look's packets go in the batch
      RxPacket mine{};
      const uint32_t k = rx.receive(team, mine, none, bv.capacity - at);
      if (k > 0) {
        const uint64_t now = team.share(ring_now_ns());
        const uint64_t seq0 = team.share(batched.value);
        if (lane < k) {
          uint8_t* base = bv.batch_base(ring, batch);
          const uint32_t i = at + lane;
          reinterpret_cast<uint16_t*>(base + bv.off_len)[i] = static_cast<uint16_t>(mine.length);
          reinterpret_cast<uint16_t*>(base + bv.off_port)[i] = port_id;
          // Unique per port, increasing within a ring.
          reinterpret_cast<uint64_t*>(base + bv.off_seq)[i] = (seq0 + lane) * bv.rings + ring;
          // On the host's clocks (the offsets map the ring clock to them): rx_ns for latency,
          // wire_ns as the capture time, since descriptors carry none.
          reinterpret_cast<uint64_t*>(base + bv.off_rx_ns)[i] = now + uint64_t(bv.to_monotonic_ns);
          reinterpret_cast<uint64_t*>(base + bv.off_wire_ns)[i] = now + uint64_t(bv.to_unix_ns);
          bv.slots_of(ring, batch)[i] = mine.slot;
        }
        const uint64_t burst_bytes = team.sum(lane < k ? mine.length : 0u);
        team.sync();  // every lane's metadata written before the leader publishes the batch
        if (lead) {
          bytes += burst_bytes;
          rx.passed(k);
          batched.add(k);
          if (n == 0) first_ns = now;
          n += k;
          // Full, or its first packet has waited the deadline while frames kept coming.
          if (n == bv.capacity) publish(false);
          else if (now - first_ns >= bv.timeout_ns) publish(true);
        }
        continue;
      }
    }
    if (lead) {
      if (n > 0 && ring_now_ns() - first_ns >= bv.timeout_ns) publish(true);
      rx.flush_tail(false);
    }
    uint32_t stop = kRunGo;
    if (lead && ++idle % kFlagEvery == 0) stop = load_acquire_sys(&v.flags->stop);
    stop = team.share(stop);
    if (stop == kStopAbort) {
      if (lead) {
        if (cur != kNoBatch) bv.batch_count[bv.id(ring, cur)] = n;
        rx.finish(2u);
      }
      return;
    }
    if (stop == kStopDrain && none == RxRing::Poll::empty) break;
    ring_idle();
  }
  if (lead) {
    if (n > 0) publish(false);
    rx.finish();
  }
}

// A done batch's packet as the tx lanes found it: slot | len << 32 | what to do << 48.
inline constexpr uint64_t kTxSend = 0, kTxNfDrop = 1, kTxBadLength = 2;

template <typename Team = SoloTeam>
GPUNFV_HD void tx_batch_loop(const RingSetView& v, const RingBatchView& bv, uint32_t ring, Team team = {}) {
  TxRing tx(v, ring);
  SpscQueue<uint64_t> to_tx = to_tx_queue(v, ring);  // producer here; tx.post_team() consumes
  SysSpscQueue<uint64_t> done = batch_done_queue(bv, ring);
  SpscQueue<uint32_t> free_q = batch_free_queue(bv, ring);
  RingBatchCounters& c = bv.counters[ring];
  OwnedWord<uint64_t> returned(&c.returned), queued(&c.queued_for_tx),
      nf_drops(&c.freed_by_nf_drop), bad_length(&c.bad_length);
  const bool lead = team.leader();
  const uint32_t lane = team.lane();
  uint32_t idle = 0;
  for (;;) {
    uint64_t rec = 0;
    bool took = false;
    if (lead) took = done.pop(rec);
    took = team.share(took);
    if (took) {
      rec = team.share(rec);
      team.sync();  // the leader's acquire of the record orders the lanes' reads below
      const auto batch = static_cast<uint32_t>(rec);
      const auto count = static_cast<uint32_t>(rec >> 32);
      const uint8_t* base = bv.batch_base(ring, batch);
      const uint32_t* slots = bv.slots_of(ring, batch);
      uint64_t sent = 0, dropped = 0, refused = 0;  // the leader's, stored once per batch
      for (uint32_t first = 0; first < count; first += team.size()) {
        // Volatile loads: the chain's kernels wrote these since this block last read them.
        uint64_t mine = 0;
        const uint32_t i = first + lane;
        if (i < count) {
          const uint32_t slot = load_relaxed(&slots[i]);
          const uint8_t verdict = load_relaxed(base + bv.off_verdict + i);
          const uint32_t len = load_relaxed(reinterpret_cast<const uint16_t*>(base + bv.off_len) + i);
          // A bad length: the host counted it as a tx failure (egress checks the length before
          // handing back).
          const uint64_t what = verdict != static_cast<uint8_t>(DropReason::none) ? kTxNfDrop
                                : (len == 0 || len > v.p.slot_bytes)             ? kTxBadLength
                                                                                 : kTxSend;
          mine = uint64_t(slot) | uint64_t(len) << 32 | what << 48;
        }
        const uint32_t here = count - first < team.size() ? count - first : team.size();
        // The leader acts on them in packet order.
        for (uint32_t j = 0; j < here; ++j) {
          const uint64_t e = team.from(j, mine);
          if (!lead) continue;
          const auto slot = static_cast<uint32_t>(e);
          const uint64_t what = e >> 48;
          if (what == kTxSend) {
            to_tx.push_unpublished(e & 0xFFFF'FFFF'FFFFull);  // holds every slot: never full
            ++sent;
          } else {
            tx.free_dropped_unpublished(slot);
            if (what == kTxNfDrop)
              ++dropped;
            else
              ++refused;
          }
        }
      }
      if (lead) {
        if (sent) queued.add(sent);
        if (dropped) nf_drops.add(dropped);
        if (refused) bad_length.add(refused);
        to_tx.publish_tail();
        tx.publish_dropped();
        free_q.push(batch);
        returned.add();
      }
    }
    const uint32_t freed = tx.reclaim(team);
    const uint32_t posted = tx.post_team(team);
    if (lead) tx.flush_tail(false);
    if (took || posted + freed != 0) continue;
    // Drained only with every batch the rx side published handed back.
    const TxIdle action = tx_idle_turn(v, ring, tx, team, idle,
                                       [&] { return returned.value == load_acquire(&c.published); });
    if (action == TxIdle::abort) return;
    if (action == TxIdle::drained) break;
    ring_idle();
  }
  if (lead) tx.finish();
}

}  // namespace gpunfv::gpuring
