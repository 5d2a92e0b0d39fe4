// RSS as the 82599 computes it: the Toeplitz hash (Microsoft's RSS specification) over the
// IPv4 source and destination addresses and, for TCP/UDP, the two ports, with a 40-byte key;
// the queue is the redirection table's entry for the hash's low 7 bits.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

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

// The same hash from a table (what a software RSS does at line rate): the hash is linear in
// the input's bits, so byte i with value v contributes toeplitz_hash of an input holding only
// that byte, and the hash of an input is the XOR of its bytes' contributions; 12 lookups for an
// IPv4 4-tuple instead of 96 shift-and-xor steps. Equal to toeplitz_hash for inputs of up to
// `max_bytes` bytes.
class ToeplitzTable {
 public:
  explicit ToeplitzTable(size_t max_bytes = 12, const std::array<uint8_t, 40>& key = kDefaultRssKey)
      : table_(max_bytes) {
    for (size_t i = 0; i < max_bytes; ++i)
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t h = 0;
        for (uint32_t j = 0; j < 8; ++j)  // input bit j of the byte, from its most significant
          if (v & (0x80u >> j)) h ^= key_window(key, 8 * i + j);
        table_[i][v] = h;
      }
  }
  uint32_t hash(std::span<const uint8_t> input) const {
    uint32_t h = 0;
    for (size_t i = 0; i < input.size(); ++i) h ^= table_[i][input[i]];
    return h;
  }
  size_t max_bytes() const { return table_.size(); }

 private:
  // The 32 key bits starting at bit `bit` (bits past the key's end are 0): what toeplitz_hash
  // XORs in for an input bit at that position.
  static uint32_t key_window(const std::array<uint8_t, 40>& key, size_t bit) {
    uint32_t w = 0;
    for (size_t k = bit; k < bit + 32; ++k)
      w = (w << 1) | (k / 8 < key.size() ? (key[k / 8] >> (7 - k % 8)) & 1u : 0u);
    return w;
  }

  std::vector<std::array<uint32_t, 256>> table_;
};

// 82599 redirection table (RETA): 128 entries, filled round-robin over the rings.
struct RssTable {
  std::array<uint8_t, 128> reta{};
  explicit RssTable(uint32_t rings) {
    for (uint32_t i = 0; i < reta.size(); ++i) reta[i] = static_cast<uint8_t>(i % rings);
  }
  uint32_t ring_of(uint32_t hash) const { return reta[hash & 0x7F]; }
};

}  // namespace gpunfv::gpuring
