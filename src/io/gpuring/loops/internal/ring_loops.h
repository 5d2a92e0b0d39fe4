// The persistent loops of one ring pair: what each rx and tx kernel block runs (its warp, as a
// Team: team.h), and what a CPU thread runs (a team of one) in tests. The rx loop runs a
// per-packet hook on each packet in its slot, in place: any trivially copyable functor
//   GPUNFV_HD DropReason operator()(uint8_t* frame, uint32_t slot_bytes, uint32_t& len,
//                                   uint16_t port) const
// that returns DropReason::none to pass the packet on (with `len`, which it may change, at most
// slot_bytes) or the reason to drop it. The loops know nothing of what the hook does; the chain
// layer builds the NF hooks (chain/ring_nf_hook.h: classify, then an NF's per-packet function).
// A packet that passes goes to the tx side; a dropped one frees its slot, counted by reason. On
// the GPU the warp's lanes take up to 32 written-back descriptors in one look and run the hook
// on one packet each at once; the leader lane then passes or drops them in ring order, so the
// results are the CPU thread's.
//
// Stop protocol: the host sets flags->stop only after the NIC has delivered its last frame.
// rx then empties its ring (nothing new arrives), announces its tail and sets rx done; tx posts
// what is queued, announces its tail, waits until the NIC has sent every posted descriptor
// and sets tx done. Every slot is then free or armed in an rx descriptor (see SlotAudit).
// Abort (flags->stop == kStopAbort, set by the host's watchdog when a drain takes too long):
// both loops exit at their next flag check, drained or not, and set done = 2, so a hang is
// reported with the counters as they stood instead of blocking the host for ever.
#pragma once

#include <cstdint>

#include "core/drop_reason.h"
#include "io/gpuring/ring/rx_ring.h"
#include "io/gpuring/ring/team.h"
#include "io/gpuring/ring/tx_ring.h"

namespace gpunfv::gpuring {

// The stop flag and the rx done flag lie in host memory: on the GPU each read crosses PCIe, so
// an idle poller reads them only every kFlagEvery idle rounds.
inline constexpr uint32_t kFlagEvery = 32;

template <typename Hook, typename Team = SoloTeam>
GPUNFV_HD void rx_ring_loop(const RingSetView& v, uint32_t ring, uint16_t port_id, const Hook& hook,
                            Team team = {}) {
  // Every lane builds the protocol objects (constructors only read); the leader uses them.
  RxRing rx(v, ring);
  SpscQueue<uint64_t> to_tx = to_tx_queue(v, ring);
  const bool lead = team.leader();
  const uint32_t lane = team.lane();
  uint32_t idle = 0;
  for (;;) {
    RxPacket mine{};
    RxRing::Poll none = RxRing::Poll::empty;
    const uint32_t k = rx.receive(team, mine, none);
    if (k > 0) {
      // Each lane runs the hook on its own packet, in its slot.
      uint32_t len = mine.length, why = 0;
      if (lane < k) why = static_cast<uint32_t>(hook(v.slot_ptr(mine.slot), v.p.slot_bytes, len, port_id));
      team.sync();
      // The leader passes or drops them in ring order.
      for (uint32_t i = 0; i < k; ++i) {
        const uint32_t slot = team.from(i, mine.slot);
        const uint32_t out_len = team.from(i, len);
        const uint32_t verdict = team.from(i, why);
        if (!lead) continue;
        if (verdict == 0) {
          rx.passed();
          to_tx.push_unpublished(uint64_t(slot) | (uint64_t(out_len) << 32));  // holds every slot: never full
        } else {
          rx.drop(RxPacket{slot, out_len, 0}, static_cast<DropReason>(verdict));
        }
      }
      if (lead) to_tx.publish_tail();
      continue;
    }
    if (lead) rx.flush_tail(false);
    // Stop is honoured only with the ring empty: the NIC delivered everything before it.
    // Abort is honoured in any state (also while waiting for a slot).
    uint32_t stop = kRunGo;
    if (lead && ++idle % kFlagEvery == 0) stop = load_acquire_sys(&v.flags->stop);
    stop = team.share(stop);
    if (stop == kStopAbort) {
      if (lead) rx.finish(2u);
      return;
    }
    if (stop == kStopDrain && none == RxRing::Poll::empty) break;
    ring_idle();
  }
  if (lead) rx.finish();
}

// A tx loop's idle turn, for every loop that drives a TxRing: every kFlagEvery idle turns the
// leader reads the run flags; abort announces the tail and ends the ring at once, and a drained
// rx side (with nothing the loop still holds: `holds_none()`, asked only then) announces the
// tail and ends once the NIC has sent every posted frame. The team shares the answer.
enum class TxIdle : uint32_t { keep_going = 0, abort = 1, drained = 2 };

template <typename Team, typename HoldsNone>
GPUNFV_HD TxIdle tx_idle_turn(const RingSetView& v, uint32_t ring, TxRing& tx, Team& team,
                              uint32_t& idle, const HoldsNone& holds_none) {
  uint32_t action = uint32_t(TxIdle::keep_going);
  if (team.leader() && ++idle % kFlagEvery == 0) {
    if (load_acquire_sys(&v.flags->stop) == kStopAbort) {
      tx.flush_tail(true);
      tx.finish(2u);
      action = uint32_t(TxIdle::abort);
    } else if (load_acquire_sys(&v.done[ring].rx) && holds_none() && tx.queue_empty()) {
      tx.flush_tail(true);
      if (tx.outstanding() == 0) action = uint32_t(TxIdle::drained);
    }
  }
  return TxIdle(team.share(action));
}

template <typename Team = SoloTeam>
GPUNFV_HD void tx_ring_loop(const RingSetView& v, uint32_t ring, Team team = {}) {
  TxRing tx(v, ring);
  const bool lead = team.leader();
  uint32_t idle = 0;
  for (;;) {
    const uint32_t freed = tx.reclaim(team);
    const uint32_t posted = tx.post_team(team);
    if (lead) tx.flush_tail(false);
    if (team.share(posted + freed) != 0) continue;
    const TxIdle action = tx_idle_turn(v, ring, tx, team, idle, [] { return true; });
    if (action == TxIdle::abort) return;
    if (action == TxIdle::drained) break;
    ring_idle();
  }
  if (lead) tx.finish();
}

}  // namespace gpunfv::gpuring
