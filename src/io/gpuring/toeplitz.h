// RSS as the 82599 computes it: the Toeplitz hash (Microsoft's RSS specification) over the
// IPv4 source and destination addresses and, for TCP/UDP, the two ports, with a 40-byte key;
// the queue is the redirection table's entry for the hash's low 7 bits.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace gpunfv::gpuring {

// The key from Microsoft's specification, which most drivers (and DPDK's tests) use by default.
inline constexpr std::array<uint8_t, 40> kDefaultRssKey = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

// Toeplitz hash of `input` (at most 36 bytes for a 40-byte key).
inline uint32_t toeplitz_hash(std::span<const uint8_t> input,
                              const std::array<uint8_t, 40>& key = kDefaultRssKey) {
  uint32_t result = 0;
  // The 32-bit window of the key that starts at the current input bit.
  uint32_t window = (uint32_t(key[0]) << 24) | (uint32_t(key[1]) << 16) | (uint32_t(key[2]) << 8) | key[3];
  for (size_t i = 0; i < input.size(); ++i) {
    const uint8_t next_key_byte = i + 4 < key.size() ? key[i + 4] : 0;
    for (int bit = 7; bit >= 0; --bit) {
      if (input[i] & (1u << bit)) result ^= window;
      window = (window << 1) | ((next_key_byte >> bit) & 1u);
    }
  }
  return result;
}

// 82599 redirection table (RETA): 128 entries, filled round-robin over the rings.
struct RssTable {
  std::array<uint8_t, 128> reta{};
  explicit RssTable(uint32_t rings) {
    for (uint32_t i = 0; i < reta.size(); ++i) reta[i] = static_cast<uint8_t>(i % rings);
  }
  uint32_t ring_of(uint32_t hash) const { return reta[hash & 0x7F]; }
};

}  // namespace gpunfv::gpuring
