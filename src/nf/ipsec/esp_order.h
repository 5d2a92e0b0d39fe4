// The two order-dependent ESP steps, as sequential passes over a batch in packet order: they
// are the definition both backends implement (the GPU kernels in ipsec.cu compute the same
// result with one warp per SA; see there).
//
//  - Outbound sequence numbers: the packets of each SA get consecutive numbers in packet order,
//    starting where the SA's previous batch stopped. RFC 4303 3.3.3: the counter starts at 1
//    and must not cycle; without ESN a packet that would need number 2^32 is dropped
//    (esp_seq_exhausted) until the SA is re-keyed.
//  - Inbound anti-replay: each packet whose ICV verified is checked against its SA's window in
//    packet order and updates it (RFC 4303 3.4.3); a rejected one becomes an esp_replay drop
//    of this NF (verdict set, next_nf back at this NF's position).
#pragma once

#include <cstdint>

#include "core/batch.h"
#include "core/iso_span.h"
#include "nf/ipsec/esp.h"
#include "nf/ipsec/replay_window.h"

namespace gpunfv::esp {

inline constexpr uint64_t kLastSeq = 0xFFFFFFFFull;

// Outbound step 2 over packets [begin, end) at `position` (after select_outbound_sa).
inline void number_packets(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position,
                           uint32_t result_offset, IsoSpan<SaState> state) {
  for (uint32_t i = begin; i < end; ++i) {
    if (!at_position(b, i, position)) continue;
    EspRecord rec = read_record(b, i, result_offset);
    if (rec.sa == kNoSa) continue;
    SaState& s = state[rec.sa];
    if (s.next_seq > kLastSeq) {
      rec.flags |= kSeqExhausted;
    } else {
      rec.seq = uint32_t(s.next_seq);
      ++s.next_seq;
    }
    write_record(b, i, result_offset, rec);
  }
}

// Whether packet i passed the inbound per-packet step of the NF at `position` in this batch
// with a verified ICV (its record is fresh: Decapsulate writes one for every packet it passes).
GPUNFV_HD GPUNFV_FORCEINLINE bool decapsulated_here(const BatchView& b, uint32_t i,
                                                    uint8_t position, const EspRecord& rec) {
  return b.verdict[i] == static_cast<uint8_t>(DropReason::none) &&
         b.next_nf[i] == uint8_t(position + 1) && rec.sa != kNoSa && (rec.flags & kAccepted);
}

GPUNFV_HD GPUNFV_FORCEINLINE void drop_as_replay(const BatchView& b, uint32_t i, uint8_t position,
                                                 uint8_t first_drop) {
  b.verdict[i] = NfVerdict(IpsecDrop::esp_replay).code(first_drop);
  b.next_nf[i] = position;
}

// Inbound step 2 over packets [begin, end) (after Decapsulate at `position`).
inline void check_replay(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position,
                         uint32_t result_offset, IsoSpan<SaState> state, uint8_t first_drop) {
  for (uint32_t i = begin; i < end; ++i) {
    if (b.verdict[i] != static_cast<uint8_t>(DropReason::none) ||
        b.next_nf[i] != uint8_t(position + 1))
      continue;
    EspRecord rec = read_record(b, i, result_offset);
    if (!decapsulated_here(b, i, position, rec)) continue;
    if (!state[rec.sa].window.accept(rec.seq)) drop_as_replay(b, i, position, first_drop);
  }
}

}  // namespace gpunfv::esp
