#include "io/forward/sampled_integrity.h"
#include "gpu/kernel_registry.h"
#include "io/forward/sampled_integrity_gpu.h"

namespace gpunfv {

namespace {

__global__ void sampled_integrity_kernel(const uint8_t* frames, uint32_t stride,
                                         const uint16_t* len, uint32_t n, uint32_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sampled_integrity(frames + size_t(i) * stride, len[i]);
}

}  // namespace

void sampled_integrity_gpu(const uint8_t* frames, uint32_t stride, const uint16_t* len,
                           uint32_t n, uint32_t* out, cudaStream_t stream) {
  if (n == 0) return;
  constexpr uint32_t kThreads = 256;
  sampled_integrity_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(frames, stride,
                                                                                   len, n, out);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(sampled_integrity_kernel);

}  // namespace gpunfv
