// The persistent loops of one ring pair in batch mode (ring_batches.h): what the rx and tx
// blocks of a gpuring port feeding a chain run, and what CPU threads run for placement: host.
//
// rx: takes a free batch, fills its metadata for every received packet (the packet stays in
// its slot: slot_index names it; rx_ns and wire_ns are the ring clock when rx took the packet,
// mapped to the host's CLOCK_MONOTONIC and UNIX time by the view's offsets), publishes the batch as ready when it holds `capacity`
// packets or timeout_ns after its first packet. Without a free batch it leaves packets in the
// ring (the NIC then drops at a full ring: nic_rx_ring_full), as a driver without mbufs does.
// tx: takes done batches in order; queues every packet whose verdict is none, with its
// (possibly changed) length, for its ring's tx descriptors, frees the slot of every dropped
// packet, and returns the batch to the free queue; then reclaims and posts as ring_loops.h.
//
// Stop and abort as in ring_loops.h: rx drains its ring, publishes its partial batch and sets
// rx done; tx exits once rx is done, every published batch has come back, and the NIC has sent
// everything. On abort rx records its partial batch's count (batch_count) for the audit.
#pragma once

#include <cstdint>

#include "io/gpuring/ring_batches.h"
#include "io/gpuring/ring_loops.h"

namespace gpunfv::gpuring {

GPUNFV_HD inline void rx_batch_loop(const RingSetView& v, const RingBatchView& bv, uint32_t ring,
                                    uint16_t port_id) {
  RxRing rx(v, ring);
  SpscQueue<uint32_t> free_q = batch_free_queue(bv, ring);
  SysSpscQueue<ReadyRecord> ready = batch_ready_queue(bv, ring);
  RingBatchCounters& c = bv.counters[ring];
  OwnedWord<uint64_t> published(&c.published), batched(&c.packets_batched),
      by_timeout(&c.closed_by_timeout);
  uint32_t cur = kNoBatch, n = 0;
  uint64_t first_ns = 0, bytes = 0;
  uint8_t* base = nullptr;
  uint32_t* slots = nullptr;
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
    if (cur == kNoBatch && free_q.pop(cur)) {
      base = bv.batch_base(ring, cur);
      slots = bv.slots_of(ring, cur);
      bv.batch_count[bv.id(ring, cur)] = 0;
    }
    RxRing::Poll got = RxRing::Poll::no_slot;
    if (cur != kNoBatch) {
      RxPacket pkt;
      got = rx.poll(pkt);
      if (got == RxRing::Poll::packet) {
        const uint64_t now = ring_now_ns();
        reinterpret_cast<uint16_t*>(base + bv.off_len)[n] = static_cast<uint16_t>(pkt.length);
        reinterpret_cast<uint16_t*>(base + bv.off_port)[n] = port_id;
        // Unique per port, increasing within a ring.
        reinterpret_cast<uint64_t*>(base + bv.off_seq)[n] = batched.value * bv.rings + ring;
        // On the host's clocks (the offsets map the ring clock to them): rx_ns for latency,
        // wire_ns as the capture time, since descriptors carry none.
        reinterpret_cast<uint64_t*>(base + bv.off_rx_ns)[n] = now + uint64_t(bv.to_monotonic_ns);
        reinterpret_cast<uint64_t*>(base + bv.off_wire_ns)[n] = now + uint64_t(bv.to_unix_ns);
        slots[n] = pkt.slot;
        bytes += pkt.length;
        rx.passed();
        batched.add();
        if (n++ == 0) first_ns = now;
        if (n == bv.capacity) publish(false);
        continue;
      }
    }
    if (n > 0 && ring_now_ns() - first_ns >= bv.timeout_ns) publish(true);
    rx.flush_tail(false);
    if (++idle % kFlagEvery == 0) {
      const uint32_t stop = load_acquire_sys(&v.flags->stop);
      if (stop == kStopAbort) {
        if (cur != kNoBatch) bv.batch_count[bv.id(ring, cur)] = n;
        rx.finish(2u);
        return;
      }
      if (stop == kStopDrain && got == RxRing::Poll::empty) break;
    }
    ring_idle();
  }
  if (n > 0) publish(false);
  rx.finish();
}

GPUNFV_HD inline void tx_batch_loop(const RingSetView& v, const RingBatchView& bv, uint32_t ring) {
  TxRing tx(v, ring);
  SpscQueue<uint64_t> to_tx = to_tx_queue(v, ring);  // producer here; tx.post() consumes
  SysSpscQueue<uint64_t> done = batch_done_queue(bv, ring);
  SpscQueue<uint32_t> free_q = batch_free_queue(bv, ring);
  RingBatchCounters& c = bv.counters[ring];
  OwnedWord<uint64_t> returned(&c.returned), queued(&c.queued_for_tx),
      nf_drops(&c.freed_by_nf_drop), bad_length(&c.bad_length);
  uint32_t idle = 0;
  for (;;) {
    uint64_t rec;
    const bool took = done.pop(rec);
    if (took) {
      const auto batch = static_cast<uint32_t>(rec);
      const auto count = static_cast<uint32_t>(rec >> 32);
      const uint8_t* base = bv.batch_base(ring, batch);
      const uint32_t* slots = bv.slots_of(ring, batch);
      // Volatile loads: the chain's kernels wrote these since this block last read them.
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t slot = load_relaxed(&slots[i]);
        const uint8_t verdict = load_relaxed(base + bv.off_verdict + i);
        const uint32_t len = load_relaxed(reinterpret_cast<const uint16_t*>(base + bv.off_len) + i);
        if (verdict != static_cast<uint8_t>(DropReason::none)) {
          tx.free_dropped(slot);
          nf_drops.add();
        } else if (len == 0 || len > v.p.slot_bytes) {
          // The host counted it as a tx failure (egress checks the length before handing back).
          tx.free_dropped(slot);
          bad_length.add();
        } else {
          to_tx.push(uint64_t(slot) | (uint64_t(len) << 32));  // holds every slot: never full
          queued.add();
        }
      }
      free_q.push(batch);
      returned.add();
    }
    const uint32_t freed = tx.reclaim();
    const uint32_t posted = tx.post();
    tx.flush_tail(false);
    if (took || posted || freed) continue;
    if (++idle % kFlagEvery == 0) {
      if (load_acquire_sys(&v.flags->stop) == kStopAbort) {
        tx.flush_tail(true);
        tx.finish(2u);
        return;
      }
      if (load_acquire_sys(&v.done[ring].rx) && returned.value == load_acquire(&c.published) &&
          tx.queue_empty()) {
        tx.flush_tail(true);
        if (tx.outstanding() == 0) break;
      }
    }
    ring_idle();
  }
  tx.finish();
}

}  // namespace gpunfv::gpuring
