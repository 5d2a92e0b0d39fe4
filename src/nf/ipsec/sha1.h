// SHA-1 (FIPS 180-4), one source for the CPU and the GPU, as HMAC-SHA1-96 (RFC 2404) needs it.
// SHA-1 is broken for collisions, not as HMAC's compression function, which is why ESP still
// offers it; the NF uses it only inside HMAC.
//
// The message schedule is a 16-word ring (w[t & 15]) instead of 80 words: 64 bytes of state a
// GPU thread keeps in registers once the rounds are unrolled.
#pragma once

#include <cstdint>

#include "core/compat.h"
#include "core/iso_span.h"
#include "core/word_access.h"
#include "nf/ipsec/aes128.h"  // GPUNFV_IPSEC_UNROLL

namespace gpunfv::sha1 {

GPUNFV_HD GPUNFV_FORCEINLINE uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

GPUNFV_HD GPUNFV_FORCEINLINE void init(uint32_t h[5]) {
  h[0] = 0x67452301u, h[1] = 0xEFCDAB89u, h[2] = 0x98BADCFEu, h[3] = 0x10325476u,
  h[4] = 0xC3D2E1F0u;
}

// One 64-byte block (16 big-endian words, overwritten) into the chaining state h.
GPUNFV_HD inline void compress(uint32_t h[5], uint32_t w[16]) {
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  // The four 20-round groups differ only in f and K.
#define GPUNFV_SHA1_ROUND(t, f, K)                                                                 \
  {                                                                                                \
    if ((t) >= 16)                                                                                 \
      w[(t)&15] = rotl(w[((t) + 13) & 15] ^ w[((t) + 8) & 15] ^ w[((t) + 2) & 15] ^ w[(t)&15], 1); \
    uint32_t tmp = rotl(a, 5) + (f) + e + (K) + w[(t)&15];                                         \
    e = d, d = c, c = rotl(b, 30), b = a, a = tmp;                                                 \
  }
  GPUNFV_IPSEC_UNROLL
  for (int t = 0; t < 20; ++t) GPUNFV_SHA1_ROUND(t, (b & c) | (~b & d), 0x5A827999u)
  GPUNFV_IPSEC_UNROLL
  for (int t = 20; t < 40; ++t) GPUNFV_SHA1_ROUND(t, b ^ c ^ d, 0x6ED9EBA1u)
  GPUNFV_IPSEC_UNROLL
  for (int t = 40; t < 60; ++t) GPUNFV_SHA1_ROUND(t, (b & c) | (b & d) | (c & d), 0x8F1BBCDCu)
  GPUNFV_IPSEC_UNROLL
  for (int t = 60; t < 80; ++t) GPUNFV_SHA1_ROUND(t, b ^ c ^ d, 0xCA62C1D6u)
#undef GPUNFV_SHA1_ROUND
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

GPUNFV_HD GPUNFV_FORCEINLINE uint32_t load_word(IsoSpan<const uint8_t> s, uint32_t off) {
  return (uint32_t(s[off]) << 24) | (uint32_t(s[off + 1]) << 16) | (uint32_t(s[off + 2]) << 8) |
         uint32_t(s[off + 3]);
}

// Hashes bytes [off, off + len) of `data` into h, which has already absorbed `prefix_bytes`
// (a multiple of 64: HMAC's key block), and applies the final padding.
GPUNFV_HD inline void finish_span(uint32_t h[5], IsoSpan<const uint8_t> data, uint32_t off,
                                  uint32_t len, uint64_t prefix_bytes) {
  IsoSpan<const uint8_t> m = data.subspan(off, len);
  uint32_t w[16];
  uint32_t pos = 0;
  for (; len - pos >= 64; pos += 64) {
    words::load_be_block64(m, pos, w);  // aligned word loads (word_access.h: why)
    compress(h, w);
  }
  // The tail: remaining bytes, 0x80, zeros, and the bit length in the last 8 bytes, over one or
  // two blocks. Built word by word so each word index is a constant (registers on the GPU).
  // The tail's bytes through a view of their own: each byte's bounds check is then the test
  // below that picks it (a check per byte was a third of the GPU kernel's checks).
  const uint32_t rem = len - pos;
  const IsoSpan<const uint8_t> tail = m.subspan(pos, rem);
  const uint64_t bits = (prefix_bytes + len) * 8;
  GPUNFV_IPSEC_UNROLL
  for (int i = 0; i < 16; ++i) {
    uint32_t v = 0;
    for (uint32_t j = 0; j < 4; ++j) {
      uint32_t at = 4 * uint32_t(i) + j;
      uint32_t byte = at < tail.size() ? tail[at] : (at == rem ? 0x80u : 0u);
      v = (v << 8) | byte;
    }
    w[i] = v;
  }
  if (rem >= 56) {
    compress(h, w);
    GPUNFV_IPSEC_UNROLL
    for (int i = 0; i < 14; ++i) w[i] = 0;
  }
  w[14] = uint32_t(bits >> 32);
  w[15] = uint32_t(bits);
  compress(h, w);
}

// SHA-1 of a whole buffer (tests, key hashing).
GPUNFV_HD inline void digest(IsoSpan<const uint8_t> data, uint32_t h[5]) {
  init(h);
  finish_span(h, data, 0, uint32_t(data.size()), 0);
}

}  // namespace gpunfv::sha1
