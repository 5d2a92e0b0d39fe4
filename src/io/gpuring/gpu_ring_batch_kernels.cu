// The persistent batch-mode kernel of the GPU ring port (see gpu_ring_batch_runner.h).
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#include "io/gpuring/persistent_kernel.cuh"
#include "io/gpuring/gpu_ring_batch_runner.h"
#include "io/gpuring/ring_batch_loops.h"

namespace gpunfv::gpuring {

namespace {

constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls

// Blocks [0, rings) run the tx loops, [rings, 2 rings) the rx loops (one kernel, as
// gpu_ring_kernels.cu explains). Each block is one warp, a Team (team.h): lane 0 runs the
// protocol, the lanes write (rx) or read (tx) a batch's per-packet metadata a warp's worth at once.
__global__ void ring_batch_kernel(RingSetView v, RingBatchView bv, uint16_t port_id) {
  if (blockIdx.x < v.p.rings)
    tx_batch_loop(v, bv, blockIdx.x, WarpTeam{});
  else
    rx_batch_loop(v, bv, blockIdx.x - v.p.rings, port_id, WarpTeam{});
}

class CudaRingBatchRunner final : public GpuRingBatchRunner {
 public:
  CudaRingBatchRunner(RingSet& rings, RingBatches& batches, uint16_t port_id) : rings_(rings) {
    const unsigned blocks = 2 * rings.params().rings;
    load_and_check_residency(ring_batch_kernel, blocks, kThreads, "gpuring batches");
    stream_ = create_stream();
    ring_batch_kernel<<<blocks, kThreads, 0, stream_>>>(rings.view(), batches.view(), port_id);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      destroy_stream(stream_);
      GPUNFV_CUDA(e);
    }
    running_ = std::make_unique<PersistentKernelScope>();
  }
  ~CudaRingBatchRunner() override {
    if (!finished_) {
      rings_.request_stop();
      if (!wait(5.0)) {
        rings_.request_abort();
        wait(5.0);
      }
    }
    destroy_stream(stream_);
  }

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

std::unique_ptr<GpuRingBatchRunner> launch_gpu_ring_batch_runner(RingSet& rings, RingBatches& batches,
                                                                 uint16_t port_id) {
  if (rings.placement() != Placement::device)
    throw std::invalid_argument("GPU ring batch runner needs rings in device memory");
  return std::make_unique<CudaRingBatchRunner>(rings, batches, port_id);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(ring_batch_kernel);

}  // namespace gpunfv::gpuring
