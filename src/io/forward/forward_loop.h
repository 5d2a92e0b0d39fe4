// Internal to io/forward: what the forwarding loops share across their source files (the
// loop clock and the per-thread loop state). Not a public header.
#pragma once

#include <cstdint>

#include "core/clock.h"
#include "io/forward/forwarder.h"

namespace gpunfv {

// Latency and flush timing read the TSC (invariant on the hosts we run on): clock_gettime costs
// up to a few hundred ns in some VMs (a quarter of the forwarding loop in a profile), while the
// loop reads the time once per burst. Calibrated once against CLOCK_MONOTONIC.
class LoopClock {
 public:
  LoopClock() {
#if defined(__x86_64__)
    const uint64_t t0 = monotonic_ns(), c0 = __builtin_ia32_rdtsc();
    while (monotonic_ns() - t0 < 2'000'000) {
    }
    const uint64_t t1 = monotonic_ns(), c1 = __builtin_ia32_rdtsc();
    // ns = cycles * ns_per_cycle, in 32.32 fixed point: a multiply and a shift per read.
    ns_per_cycle_q32_ = uint64_t(double(t1 - t0) / double(c1 - c0) * 4294967296.0);
#endif
  }
  uint64_t now() const {
#if defined(__x86_64__)
    return uint64_t((unsigned __int128)__builtin_ia32_rdtsc() * ns_per_cycle_q32_ >> 32);
#else
    return monotonic_ns();
#endif
  }

 private:
  uint64_t ns_per_cycle_q32_ = uint64_t(1) << 32;
};

inline const LoopClock& loop_clock() {
  static const LoopClock clock;
  return clock;
}

// What a running loop writes: kept on the forwarding thread's stack, so two forwards (the two
// directions of a port pair) never write one cache line; the counts reach the shared
// PortCounters every 256 busy loop turns (publish()), as an atomic add per burst on a line both
// directions write cost more than the forwarding itself.
struct Forwarder::Loop {
  ForwardResult result;
  uint64_t rx = 0, rx_bytes = 0, tx = 0, tx_bytes = 0, dropped = 0;  // not yet published
  uint32_t empty_polls = 0, turns = 0;

  void drop(DropReason r, uint64_t n = 1) {
    result.drops.add(r, n);
    dropped += n;
  }
  // End of a turn that moved frames: publish every 256 such turns (the two directions of a
  // port pair write each other's PortCounters lines). It ends a run of empty polls: only polls
  // empty in a row pause and yield (counted across busy turns instead, a two-port loop, which
  // meets an empty ring between most bursts, would pause on nearly every empty poll, and a
  // PAUSE is about 140 cycles on recent Intel cores). run_bursts keeps both in registers.
  bool busy_turn() {
    empty_polls = 0;
    return ++turns % 256 == 0;
  }
  // Empty polls in a row: kSpinPolls at once, then with a pause until kPausePolls, then the
  // loop publishes and yields (idle()).
  static constexpr uint32_t kSpinPolls = 256, kPausePolls = 16384;
  // Whether the next idle() publishes.
  bool publishes_when_idle() const { return empty_polls + 1 >= kPausePolls; }
};

}  // namespace gpunfv
