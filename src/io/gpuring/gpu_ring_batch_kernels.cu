// The persistent batch-mode kernel of the GPU ring port (see gpu_ring_batch_runner.h).
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "io/gpuring/persistent_kernel.cuh"
#include "io/gpuring/gpu_ring_batch_runner.h"
#include "io/gpuring/ring_batch_loops.h"

namespace gpunfv::gpuring {

namespace {

constexpr unsigned kThreads = 32;

__global__ void ring_batch_kernel(RingSetView v, RingBatchView bv, uint16_t port_id) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x < v.p.rings)
    tx_batch_loop(v, bv, blockIdx.x);
  else
    rx_batch_loop(v, bv, blockIdx.x - v.p.rings, port_id);
}

class CudaRingBatchRunner final : public GpuRingBatchRunner {
 public:
  CudaRingBatchRunner(RingSet& rings, RingBatches& batches, uint16_t port_id) : rings_(rings) {
    const unsigned blocks = 2 * rings.params().rings;
    load_and_check_residency(ring_batch_kernel, blocks, kThreads, "gpuring batches");
    GPUNFV_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ring_batch_kernel<<<blocks, kThreads, 0, stream_>>>(rings.view(), batches.view(), port_id);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      cudaStreamDestroy(stream_);
      GPUNFV_CUDA(e);
    }
  }
  ~CudaRingBatchRunner() override {
    if (!finished_) {
      rings_.request_stop();
      if (!wait(5.0)) {
        rings_.request_abort();
        wait(5.0);
      }
    }
    cudaStreamDestroy(stream_);
  }

  bool wait(double timeout_s) override {
    if (!wait_for_stream(stream_, timeout_s)) return false;
    finished_ = true;
    return true;
  }

 private:
  RingSet& rings_;
  cudaStream_t stream_ = nullptr;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<GpuRingBatchRunner> launch_gpu_ring_batch_runner(RingSet& rings, RingBatches& batches,
                                                                 uint16_t port_id) {
  if (rings.placement() != Placement::device)
    throw std::invalid_argument("GPU ring batch runner needs rings in device memory");
  return std::make_unique<CudaRingBatchRunner>(rings, batches, port_id);
}

}  // namespace gpunfv::gpuring
