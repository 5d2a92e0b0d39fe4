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

// The same sum taken by several threads (a warp on the GPU: the per-frame work of the GPU ring
// forward, gpuring/team.h), equal bit for bit. Sample j (the j-th offset above, in order) adds
// s_j to `a` and, through the running sums, s_j * (n - j) to `b`, n the number of samples; so
// `lanes` threads each take every lanes-th 64-byte block, the partial sums add up in any
// order, and sampled_integrity_combine reduces them mod 65535 as the sequential loop does.
struct IntegrityPartial {
  uint64_t samples = 0;   // sum of s_j
  uint64_t weighted = 0;  // sum of s_j * (n - j)
};

GPUNFV_HD inline uint32_t sampled_integrity_count(uint32_t len) {
  const uint32_t rem = len % kIntegrityBlock;
  return 4 * (len / kIntegrityBlock) + (rem > 0) + (rem > 21) + (rem > 42);
}

GPUNFV_HD inline IntegrityPartial sampled_integrity_partial(const uint8_t* frame, uint32_t len,
                                                            uint32_t lane, uint32_t lanes) {
  IntegrityPartial p;
  const uint32_t n = sampled_integrity_count(len);
  for (uint32_t block = lane; block * kIntegrityBlock < len; block += lanes) {
    const uint32_t base = block * kIntegrityBlock;
    // The four loads are independent: issued together, they cost one memory round trip.
    const uint32_t s0 = frame[base];
    const uint32_t s1 = base + 21 < len ? frame[base + 21] : 0u;
    const uint32_t s2 = base + 42 < len ? frame[base + 42] : 0u;
    const uint32_t s3 = base + 63 < len ? frame[base + 63] : 0u;
    const uint64_t w = n - 4 * block;  // weight of the block's first sample
    p.samples += s0 + s1 + s2 + s3;
    // Missing samples are 0, so their (meaningless) weights add nothing.
    p.weighted += s0 * w + s1 * (w - 1) + s2 * (w - 2) + s3 * (w - 3);
  }
  return p;
}

GPUNFV_HD inline uint32_t sampled_integrity_combine(uint32_t len, IntegrityPartial p) {
  const uint32_t n = sampled_integrity_count(len);
  const uint32_t a0 = len & 0xFFFF, b0 = len >> 16;
  if (n == 0) return (b0 << 16) | a0;  // the loop never ran: nothing was reduced
  const auto a = static_cast<uint32_t>((uint64_t(a0) + p.samples) % 65535u);
  const auto b = static_cast<uint32_t>((uint64_t(b0) + uint64_t(n) * a0 + p.weighted) % 65535u);
  return (b << 16) | a;
}

}  // namespace gpunfv
