// HMAC-SHA1 (RFC 2104) and its 96-bit truncation HMAC-SHA1-96 (RFC 2404), the ESP ICV.
//
// The key's two padded blocks (key ^ ipad, key ^ opad) are hashed once per SA when the SA is
// built; a packet then starts from those two chaining states, which saves two of the
// compressions per packet (a 64-byte packet needs 4 instead of 6).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/compat.h"
#include "core/iso_span.h"
#include "nf/ipsec/sha1.h"

namespace gpunfv::hmac_sha1 {

inline constexpr uint32_t kIcvBytes = 12;  // RFC 2404: the first 96 bits of the digest

struct Key {
  uint32_t inner[5];  // SHA-1 state after (key ^ ipad)
  uint32_t outer[5];  // SHA-1 state after (key ^ opad)
};
static_assert(std::is_trivially_copyable_v<Key>);

// Precomputes the two states for a key of any length (longer than a block: hashed first).
GPUNFV_HD inline Key make_key(IsoSpan<const uint8_t> key) {
  uint8_t k[64] = {};
  if (key.size() > 64) {
    uint32_t h[5];
    sha1::digest(key, h);
    for (int i = 0; i < 20; ++i) k[i] = uint8_t(h[i / 4] >> (24 - 8 * (i % 4)));
  } else {
    for (size_t i = 0; i < key.size(); ++i) k[i] = key[i];
  }
  Key out{};
  uint32_t w[16];
  sha1::init(out.inner);
  for (int i = 0; i < 16; ++i)
    w[i] = ((uint32_t(k[4 * i]) << 24) | (uint32_t(k[4 * i + 1]) << 16) |
            (uint32_t(k[4 * i + 2]) << 8) | k[4 * i + 3]) ^
           0x36363636u;
  sha1::compress(out.inner, w);
  sha1::init(out.outer);
  for (int i = 0; i < 16; ++i)
    w[i] = ((uint32_t(k[4 * i]) << 24) | (uint32_t(k[4 * i + 1]) << 16) |
            (uint32_t(k[4 * i + 2]) << 8) | k[4 * i + 3]) ^
           0x5C5C5C5Cu;
  sha1::compress(out.outer, w);
  for (auto& b : k) b = 0;  // no copy of the key left on the stack we own
  return out;
}

// HMAC-SHA1 of bytes [off, off + len) of `data`: the 20-byte digest as five big-endian words.
GPUNFV_HD inline void mac(const Key& key, IsoSpan<const uint8_t> data, uint32_t off, uint32_t len,
                          uint32_t digest[5]) {
  uint32_t h[5] = {key.inner[0], key.inner[1], key.inner[2], key.inner[3], key.inner[4]};
  sha1::finish_span(h, data, off, len, 64);
  // Outer hash: one block holding the 20-byte inner digest, 0x80, and the length 84 bytes.
  uint32_t w[16] = {h[0], h[1], h[2], h[3], h[4], 0x80000000u, 0, 0,
                    0,    0,    0,    0,    0,    0,           0, (64 + 20) * 8};
  for (int i = 0; i < 5; ++i) digest[i] = key.outer[i];
  sha1::compress(digest, w);
}

// Writes the 12-byte ICV of bytes [off, off + len) of `data` at `out_off` of `out`.
GPUNFV_HD inline void write_icv(const Key& key, IsoSpan<const uint8_t> data, uint32_t off,
                                uint32_t len, IsoSpan<uint8_t> out, uint32_t out_off) {
  uint32_t d[5];
  mac(key, data, off, len, d);
  const IsoSpan<uint8_t> icv = out.subspan(out_off, kIcvBytes);  // one check, constant indices
  for (uint32_t i = 0; i < kIcvBytes; ++i) icv[i] = uint8_t(d[i / 4] >> (24 - 8 * (i % 4)));
}

// Whether the 12 bytes at `icv_off` are the ICV of [off, off + len). Constant time in the
// ICV's contents: every byte is compared, differences are OR-ed, no early exit, so a forger
// learns nothing from timing about how many leading bytes were right.
GPUNFV_HD inline bool icv_matches(const Key& key, IsoSpan<const uint8_t> data, uint32_t off,
                                  uint32_t len, uint32_t icv_off) {
  uint32_t d[5];
  mac(key, data, off, len, d);
  // One check, and constant indices into a view of constant size.
  const IsoSpan<const uint8_t> icv = data.subspan(icv_off, kIcvBytes);
  uint32_t diff = 0;
  for (uint32_t i = 0; i < kIcvBytes; ++i)
    diff |= uint32_t(icv[i] ^ uint8_t(d[i / 4] >> (24 - 8 * (i % 4))));
  return diff == 0;
}

}  // namespace gpunfv::hmac_sha1
