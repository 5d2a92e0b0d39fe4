// Sampled integrity check for forwarded frames (P2PNIC, section IV): a checksum over four
// representative bytes of every 64-byte block, computed when a frame is received and verified
// just before it is sent. It catches a buffer that changed between rx and tx (a lost or stale
// DMA write, a buffer recycled while still in flight) at a cost of 4 reads per 64 bytes instead
// of a full checksum. A mismatch is the drop `integrity_mismatch`.
//
// Which bytes: offsets 0, 21, 42 and 63 of each block, one in each 16-byte quarter. A 64-byte
// block is a cache line and the usual PCIe write granule; transfers that go wrong lose or
// repeat whole lines, or 16- and 32-byte pieces of one (write combining, split TLPs), so one
// sample per quarter sees every such piece, and the first and last bytes see a line shifted
// by its neighbour. The final partial block samples the offsets that lie inside the frame.
// The sum is position-dependent (Fletcher-style), so swapped blocks are caught too.
#pragma once

#include <cstdint>

#include "core/compat.h"

namespace gpunfv {

inline constexpr uint32_t kIntegrityBlock = 64;

GPUNFV_HD inline uint32_t sampled_integrity(const uint8_t* frame, uint32_t len) {
  // Fletcher-32 style: `a` sums the samples, `b` sums the running `a`, so each sample counts
  // with a weight that depends on its position.
  uint32_t a = len & 0xFFFF, b = len >> 16;
  for (uint32_t block = 0; block < len; block += kIntegrityBlock) {
    for (uint32_t s = 0; s < 4; ++s) {
      const uint32_t off = block + (s == 0 ? 0u : s == 1 ? 21u : s == 2 ? 42u : 63u);
      if (off >= len) break;
      a = (a + frame[off]) % 65535u;
      b = (b + a) % 65535u;
    }
  }
  return (b << 16) | a;
}

}  // namespace gpunfv
