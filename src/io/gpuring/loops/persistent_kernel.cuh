// What every persistent kernel of the GPU ring port needs from the host: load the kernel before
// launching it and check that all its blocks can be resident at once, wait for it to exit, and
// the runner that does both for every loop family (PersistentLoops).
//
// Why load now: since CUDA 12.2 the runtime loads kernels lazily, at their first launch, and
// loading may need a context synchronization (CUDA Programming Guide, "Lazy Loading"). A launch
// made while another persistent kernel spins then waits for that kernel for ever (seen on an
// H200 with CUDA 13.0: gpu_ring_kernels.cuh). Asking for the attributes loads the kernel.
// Why residency: every block spins until others make progress; one that cannot be scheduled
// would hang the rest.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "gpu/cuda_check.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#include "io/gpuring/loops/gpu_ring_runner.h"

namespace gpunfv::gpuring {

// Throws std::runtime_error naming `what` when `blocks` blocks of `threads` cannot all be
// resident; GpuError on CUDA failures.
template <typename Kernel>
void load_and_check_residency(Kernel kernel, unsigned blocks, unsigned threads, const char* what) {
  cudaFuncAttributes attr{};
  GPUNFV_CUDA(cudaFuncGetAttributes(&attr, kernel));
  int device = 0, sms = 0, per_sm = 0;
  GPUNFV_CUDA(cudaGetDevice(&device));
  GPUNFV_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUNFV_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(threads), 0));
  if (uint64_t(per_sm) * uint64_t(sms) < blocks)
    throw std::runtime_error(std::string(what) + ": " + std::to_string(blocks) +
                             " persistent blocks cannot all be resident (" + std::to_string(per_sm) +
                             " per SM x " + std::to_string(sms) + " SMs)");
}

// Whether everything on `stream` finished within timeout_s (polled, so a spinning kernel never
// blocks the host); GpuError when the stream failed.
inline bool wait_for_stream(cudaStream_t stream, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) GPUNFV_CUDA(e);
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// The GPU runner every loop family shares: `launch(stream)` loads and launches the family's
// kernel on a stream made for it (non-blocking: nothing on the legacy stream waits for the
// persistent kernel, and it waits for nothing; made before the launch, since nothing that may
// synchronize the context may happen while the kernel runs). `rings` (RingSet, ForwardRings)
// carries the stop word and must outlive the runner.
class PersistentLoops final : public GpuRingRunner {
 public:
  template <typename Rings, typename Launch>
  PersistentLoops(Rings& rings, Launch launch)
      : stop_([&rings] { rings.request_stop(); }), abort_([&rings] { rings.request_abort(); }) {
    stream_ = create_stream();
    try {
      launch(stream_);
      GPUNFV_CUDA(cudaGetLastError());
    } catch (...) {
      destroy_stream(stream_);
      throw;
    }
    running_ = std::make_unique<PersistentKernelScope>();
  }
  ~PersistentLoops() override {
    if (!finished_) {
      stop_();
      if (!wait(5.0)) {
        abort_();
        wait(5.0);
      }
    }
    destroy_stream(stream_);
  }

  void request_stop() override { stop_(); }

  bool wait(double timeout_s) override {
    if (!wait_for_stream(stream_, timeout_s)) return false;
    finished_ = true;
    running_.reset();
    return true;
  }

 private:
  std::function<void()> stop_, abort_;
  cudaStream_t stream_ = nullptr;
  bool finished_ = false;
  std::unique_ptr<PersistentKernelScope> running_;  // from the launch until the kernel exited
};

}  // namespace gpunfv::gpuring
