// Port-to-port forwarding between two GPU ring ports (P2PNIC, issue 7): the loop one kernel
// block (one thread of it) runs per ring pair, or a CPU thread in tests and for the `bn`
// variant. No host thread is in the data path: the block polls port A's rx ring, hands the
// slot a packet arrived in to port B's tx ring (descriptor hand-over, zero copy), and reclaims
// it once B's NIC has sent it.
//
// The two views share one slot pool (ForwardRings sets them up, forward_rings.h): A's rx
// descriptors are re-armed from it and B's tx completions return to it. Whose pool that is is
// the variant: `wr` B's (A's NIC writes into the sender's buffers), `rd` A's (B's NIC reads
// out of the receiver's; completions cross back through A's freed queue).
//
// Per packet: rx -> optional routing (the router's own RouterLogic, TTL and checksum as the
// router does) -> sampled integrity taken -> queued for tx -> [tamper: the test hook] ->
// integrity verified at tx admission (a mismatch is the drop integrity_mismatch, counted with
// A's rx drops, the slot freed by drop) -> posted. Tail updates are batched by both rings
// (tail_batch, tail_timeout_ns, as the port's loops). Stop: as ring_loops.h, for both rings at
// once: exit when the stop word says drain, A's ring is empty, the queue is empty and B's NIC
// has sent every posted descriptor; abort exits at once.
#pragma once

#include <cstdint>

#include "io/forward/sampled_integrity.h"
#include "io/gpuring/ring_loops.h"

namespace gpunfv::gpuring {

struct ForwardView {
  RingSetView rx;      // A's rx rings, registers, flags and done words, with the shared pool
  RingSetView tx;      // B's tx rings, registers and done words, with the shared pool
  uint32_t* sums;      // per pool slot: the sampled checksum taken at rx
  uint8_t route;       // run the NF (router) on each packet
  uint8_t integrity;   // sampled integrity rx -> tx
};
static_assert(std::is_trivially_copyable_v<ForwardView>);

// The GPU path runs no test hook.
struct NoTamper {
  GPUNFV_HD void operator()(uint8_t*, uint32_t) const {}
};

inline constexpr uint32_t kForwardRxBurst = 32;  // rx polls per turn before tx gets a look

// B's tx admission: the integrity check. A packet that fails is dropped on A's rx counters
// (the slot goes back to the pool by drop); one that passes counts as passed there.
template <typename Tamper>
struct ForwardAdmit {
  const ForwardView& f;
  RxRing& rx;
  Tamper& tamper;
  GPUNFV_HD bool operator()(uint32_t slot, uint32_t len) {
    uint8_t* frame = f.rx.slot_ptr(slot);
    tamper(frame, len);
    if (f.integrity && sampled_integrity(frame, len) != f.sums[slot]) {
      rx.drop(RxPacket{slot, len, 0}, DropReason::integrity_mismatch);
      return false;
    }
    rx.passed();
    return true;
  }
};

template <typename View, typename Fn, typename Tamper>
GPUNFV_HD void forward_ring_loop(const ForwardView& f, uint32_t ring, uint16_t port_id,
                                 const View& nf, Fn fn, Tamper tamper) {
  RxRing rx(f.rx, ring);
  TxRing tx(f.tx, ring);
  SpscQueue<uint64_t> to_tx = to_tx_queue(f.rx, ring);  // producer; tx holds the consumer
  ForwardAdmit<Tamper> admit{f, rx, tamper};
  uint32_t idle = 0;
  for (;;) {
    RxRing::Poll got = RxRing::Poll::empty;
    uint32_t received = 0;
    while (received < kForwardRxBurst) {
      RxPacket pkt;
      got = rx.poll(pkt);
      if (got != RxRing::Poll::packet) break;
      ++received;
      uint32_t len = pkt.length;
      if (f.route) {
        const DropReason why = run_nf_in_place(f.rx, pkt.slot, len, port_id, nf, fn);
        if (why != DropReason::none) {
          rx.drop(pkt, why);
          continue;
        }
      }
      if (f.integrity) f.sums[pkt.slot] = sampled_integrity(f.rx.slot_ptr(pkt.slot), len);
      to_tx.push(uint64_t(pkt.slot) | (uint64_t(len) << 32));  // holds every slot: never full
    }
    rx.flush_tail(false);
    const uint32_t freed = tx.reclaim();
    const uint32_t posted = tx.post(admit);
    tx.flush_tail(false);
    if (received || freed || posted) continue;
    if (++idle % kFlagEvery == 0) {
      const uint32_t stop = load_acquire_sys(&f.rx.flags->stop);
      if (stop == kStopAbort) {
        rx.finish(2u);
        tx.flush_tail(true);
        tx.finish(2u);
        return;
      }
      if (stop == kStopDrain && got == RxRing::Poll::empty && tx.queue_empty()) {
        rx.flush_tail(true);
        tx.flush_tail(true);
        if (tx.outstanding() == 0) break;
      }
    }
    ring_idle();
  }
  rx.finish();
  tx.finish();
}

}  // namespace gpunfv::gpuring
