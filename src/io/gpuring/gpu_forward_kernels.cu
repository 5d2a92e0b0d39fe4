// The persistent forwarding kernel (see gpu_forward_runner.h).
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#include "io/gpuring/persistent_kernel.cuh"
#include "io/gpuring/gpu_forward_runner.h"

namespace gpunfv::gpuring {

namespace {

// One warp per ring pair: lane 0 runs the ring protocol, the warp shares the per-frame work
// (forward_loops.h, team.h).
template <typename View, typename Fn>
__global__ void forward_pairs_kernel(ForwardView f, uint16_t port_id, View nf, Fn fn) {
  forward_ring_loop(f, blockIdx.x, port_id, nf, fn, NoTamper{}, WarpTeam{});
}

constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls

__global__ void integrity_by_warps_kernel(const uint8_t* frames, uint32_t stride, const uint16_t* len,
                                          uint32_t n, uint32_t* out) {
  const WarpTeam team;
  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x) {
    const uint32_t sum = team_sampled_integrity(team, frames + size_t(i) * stride, len[i]);
    if (team.leader()) out[i] = sum;
  }
}

template <typename View, typename Fn>
void launch(const ForwardView& f, uint16_t port_id, const View& nf, Fn fn, cudaStream_t stream) {
  const unsigned blocks = f.rx.p.rings;
  load_and_check_residency(forward_pairs_kernel<View, Fn>, blocks, kThreads, "gpuring forward");
  forward_pairs_kernel<View, Fn><<<blocks, kThreads, 0, stream>>>(f, port_id, nf, fn);
  GPUNFV_CUDA(cudaGetLastError());
}

class CudaForwardRunner final : public GpuRingRunner {
 public:
  CudaForwardRunner(ForwardRings& rings, uint16_t port_id, const NfHook& hook) : rings_(rings) {
    stream_ = create_stream();
    try {
      if (hook.kind == NfHook::Kind::router)
        launch(rings.view(), port_id, hook.router, RouterLogic{}, stream_);
      else
        launch(rings.view(), port_id, PassThroughView{}, PassThrough{}, stream_);
    } catch (...) {
      destroy_stream(stream_);
      throw;
    }
    running_ = std::make_unique<PersistentKernelScope>();
  }
  ~CudaForwardRunner() override {
    if (!finished_) {
      rings_.request_stop();
      if (!wait(5.0)) {
        rings_.request_abort();
        wait(5.0);
      }
    }
    destroy_stream(stream_);
  }

  void request_stop() override { rings_.request_stop(); }

  bool wait(double timeout_s) override {
    if (!wait_for_stream(stream_, timeout_s)) return false;
    finished_ = true;
    running_.reset();
    return true;
  }

 private:
  ForwardRings& rings_;
  cudaStream_t stream_ = nullptr;
  bool finished_ = false;
  std::unique_ptr<PersistentKernelScope> running_;  // from the launch until the kernel exited
};

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

std::unique_ptr<GpuRingRunner> launch_gpu_forward_runner(ForwardRings& rings, uint16_t port_id,
                                                         const NfHook& hook) {
  if (rings.from().placement() != Placement::device)
    throw std::invalid_argument("gpuring forward: the kernel needs rings in device memory");
  if (hook.kind == NfHook::Kind::router && !rings.view().route)
    throw std::invalid_argument("gpuring forward: a router hook on rings built without route");
  return std::make_unique<CudaForwardRunner>(rings, port_id, hook);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(forward_pairs_kernel<RouterView, RouterLogic>);
GPUNFV_REGISTER_KERNEL(forward_pairs_kernel<PassThroughView, PassThrough>);
GPUNFV_REGISTER_KERNEL(integrity_by_warps_kernel);
GPUNFV_REGISTER_KERNEL(integrity_by_warp_groups_kernel);

}  // namespace gpunfv::gpuring
