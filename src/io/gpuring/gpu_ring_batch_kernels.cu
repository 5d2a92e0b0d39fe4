// The persistent batch-mode kernel of the GPU ring port (see gpu_ring_batch_runner.h).
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "gpu/cuda_check.h"
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
    // Load the kernel now (lazy loading at launch may wait for a context synchronization that
    // a spinning kernel never allows) and check every block can be resident at once.
    cudaFuncAttributes attr{};
    GPUNFV_CUDA(cudaFuncGetAttributes(&attr, ring_batch_kernel));
    int device = 0, sms = 0, per_sm = 0;
    GPUNFV_CUDA(cudaGetDevice(&device));
    GPUNFV_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GPUNFV_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring_batch_kernel, int(kThreads), 0));
    if (uint64_t(per_sm) * uint64_t(sms) < blocks)
      throw std::runtime_error("gpuring: " + std::to_string(blocks) +
                               " persistent ring blocks cannot all be resident");
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
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e != cudaSuccess && e != cudaErrorNotReady) GPUNFV_CUDA(e);
      if (e == cudaSuccess) {
        finished_ = true;
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
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
