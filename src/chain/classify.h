// Ingress classification, the first step of every chain on both backends: size check, header
// parse, flow hash, and the metadata every NF starts from. A malformed frame is dropped here
// with its reason (counted against its ingress port, not against an NF): its next_nf stays
// kChainDone, which is how egress tells a classify drop from an NF's.
#pragma once

#include "core/batch.h"
#include "core/parse.h"

namespace gpunfv {

GPUNFV_HD inline void classify_packet(const BatchView& b, uint32_t i) {
  b.out_port[i] = kNoPort;
  b.next_nf[i] = kChainDone;
  PacketHeaders h{};
  DropReason r = DropReason::none;
  uint32_t len = b.len[i];
  if (len > b.stride) {
    r = DropReason::oversize;
    b.flow_hash[i] = 0;
  } else {
    IsoSpan<const uint8_t> frame = b.data.subspan(slot_offset(b, i), len);
    r = parse_headers(frame, h);
    b.flow_hash[i] = r == DropReason::none ? flow_hash(frame, h) : 0;
  }
  b.headers[i] = h;
  b.verdict[i] = static_cast<uint8_t>(r);
  if (r == DropReason::none) b.next_nf[i] = 0;
}

}  // namespace gpunfv
