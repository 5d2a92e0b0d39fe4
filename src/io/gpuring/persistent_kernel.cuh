// What every persistent kernel of the GPU ring port needs from the host: load the kernel before
// launching it and check that all its blocks can be resident at once, and wait for it to exit.
//
// Why load now: since CUDA 12.2 the runtime loads kernels lazily, at their first launch, and
// loading may need a context synchronization (CUDA Programming Guide, "Lazy Loading"). A launch
// made while another persistent kernel spins then waits for that kernel for ever (seen on an
// H200 with CUDA 13.0: gpu_ring_kernels.cu). Asking for the attributes loads the kernel.
// Why residency: every block spins until others make progress; one that cannot be scheduled
// would hang the rest.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "gpu/cuda_check.h"

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

}  // namespace gpunfv::gpuring
