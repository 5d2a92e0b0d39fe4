// Word-wide span access equals the byte-by-byte definition at every alignment.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/word_access.h"

namespace gpunfv {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

// Buffers are 64-byte aligned, as batch slots are.
struct Aligned {
  alignas(64) uint8_t bytes[256];
  IsoSpan<uint8_t> span() { return IsoSpan<uint8_t>(bytes, sizeof bytes); }
};

TEST(WordAccess, LoadBlockAtEveryAlignment) {
  auto src = random_bytes(256, 1);
  for (uint32_t off = 0; off < 8; ++off) {
    Aligned a;
    std::copy(src.begin(), src.end(), a.bytes);
    uint32_t w[16];
    words::load_be_block64(a.span(), off + 100, w);
    for (int i = 0; i < 16; ++i) {
      const uint8_t* p = a.bytes + off + 100 + 4 * i;
      EXPECT_EQ(w[i], (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3])
          << off << ":" << i;
    }
  }
}

TEST(WordAccess, XorBlockTouchesOnlyItsBytes) {
  auto src = random_bytes(256, 2);
  const uint32_t k[4] = {0x03020100u, 0x07060504u, 0x0B0A0908u, 0x0F0E0D0Cu};
  for (uint32_t off = 0; off < 8; ++off) {
    Aligned a;
    std::copy(src.begin(), src.end(), a.bytes);
    words::xor_block16(a.span(), 50 + off, k);
    for (uint32_t j = 0; j < 256; ++j) {
      const bool inside = j >= 50 + off && j < 66 + off;
      const uint8_t want = inside ? uint8_t(src[j] ^ (j - 50 - off)) : src[j];
      ASSERT_EQ(a.bytes[j], want) << off << ":" << j;
    }
  }
}

TEST(WordAccess, MoveEqualsMemmoveBothWays) {
  auto src = random_bytes(256, 3);
  for (uint32_t from = 10; from < 18; ++from)
    for (uint32_t n : {0u, 1u, 3u, 5u, 17u, 64u, 101u}) {
      for (bool up : {true, false}) {
        Aligned a;
        std::copy(src.begin(), src.end(), a.bytes);
        std::vector<uint8_t> want = src;
        const uint32_t f = up ? from : from + 36;
        const uint32_t t = up ? from + 36 : from;  // 36 bytes up, or back down
        std::memmove(want.data() + t, want.data() + f, n);
        words::move_aligned_distance(a.span(), f, t, n);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), a.bytes)) << from << " n " << n << " up " << up;
      }
    }
}

TEST(WordAccess, StoredWordsAreLittleEndianAtEveryAlignment) {
  const uint32_t w[3] = {0x04030201u, 0x08070605u, 0x0C0B0A09u};
  for (uint32_t phase = 0; phase < 4; ++phase) {
    Aligned a;
    std::memset(a.bytes, 0xEE, sizeof a.bytes);
    words::store_le_words(a.span(), 16 + phase, w);
    for (uint32_t k = 0; k < 12; ++k) EXPECT_EQ(a.bytes[16 + phase + k], k + 1) << phase;
    EXPECT_EQ(a.bytes[16 + phase - 1], 0xEE);  // nothing stored around the run
    EXPECT_EQ(a.bytes[16 + phase + 12], 0xEE);
  }
}

TEST(WordAccess, LoadedWordsReadWhatStoredWordsWroteAtEveryAlignment) {
  const uint32_t w[3] = {0x04030201u, 0x08070605u, 0xFFFEFDFCu};
  for (uint32_t phase = 0; phase < 4; ++phase) {
    Aligned a;
    for (uint32_t k = 0; k < 12; ++k) a.bytes[40 + phase + k] = uint8_t(w[k / 4] >> (8 * (k % 4)));
    uint32_t got[3] = {};
    words::load_le_words(IsoSpan<const uint8_t>(a.span()), 40 + phase, got);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(got[k], w[k]) << phase << ":" << k;
  }
}

TEST(WordAccess, LoadedWordsPastTheSpanAreRefused) {
  Aligned a;
  uint32_t got[2] = {};
  IsoFaultScope scope;
  words::load_le_words(IsoSpan<const uint8_t>(a.bytes, 20), 16, got);  // 4 bytes past the end
  EXPECT_TRUE(scope.faulted());
}

TEST(WordAccess, StoredWordsPastTheSpanAreRefused) {
  Aligned a;
  std::memset(a.bytes, 0xEE, sizeof a.bytes);
  const uint32_t w[2] = {1, 2};
  IsoFaultScope scope;
  words::store_le_words(IsoSpan<uint8_t>(a.bytes, 20), 16, w);  // 8 bytes from 16: 4 past the end
  EXPECT_TRUE(scope.faulted());
  EXPECT_TRUE(std::all_of(a.bytes, a.bytes + sizeof a.bytes, [](uint8_t b) { return b == 0xEE; }));
}

TEST(WordAccess, OutOfSpanRangeIsCaught) {
  Aligned a;
  uint32_t w[16];
  EXPECT_DEATH(words::load_be_block64(IsoSpan<const uint8_t>(a.bytes, 100), 40, w), "out of bounds");
}

}  // namespace
}  // namespace gpunfv
