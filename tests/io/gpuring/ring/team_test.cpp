// The sampled integrity sum taken by a team (team.h): split over any number of lanes and
// combined, it equals the sequential sum the host forwarder takes (sampled_integrity.h) for
// every length, so the GPU ring forward's warps, its CPU-thread runner and the host forwarder
// agree bit for bit. On a GPU (skipped without one): the same, with real warps.
#include "io/gpuring/ring/team.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gpu/device.h"
#include "io/gpuring/loops/gpu_forward_runner.h"
#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv::gpuring {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

// A team of `lanes` played in turn by one thread: each lane's partial sum, then the combine.
uint32_t by_lanes(const uint8_t* frame, uint32_t len, uint32_t lanes) {
  IntegrityPartial all;
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const IntegrityPartial p = sampled_integrity_partial(frame, len, lane, lanes);
    all.samples += p.samples;
    all.weighted += p.weighted;
  }
  return sampled_integrity_combine(len, all);
}

TEST(TeamIntegrity, AnyNumberOfLanesEqualsTheSequentialSum) {
  const auto frame = random_bytes(9100, 3);
  for (uint32_t len = 0; len <= 2100; ++len)
    for (uint32_t lanes : {1u, 2u, 3u, 7u, 32u})
      ASSERT_EQ(by_lanes(frame.data(), len, lanes), sampled_integrity(frame.data(), len))
          << "len " << len << ", lanes " << lanes;
  // Long frames (jumbo, and the largest a 16-bit length allows): the weights grow large.
  for (uint32_t len : {9000u, 9018u, 9099u})
    EXPECT_EQ(by_lanes(frame.data(), len, 32), sampled_integrity(frame.data(), len)) << len;
  const auto big = random_bytes(65535, 4);
  EXPECT_EQ(by_lanes(big.data(), 65535, 32), sampled_integrity(big.data(), 65535));
  EXPECT_EQ(by_lanes(big.data(), 65535, 1), sampled_integrity(big.data(), 65535));
}

TEST(TeamIntegrity, AllBytesFFAndSolo) {
  // Sums that wrap 65535 many times; and the solo team used by the CPU runners.
  const std::vector<uint8_t> ff(4096, 0xFF);
  for (uint32_t len : {1u, 63u, 64u, 65u, 1518u, 4096u})
    EXPECT_EQ(team_sampled_integrity(SoloTeam{}, ff.data(), len), sampled_integrity(ff.data(), len)) << len;
  EXPECT_EQ(sampled_integrity_count(0), 0u);
  EXPECT_EQ(sampled_integrity_count(22), 2u);   // offsets 0, 21
  EXPECT_EQ(sampled_integrity_count(64), 4u);
  EXPECT_EQ(sampled_integrity_count(107), 7u);  // 4 + offsets 0, 21, 42 of the second block
}

#if GPUNFV_HAVE_CUDA
TEST(TeamIntegrityGpu, WarpsEqualTheHost) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  constexpr uint32_t kStride = 2048, kN = 2049;
  const auto frames = random_bytes(size_t(kStride) * kN, 9);
  std::vector<uint16_t> len(kN);
  for (uint32_t i = 0; i < kN; ++i) len[i] = uint16_t(i);
  DeviceBuffer<uint8_t> d_frames;
  DeviceBuffer<uint16_t> d_len;
  DeviceBuffer<uint32_t> d_out(kN);
  d_frames.upload(frames);
  d_len.upload(len);
  sampled_integrity_by_warps(d_frames.data(), kStride, d_len.data(), kN, d_out.data());
  std::vector<uint32_t> out(kN);
  ASSERT_EQ(cudaMemcpy(out.data(), d_out.data(), kN * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (uint32_t i = 0; i < kN; ++i)
    ASSERT_EQ(out[i], sampled_integrity(frames.data() + size_t(i) * kStride, len[i])) << i;
  // Several frames to a warp at once: bursts of equal lengths (every group size) and mixed ones.
  std::vector<uint16_t> mixed(kN);
  for (uint32_t i = 0; i < kN; ++i) mixed[i] = uint16_t(i < 1024 ? (i / 32) * 64 : (i * 977) % kStride);
  for (const std::vector<uint16_t>* lens : {&len, &mixed}) {
    d_len.upload(*lens);
    sampled_integrity_by_warp_groups(d_frames.data(), kStride, d_len.data(), kN, d_out.data());
    ASSERT_EQ(cudaMemcpy(out.data(), d_out.data(), kN * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (uint32_t i = 0; i < kN; ++i)
      ASSERT_EQ(out[i], sampled_integrity(frames.data() + size_t(i) * kStride, (*lens)[i])) << i;
  }
}
#endif

}  // namespace
}  // namespace gpunfv::gpuring
