// The forwarding loops' GPU helpers for tests (see gpu_forward_runner.h).
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/stream.h"
#include "io/gpuring/ring/team.h"
#include "io/gpuring/loops/gpu_forward_runner.h"

namespace gpunfv::gpuring {

namespace {

constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls

__global__ void integrity_by_warps_kernel(const uint8_t* frames, uint32_t stride, const uint16_t* len,
                                          uint32_t n, uint32_t* out) {
  const WarpTeam team;
  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x) {
    const uint32_t sum = team_sampled_integrity(team, frames + size_t(i) * stride, len[i]);
    if (team.leader()) out[i] = sum;
  }
}

// Frames [32 b, 32 b + 32) to block b's warp, lane i holding frame 32 b + i, summed several at
// once as the forwarding loop sums a burst (team_each_frame).
__global__ void integrity_by_warp_groups_kernel(const uint8_t* frames, uint32_t stride, const uint16_t* len,
                                                uint32_t n, uint32_t* out) {
  const WarpTeam team;
  const uint32_t base = blockIdx.x * 32u;
  const uint32_t count = n - base < 32u ? n - base : 32u;
  const uint32_t lane = team.lane();
  const uint32_t my_len = lane < count ? len[base + lane] : 0u;
  uint32_t mine = 0;
  team_each_frame(team, count, my_len, [&](uint32_t i, uint32_t group) {
    const uint32_t len_i = team.from(i < count ? i : 0u, my_len);
    return team_sampled_integrity_grouped(team, group, i < count ? frames + size_t(base + i) * stride : nullptr,
                                          len_i);
  }, &mine);
  if (lane < count) out[base + lane] = mine;
}

}  // namespace

void sampled_integrity_by_warp_groups(const uint8_t* frames, uint32_t stride, const uint16_t* len, uint32_t n,
                                      uint32_t* out) {
  if (n == 0) return;
  integrity_by_warp_groups_kernel<<<(n + 31) / 32, kThreads>>>(frames, stride, len, n, out);
  GPUNFV_CUDA(cudaGetLastError());
  GPUNFV_CUDA(cudaDeviceSynchronize());
}

void sampled_integrity_by_warps(const uint8_t* frames, uint32_t stride, const uint16_t* len, uint32_t n,
                                uint32_t* out) {
  if (n == 0) return;
  integrity_by_warps_kernel<<<n < 1024 ? n : 1024, kThreads>>>(frames, stride, len, n, out);
  GPUNFV_CUDA(cudaGetLastError());
  GPUNFV_CUDA(cudaDeviceSynchronize());
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(integrity_by_warps_kernel);
GPUNFV_REGISTER_KERNEL(integrity_by_warp_groups_kernel);

}  // namespace gpunfv::gpuring
