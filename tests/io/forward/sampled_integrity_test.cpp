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

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>

#include <random>

#include "gpu/device.h"
#include "gpu/device_buffer.h"
#include "io/forward/sampled_integrity_gpu.h"

namespace gpunfv {
namespace {

// The device computes the same checksum as the host, for every length from 0 to 1518 B.
TEST(SampledIntegrityGpu, EqualsHost) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  constexpr uint32_t kStride = 1536, kN = 1519;
  std::vector<uint8_t> frames(size_t(kStride) * kN);
  std::mt19937 rng(7);
  for (auto& b : frames) b = uint8_t(rng());
  std::vector<uint16_t> len(kN);
  for (uint32_t i = 0; i < kN; ++i) len[i] = uint16_t(i);
  DeviceBuffer<uint8_t> d_frames;
  DeviceBuffer<uint16_t> d_len;
  DeviceBuffer<uint32_t> d_out(kN);
  d_frames.upload(frames);
  d_len.upload(len);
  sampled_integrity_gpu(d_frames.data(), kStride, d_len.data(), kN, d_out.data(), nullptr);
  std::vector<uint32_t> out(kN);
  ASSERT_EQ(cudaMemcpy(out.data(), d_out.data(), kN * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (uint32_t i = 0; i < kN; ++i)
    ASSERT_EQ(out[i], sampled_integrity(frames.data() + size_t(i) * kStride, len[i])) << i;
}

}  // namespace
}  // namespace gpunfv
#endif
