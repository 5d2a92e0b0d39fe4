#include "io/forward/sampled_integrity.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace gpunfv {
namespace {

std::vector<uint8_t> frame(size_t n) {
  std::vector<uint8_t> f(n);
  std::iota(f.begin(), f.end(), uint8_t(7));
  return f;
}

TEST(SampledIntegrity, SeesEverySampledByteOfEveryBlock) {
  auto f = frame(1518);
  const uint32_t good = sampled_integrity(f.data(), uint32_t(f.size()));
  for (uint32_t block = 0; block < f.size(); block += 64)
    for (uint32_t off : {0u, 21u, 42u, 63u}) {
      if (block + off >= f.size()) continue;
      f[block + off] ^= 0x5A;
      EXPECT_NE(sampled_integrity(f.data(), uint32_t(f.size())), good) << block + off;
      f[block + off] ^= 0x5A;
    }
  EXPECT_EQ(sampled_integrity(f.data(), uint32_t(f.size())), good);
}

TEST(SampledIntegrity, SamplesOnlyFourBytesPerBlock) {
  // The price of sampling, stated as a test: a byte between the samples goes unseen.
  auto f = frame(128);
  const uint32_t good = sampled_integrity(f.data(), 128);
  f[64 + 10] ^= 0xFF;
  EXPECT_EQ(sampled_integrity(f.data(), 128), good);
}

TEST(SampledIntegrity, CatchesSwappedBlocksAndLengthChanges) {
  auto f = frame(256);
  const uint32_t good = sampled_integrity(f.data(), 256);
  auto swapped = f;
  std::swap_ranges(swapped.begin(), swapped.begin() + 64, swapped.begin() + 64);
  EXPECT_NE(sampled_integrity(swapped.data(), 256), good);
  EXPECT_NE(sampled_integrity(f.data(), 255), good);
}

}  // namespace
}  // namespace gpunfv
