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

// Outbound step 2 over packets [begin, end) (after select_outbound_sa).
inline void number_packets(const NfPackets<>& packets, uint32_t begin, uint32_t end,
                           IsoSpan<SaState> state) {
  for (uint32_t i = begin; i < end; ++i) {
    if (!packets.here(i)) continue;
    EspRecord rec = read_record(packets.results(i));
    if (rec.sa == kNoSa) continue;
    SaState& s = state[rec.sa];
    if (s.next_seq > kLastSeq) {
      rec.flags |= kSeqExhausted;
    } else {
      rec.seq = uint32_t(s.next_seq);
      ++s.next_seq;
    }
    write_record(packets.results(i), rec);
  }
}

// Whether the NF's Decapsulate verified the ICV of a packet it passed (packets.passed(i)) in
// this batch: its record is fresh, Decapsulate writes one for every packet it passes.
GPUNFV_HD GPUNFV_FORCEINLINE bool decapsulated(const EspRecord& rec) {
  return rec.sa != kNoSa && (rec.flags & kAccepted);
}

// Inbound step 2 over packets [begin, end) (after Decapsulate).
inline void check_replay(const NfPackets<>& packets, uint32_t begin, uint32_t end,
                         IsoSpan<SaState> state) {
  for (uint32_t i = begin; i < end; ++i) {
    if (!packets.passed(i)) continue;
    const EspRecord rec = read_record(packets.results(i));
    if (!decapsulated(rec)) continue;
    if (!state[rec.sa].window.accept(rec.seq)) packets.drop_passed(i, IpsecDrop::esp_replay);
  }
}

}  // namespace gpunfv::esp
