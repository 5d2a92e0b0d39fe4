// The persistent rx and tx kernels of the GPU ring port (see gpu_ring_runner.h).
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#include "io/gpuring/persistent_kernel.cuh"
#include "io/gpuring/gpu_ring_runner.h"
#include "io/gpuring/ring_loops.h"

namespace gpunfv::gpuring {

namespace {

// One grid for both sides: blocks [0, rings) run the tx loops, blocks [rings, 2 rings) the rx
// loops. One kernel on one stream, so the two sides never depend on two kernels running
// concurrently (which CUDA does not promise: two streams may share one of the device's
// CUDA_DEVICE_MAX_CONNECTIONS hardware queues, and then the second kernel waits for the first,
// which spins for ever), and only one kernel has to be loaded before any block spins.
// Each block is one warp, a Team (team.h): lane 0 runs the ring protocol, the lanes share the
// per-packet work (rx: up to 32 packets classified and run through the NF at once).
template <typename View, typename Fn>
__global__ void ring_pairs_kernel(RingSetView v, uint16_t port_id, View nf, Fn fn) {
  const uint32_t rings = v.p.rings;
  if (blockIdx.x < rings)
    tx_ring_loop(v, blockIdx.x, WarpTeam{});
  else
    rx_ring_loop(v, blockIdx.x - rings, port_id, nf, fn, WarpTeam{});
}

constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls

template <typename View, typename Fn>
void launch_ring_pairs(const RingSetView& v, uint16_t port_id, const View& nf, Fn fn, cudaStream_t stream) {
  const unsigned blocks = 2 * v.p.rings;
  load_and_check_residency(ring_pairs_kernel<View, Fn>, blocks, kThreads, "gpuring");
  ring_pairs_kernel<View, Fn><<<blocks, kThreads, 0, stream>>>(v, port_id, nf, fn);
  GPUNFV_CUDA(cudaGetLastError());
}

class CudaRingRunner final : public GpuRingRunner {
 public:
  CudaRingRunner(RingSet& rings, uint16_t port_id, const NfHook& hook) : rings_(rings) {
    // Non-blocking: nothing on the legacy stream waits for the persistent kernel, and it
    // waits for nothing. Created before the launch (nothing that may synchronize the context
    // happens while the kernel runs; see also load_and_check_residency).
    stream_ = create_stream();
    const RingSetView v = rings.view();
    try {
      if (hook.kind == NfHook::Kind::router)
        launch_ring_pairs(v, port_id, hook.router, RouterLogic{}, stream_);
      else
        launch_ring_pairs(v, port_id, PassThroughView{}, PassThrough{}, stream_);
    } catch (...) {
      destroy_stream(stream_);
      throw;
    }
    running_ = std::make_unique<PersistentKernelScope>();
  }
  ~CudaRingRunner() override {
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
  RingSet& rings_;
  cudaStream_t stream_ = nullptr;
  bool finished_ = false;
  std::unique_ptr<PersistentKernelScope> running_;  // from the launch until the kernel exited
};

}  // namespace

std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet& rings, uint16_t port_id,
                                                      const NfHook& hook) {
  if (rings.placement() != Placement::device)
    throw std::invalid_argument("GPU ring runner needs rings in device memory");
  return std::make_unique<CudaRingRunner>(rings, port_id, hook);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(ring_pairs_kernel<RouterView, RouterLogic>);
GPUNFV_REGISTER_KERNEL(ring_pairs_kernel<PassThroughView, PassThrough>);

}  // namespace gpunfv::gpuring
