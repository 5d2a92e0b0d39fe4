// The anti-replay window of RFC 4303 section 3.4.3 (and its Appendix A), 64 packets wide,
// for 32-bit sequence numbers (no ESN). One source for the CPU pass and the GPU pass, so both
// backends accept and reject exactly the same packets.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/compat.h"

namespace gpunfv::esp {

inline constexpr uint32_t kReplayWindow = 64;

struct ReplayWindow {
  uint64_t top = 0;   // highest sequence number accepted so far (0 before the first)
  uint64_t seen = 1;  // bit k set: sequence number top - k was accepted. Bit 0 starts set so
                      // that 0, which a sender never uses (RFC 4303 3.3.3), is rejected.

  // Checks `seq` against the window and, if it is new and inside or right of the window,
  // records it. Called only for packets whose ICV verified: a forged packet must not move the
  // window (RFC 4303 3.4.3, "the receive window is updated only if the integrity
  // verification succeeds").
  GPUNFV_HD bool accept(uint32_t seq) {
    if (seq > top) {
      uint64_t shift = seq - top;
      seen = shift >= kReplayWindow ? 1 : (seen << shift) | 1;
      top = seq;
      return true;
    }
    uint64_t behind = top - seq;
    if (behind >= kReplayWindow) return false;  // left of the window: too old
    uint64_t bit = uint64_t(1) << behind;
    if (seen & bit) return false;  // a duplicate
    seen |= bit;
    return true;
  }
};
static_assert(std::is_trivially_copyable_v<ReplayWindow>);

// What changes per SA as packets pass, in packet order: the outbound counter and the inbound
// window. One array of these per backend (host memory for the CPU, device memory for the GPU).
struct SaState {
  uint64_t next_seq = 1;  // outbound: the next sequence number to send (RFC 4303: starts at 1)
  ReplayWindow window;    // inbound
};
static_assert(std::is_trivially_copyable_v<SaState>);

}  // namespace gpunfv::esp
